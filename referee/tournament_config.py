"""The tournament configuration (``tournament.md``): reading, checking, resolving.

:func:`load_config` reads a YAML file and checks every key before any bot starts; each mistake is
a :class:`ConfigError` whose one-line message names the file (and line), the key and the problem:

>>> load_config(Path("tournaments/demo.yaml")).players  # doctest: +SKIP
3
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

import yaml

from referee.match import Entrant, Limits
from referee.process import BotCommandError, bwrap_available, resolve_command
from referee.ratings import RatingConfig
from referee.rules import DEFAULT_TARGET, Variant
from referee.schedule import FORMATS, SEATINGS, MatchSpec, schedule

NAME_RE = re.compile(r"[A-Za-z0-9_.-]+")
SANDBOXES = ("auto", "bwrap", "none")

KEYS = ("name", "entrants", "variant", "players", "target", "format", "rounds", "seatings", "seed",
        "concurrency", "limits", "sandbox", "output", "rating")
ENTRANT_KEYS = ("name", "command", "workdir")
LIMITS_KEYS = ("startup_ms", "move_ms", "bank_ms", "memory_mb", "pids", "cpus", "tmp_mb",
               "file_mb")
RATING_KEYS = ("mu", "sigma", "beta", "tau", "draw_probability")


class ConfigError(ValueError):
    """A configuration or output folder that cannot be used; the message is one line."""


@dataclass(frozen=True)
class EntrantConfig:
    """One entrant as configured: its command as written, split, and its folder."""

    name: str
    command: str | tuple[str, ...]
    argv: tuple[str, ...]
    workdir: Path

    def entrant(self) -> Entrant:
        """The :class:`referee.match.Entrant` that plays its matches."""
        return Entrant(self.name, self.argv, self.workdir)


@dataclass(frozen=True)
class Config:
    """A checked tournament configuration, defaults filled in, paths absolute."""

    path: Path
    name: str
    entrants: tuple[EntrantConfig, ...]
    output: Path
    variant: Variant = Variant.CLASSIC
    players: int = 3
    target: int = DEFAULT_TARGET
    format: str = "round-robin"
    rounds: int = 1
    seatings: str = "all"
    seed: int | str = 1
    concurrency: int = 1
    limits: Limits = field(default_factory=Limits)
    sandbox: str = "auto"
    rating: RatingConfig = field(default_factory=RatingConfig)

    def schedule(self, *, secret: bytes) -> list[MatchSpec]:
        """Every match of the tournament, in rating order, its deals keyed by ``secret``."""
        return schedule(len(self.entrants), players=self.players, rounds=self.rounds,
                        seatings=self.seatings, seed=self.seed, secret=secret)

    def identity(self) -> dict[str, Any]:
        """What decides the matches and their results: two runs resume each other only if
        this is equal (``output``, ``concurrency`` and ``rating`` may change)."""
        return {
            "name": self.name,
            "entrants": [{"name": e.name, "argv": list(e.argv), "workdir": str(e.workdir)}
                         for e in self.entrants],
            "variant": self.variant.value, "players": self.players, "target": self.target,
            "format": self.format, "rounds": self.rounds, "seatings": self.seatings,
            "seed": self.seed, "sandbox": self.sandbox,
            "limits": {k: getattr(self.limits, k) for k in LIMITS_KEYS},
        }

    def resolved(self) -> dict[str, Any]:
        """The configuration as ``tournament.yaml`` holds it: every key, absolute paths."""
        return {
            "name": self.name,
            "entrants": [{"name": e.name,
                          "command": e.command if isinstance(e.command, str) else list(e.command),
                          "workdir": str(e.workdir)} for e in self.entrants],
            "variant": self.variant.value, "players": self.players, "target": self.target,
            "format": self.format, "rounds": self.rounds, "seatings": self.seatings,
            "seed": self.seed, "concurrency": self.concurrency,
            "limits": {k: getattr(self.limits, k) for k in LIMITS_KEYS},
            "sandbox": self.sandbox, "output": str(self.output),
            "rating": {k: getattr(self.rating, k) for k in RATING_KEYS},
        }


def load_config(
    path: Path | str, *, output: Path | str | None = None, concurrency: int | None = None
) -> Config:
    """Reads and checks a tournament configuration.

    Paths in the file are relative to its folder; ``output`` (the ``--output`` option) and the
    default ``results/<name>`` are relative to the current directory.

    :raises ConfigError: naming the file, the key and what is wrong.
    """
    return _Loader(Path(path)).load(output, concurrency)


def _type_name(value: object) -> str:
    if value is None:
        return "nothing"
    names = {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
             list: "a list", dict: "a mapping"}
    return names.get(type(value), type(value).__name__)


class _Loader:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.folder = path.absolute().parent
        self.lines: dict[str, int] = {}

    def fail(self, key: str, what: str) -> NoReturn:
        line = self.lines.get(key)
        where = f"{self.path}:{line}" if line else str(self.path)
        raise ConfigError(f"{where}: {key}: {what}" if key else f"{where}: {what}")

    def load(self, output: Path | str | None, concurrency: int | None) -> Config:
        data = self._parse()
        self.keys(data, "", KEYS)
        name = self.text(data, "name", self.path.stem)
        if not NAME_RE.fullmatch(name):
            self.fail("name", f"{name!r} may only hold letters, digits, '-', '_' and '.'")
        players = self.integer(data, "players", 3, 2, 4)
        entrants = self.entrants(data, players)
        variant = self.choice(data, "variant", "classic", [v.value for v in Variant])
        fmt = self.choice(data, "format", "round-robin", FORMATS)
        seatings = self.choice(data, "seatings", "all", SEATINGS)
        sandbox = self.choice(data, "sandbox", "auto", SANDBOXES)
        if sandbox == "bwrap" and not bwrap_available():
            self.fail("sandbox", "'bwrap' asked for, but the sandbox does not work here (see "
                                 "ct-referee sandbox; or use none)")
        seed = data.get("seed", 1)
        if isinstance(seed, bool) or not isinstance(seed, int | str):
            self.fail("seed", f"expected an integer or a string, got {_type_name(seed)}")
        limits = self.section(data, "limits", LIMITS_KEYS)
        rating = self.section(data, "rating", RATING_KEYS)
        default = Limits()
        out = self.text(data, "output", "")
        if output is not None:
            out_path = Path(output).absolute()
        elif out:
            out_path = (self.folder / out).absolute()
        else:
            out_path = (Path("results") / name).absolute()
        if concurrency is not None and concurrency < 1:
            self.fail("concurrency", f"must be at least 1, not {concurrency}")
        return Config(
            path=self.path.absolute(), name=name, entrants=entrants, output=out_path,
            variant=Variant(variant), players=players,
            target=self.integer(data, "target", DEFAULT_TARGET, 1),
            format=fmt, rounds=self.integer(data, "rounds", 1, 1), seatings=seatings,
            seed=seed,
            concurrency=concurrency or self.integer(data, "concurrency", 1, 1),
            limits=Limits(
                startup_ms=self.integer(limits, "limits.startup_ms", default.startup_ms, 1),
                move_ms=self.integer(limits, "limits.move_ms", default.move_ms, 1),
                bank_ms=self.integer(limits, "limits.bank_ms", default.bank_ms, 0),
                memory_mb=self.integer(limits, "limits.memory_mb", default.memory_mb, 0),
                pids=self.integer(limits, "limits.pids", default.pids, 0),
                cpus=self.cpus(limits, default.cpus),
                tmp_mb=self.integer(limits, "limits.tmp_mb", default.tmp_mb, 0),
                file_mb=self.integer(limits, "limits.file_mb", default.file_mb, 0)),
            sandbox=sandbox, rating=self.rating(rating),
        )

    def _parse(self) -> dict[str, Any]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            raise ConfigError(f"{self.path}: cannot read: {getattr(err, 'strerror', err)}") \
                from None
        try:
            node = yaml.compose(text, Loader=yaml.SafeLoader)
            data = yaml.safe_load(text)
        except yaml.YAMLError as err:
            mark = getattr(err, "problem_mark", None)
            where = f"{self.path}:{mark.line + 1}" if mark else str(self.path)
            problem = getattr(err, "problem", None) or str(err).splitlines()[0]
            raise ConfigError(f"{where}: YAML syntax error: {problem}") from None
        if data is None:
            raise ConfigError(f"{self.path}: the file is empty (expected name and entrants)")
        if not isinstance(data, dict):
            raise ConfigError(f"{self.path}: expected a mapping of keys (name, entrants, ...), "
                              f"got {_type_name(data)}")
        self._positions(node, "")
        return data

    def _positions(self, node: yaml.Node | None, prefix: str) -> None:
        """Records the line of every key and list item; refuses duplicate keys."""
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                key = f"{prefix}.{key_node.value}" if prefix else str(key_node.value)
                if key in self.lines:
                    self.lines[key] = key_node.start_mark.line + 1
                    self.fail(key, "duplicate key")
                self.lines[key] = key_node.start_mark.line + 1
                self._positions(value_node, key)
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value, 1):
                self.lines[f"{prefix}[{i}]"] = item.start_mark.line + 1
                self._positions(item, f"{prefix}[{i}]")

    def keys(self, data: dict[str, Any], prefix: str, allowed: Sequence[str]) -> None:
        for key in data:
            if key not in allowed:
                full = f"{prefix}{key}"
                close = difflib.get_close_matches(str(key), allowed, n=1)
                hint = f" (did you mean {prefix + close[0]!r}?)" if close else \
                    f" (known keys: {', '.join(allowed)})"
                self.fail(full, f"unknown key{hint}")

    def section(self, data: dict[str, Any], key: str, allowed: Sequence[str]) -> dict[str, Any]:
        value = data.get(key, {})
        if not isinstance(value, dict):
            self.fail(key, f"expected a mapping of {', '.join(allowed)}, got {_type_name(value)}")
        self.keys(value, f"{key}.", allowed)
        return {f"{key}.{k}": v for k, v in value.items()}

    def text(self, data: dict[str, Any], key: str, default: str) -> str:
        value = data.get(key, default)
        if not isinstance(value, str):
            self.fail(key, f"expected a string, got {_type_name(value)}")
        return value

    def integer(self, data: dict[str, Any], key: str, default: int, lo: int,
                hi: int | None = None) -> int:
        value = data.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(key, f"expected an integer, got {_type_name(value)} {value!r}")
        if value < lo or (hi is not None and value > hi):
            span = f"from {lo} to {hi}" if hi is not None else f"at least {lo}"
            self.fail(key, f"must be {span}, not {value}")
        return value

    def number(self, data: dict[str, Any], key: str, default: float) -> float:
        value = data.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.fail(key, f"expected a number, got {_type_name(value)} {value!r}")
        return float(value)

    def cpus(self, data: dict[str, Any], default: float) -> float:
        value = self.number(data, "limits.cpus", default)
        if value < 0:
            self.fail("limits.cpus", f"must be 0 (no limit) or more, not {value:g}")
        return value

    def choice(self, data: dict[str, Any], key: str, default: str,
               options: Sequence[str]) -> str:
        value = data.get(key, default)
        if value not in options:
            close = difflib.get_close_matches(str(value), options, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            self.fail(key, f"unknown {key} {value!r} ({hint}use {' or '.join(options)})")
        return str(value)

    def rating(self, data: dict[str, Any]) -> RatingConfig:
        d = RatingConfig()
        mu = self.number(data, "rating.mu", d.mu)
        values = {k: self.number(data, f"rating.{k}", getattr(d, k))
                  for k in ("sigma", "beta", "tau", "draw_probability")}
        for k in ("sigma", "beta"):
            if values[k] <= 0:
                self.fail(f"rating.{k}", f"must be above 0, not {values[k]}")
        if values["tau"] < 0:
            self.fail("rating.tau", f"must be 0 or more, not {values['tau']}")
        if not 0 < values["draw_probability"] < 1:
            self.fail("rating.draw_probability",
                      f"must be between 0 and 1, both excluded, not {values['draw_probability']}")
        return RatingConfig(mu=mu, **values)

    def entrants(self, data: dict[str, Any], players: int) -> tuple[EntrantConfig, ...]:
        items = data.get("entrants")
        if items is None:
            self.fail("entrants", "missing: list the bots, each with a name and a command")
        if not isinstance(items, list):
            self.fail("entrants", f"expected a list of entrants, got {_type_name(items)}")
        seen: dict[str, str] = {}
        result = []
        for i, item in enumerate(items, 1):
            key = f"entrants[{i}]"
            if not isinstance(item, dict):
                self.fail(key, f"expected a mapping with name and command, got "
                               f"{_type_name(item)}")
            self.keys(item, f"{key}.", ENTRANT_KEYS)
            item = {f"{key}.{k}": v for k, v in item.items()}
            for need in ("name", "command"):
                if f"{key}.{need}" not in item:
                    self.fail(key, f"missing {need}")
            name = item[f"{key}.name"]
            if not isinstance(name, str | int) or isinstance(name, bool):
                self.fail(f"{key}.name", f"expected a string, got {_type_name(name)}")
            name = str(name)
            if not NAME_RE.fullmatch(name):
                self.fail(f"{key}.name",
                          f"{name!r} may only hold letters, digits, '-', '_' and '.'")
            if name in seen:
                self.fail(f"{key}.name", f"{name!r} is already the name of {seen[name]}")
            seen[name] = key
            workdir = self.folder
            if f"{key}.workdir" in item:
                workdir = (self.folder / self.text(item, f"{key}.workdir", "")).absolute()
                if not workdir.is_dir():
                    self.fail(f"{key}.workdir", f"{str(workdir)!r} is not a folder")
            command, argv = self.command(item[f"{key}.command"], f"{key}.command", workdir)
            result.append(EntrantConfig(name, command, argv, workdir))
        if len(result) < players:
            self.fail("entrants", f"{len(result)} entrant(s) cannot fill a table of "
                                  f"{players} players")
        return tuple(result)

    def command(self, value: object, key: str,
                workdir: Path) -> tuple[str | tuple[str, ...], tuple[str, ...]]:
        if isinstance(value, list) and value and all(
                isinstance(a, str | int | float) and not isinstance(a, bool) for a in value):
            command: str | tuple[str, ...] = tuple(str(a) for a in value)
        elif isinstance(value, str) and value.strip():
            command = value
        else:
            self.fail(key, f"expected a command line or a list of arguments, got "
                           f"{_type_name(value)} {value!r}")
        try:
            argv = tuple(resolve_command(command, workdir))
        except BotCommandError as err:
            self.fail(key, str(err))
        return command, argv

