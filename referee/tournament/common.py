"""What a tournament's and a league's configurations share: the keys both read
(:class:`Common`: the game, the seats, the limits, the sandbox, the ratings, the shared data,
the snapshots, the bots' uids, the cap), read and checked by one :class:`Loader`, so a setting
made for tournaments reaches leagues by construction (``tournament.md``, ``league.md``). Every
mistake is one line naming the file (and line), the key and the problem: a
:class:`ConfigError` holds them all, in file order.
"""

from __future__ import annotations

import difflib
import os
import re
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import yaml

from referee.bots.command_hints import shell_syntax_warning
from referee.bots.limits import Limits, SandboxMode
from referee.bots.process import SCRIPT_SUFFIXES, BotCommandError, resolve_command
from referee.game.rules import DEFAULT_TARGET, Variant
from referee.match.play import Entrant
from referee.tournament.formats import set_size
from referee.tournament.ratings import RatingConfig
from referee.tournament.schedule import SEATINGS

__all__ = ["BOT_UIDS", "COMMON_KEYS", "ENTRANT_KEYS", "LIMITS_KEYS", "NAME_RE", "RATING_KEYS",
           "Common", "ConfigError", "EntrantConfig", "Loader", "Mistake", "read_common",
           "type_name"]

NAME_RE = re.compile(r"[A-Za-z0-9_.-]+")
"""A name (of a tournament, a league, an entrant, an author): what may be a file's name."""
BOT_UIDS = ("own", "shared")
"""``bot_uids``: each bot a uid of its own (a root referee), or, accepted on purpose, the
organiser's one uid for every bot (a referee that is not root)."""
ENTRANT_KEYS = ("name", "command", "workdir")
LIMITS_KEYS = ("startup_ms", "move_ms", "bank_ms", "memory_mb", "pids", "cpus", "tmp_mb",
               "file_mb")
RATING_KEYS = ("mu", "sigma", "beta", "tau", "draw_probability", "per")
COMMON_KEYS = ("name", "entrants", "variant", "players", "target", "seatings", "concurrency",
               "affinity", "limits", "sandbox", "output", "rating", "shared", "snapshot_mb",
               "bot_uids", "max_matches")
"""The keys :meth:`Loader.common` reads, the same way for a tournament and a league."""


class ConfigError(ValueError):
    """A configuration or output folder that cannot be used: one line per mistake."""

    def __init__(self, *lines: str) -> None:
        super().__init__("\n".join(lines))
        self.lines = lines


class Mistake(Exception):
    """One mistake was noted; the check that found it gives up on its key
    (:meth:`Loader.attempt` goes on with a default)."""


_T = TypeVar("_T")


@dataclass(frozen=True)
class EntrantConfig:
    """One entrant as configured: its command as written, split, and its folder."""

    name: str
    command: str | tuple[str, ...]
    argv: tuple[str, ...]
    workdir: Path
    workdir_given: bool = True
    """Whether ``workdir`` was written (else it is the configuration's folder)."""

    def entrant(self) -> Entrant:
        """The :class:`referee.match.play.Entrant` that plays its matches."""
        return Entrant(self.name, self.argv, self.workdir)

    def absolute_command(self) -> str | list[str]:
        """The command with absolute paths: its program when it names a file (has a ``/``) and
        its script arguments (:data:`referee.bots.bot.SCRIPT_SUFFIXES`), as they were found in the
        ``workdir``; a string stays a string (quoted like a shell would need), a list a list."""
        argv = list(self.argv)
        if "/" in argv[0]:
            argv[0] = os.path.normpath(self.workdir / argv[0])
        for i, arg in enumerate(argv[1:], 1):
            if arg.endswith(SCRIPT_SUFFIXES) and not arg.startswith("-"):
                argv[i] = os.path.normpath(self.workdir / arg)
        if not isinstance(self.command, str):
            return argv
        return self.command if argv == list(self.argv) else shlex.join(argv)


@dataclass(frozen=True, kw_only=True)
class Common:
    """What a tournament's configuration and a league's share (:data:`COMMON_KEYS`), checked,
    defaults filled in, paths absolute: :class:`referee.tournament.config.Config` and
    :class:`referee.league.config.LeagueConfig` are this and their own keys."""

    path: Path
    name: str
    output: Path
    entrants: tuple[EntrantConfig, ...] = ()
    variant: Variant = Variant.CLASSIC
    players: int = 2
    target: int = DEFAULT_TARGET
    seatings: str = "all"
    concurrency: int = 1
    affinity: bool | None = None
    """Each match's referee and bots on one CPU (the k-th worker on the k-th CPU): cheaper
    matches; ``None`` (``auto``): where the matches take every CPU (concurrency at least the
    CPUs this process may use)."""
    limits: Limits = field(default_factory=Limits)
    sandbox: SandboxMode = SandboxMode.AUTO
    """As configured: read, not probed (the run works out what it means here)."""
    rating: RatingConfig = field(default_factory=RatingConfig)
    shared: tuple[Path, ...] = ()
    """Folders or files every bot may read (read-only), named in commands or not."""
    snapshot_mb: int = 512
    """The largest entrant folder snapshotted, in MiB (0: no cap)."""
    bot_uids: str = "own"
    """``own`` or ``shared`` (see :data:`BOT_UIDS`)."""
    max_matches: int | None = None
    """Matches after which play stops (``None``: no such cap)."""
    warnings: tuple[str, ...] = ()
    """Things that are allowed but probably not meant (shell syntax in a command), one line
    each, located like a mistake."""


def type_name(value: object) -> str:
    if value is None:
        return "nothing"
    names = {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
             list: "a list", dict: "a mapping"}
    return names.get(type(value), type(value).__name__)


_FAST_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's safe loader where PyYAML has it (about 10x faster: a file of 10,000 entrants)."""


def _compose_and_load(text: str) -> tuple[yaml.Node | None, Any]:
    """The file's node tree (for line numbers) and its data, parsed once."""
    loader = _FAST_LOADER(text)
    try:
        node = loader.get_single_node()
        return node, None if node is None else loader.construct_document(node)
    finally:
        loader.dispose()


class Loader:
    """Reads one configuration file: each key checked, each mistake noted (:meth:`note`) and
    reported together at the end, in file order; :meth:`common` reads the keys every kind of
    run shares."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.folder = path.absolute().parent
        self.lines: dict[str, int] = {}
        self.mistakes: list[tuple[float, int, str]] = []
        self.warnings: list[str] = []

    def note(self, key: str, what: str) -> None:
        """Notes a mistake (reported with the others at the end, in file order)."""
        line = self.lines.get(key)
        where = f"{self.path}:{line}" if line else str(self.path)
        text = f"{where}: {key}: {what}" if key else f"{where}: {what}"
        if all(text != m[2] for m in self.mistakes):
            self.mistakes.append((line or float("inf"), len(self.mistakes), text))

    def fail(self, key: str, what: str) -> NoReturn:
        """Notes a mistake and gives up on the key being checked (see :meth:`attempt`)."""
        self.note(key, what)
        raise Mistake

    def attempt(self, check: Callable[[], _T], default: _T) -> _T:
        """``check()``, or ``default`` if it found a mistake (noted): the checks go on."""
        try:
            return check()
        except Mistake:
            return default

    def common(self, data: dict[str, Any], output: Path | str | None, concurrency: int | None,
               *, players: int, snapshot_mb: int, snapshot_min: int,
               rating_keys: Sequence[str] = RATING_KEYS) -> dict[str, Any]:
        """The :class:`Common` keys of ``data`` (see :func:`read_common`)."""
        return read_common(self, data, output, concurrency, players=players,
                           snapshot_mb=snapshot_mb, snapshot_min=snapshot_min,
                           rating_keys=rating_keys)

    def raise_mistakes(self) -> None:
        """Raises every mistake noted, in file order (nothing if there is none).

        :raises ConfigError: one line a mistake."""
        if self.mistakes:
            raise ConfigError(*(text for _, _, text in sorted(self.mistakes)))

    def output(self, data: dict[str, Any], output: Path | str | None, name: str) -> Path:
        """The output folder: the command line's, else the configuration's (relative to its
        folder), else ``results/<name>``."""
        out = self.attempt(lambda: self.text(data, "output", ""), "")
        if output is not None:
            return Path(output).absolute()
        if out:
            return (self.folder / out).absolute()
        return (Path("results") / name).absolute()

    def limits(self, section: dict[str, Any]) -> Limits:
        """The ``limits`` section, each key checked, defaults filled in."""
        default = Limits()

        def integer(key: str, value: int, lo: int) -> int:
            return self.attempt(lambda: self.integer(section, f"limits.{key}", value, lo), value)

        return Limits(
            startup_ms=integer("startup_ms", default.startup_ms, 1),
            move_ms=integer("move_ms", default.move_ms, 1),
            bank_ms=integer("bank_ms", default.bank_ms, 0),
            memory_mb=integer("memory_mb", default.memory_mb, 0),
            pids=integer("pids", default.pids, 0),
            cpus=self.attempt(lambda: self.cpus(section, default.cpus), default.cpus),
            tmp_mb=integer("tmp_mb", default.tmp_mb, 0),
            file_mb=integer("file_mb", default.file_mb, 0))

    def parse(self, overrides: dict[str, Any] | None = None) -> dict[str, Any]:
        """The file's keys (``overrides``, the command line's, in place of the file's: they
        have no line).

        :raises ConfigError: a file that cannot be read, is not YAML, or is not a mapping."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            raise ConfigError(f"{self.path}: cannot read: {getattr(err, 'strerror', err)}") \
                from None
        try:
            node, data = _compose_and_load(text)
        except yaml.YAMLError as err:
            mark = getattr(err, "problem_mark", None)
            where = f"{self.path}:{mark.line + 1}" if mark else str(self.path)
            problem = getattr(err, "problem", None) or str(err).splitlines()[0]
            raise ConfigError(f"{where}: YAML syntax error: {problem}") from None
        if data is None:
            raise ConfigError(f"{self.path}: the file is empty (expected name and entrants)")
        if not isinstance(data, dict):
            raise ConfigError(f"{self.path}: expected a mapping of keys (name, entrants, ...), "
                              f"got {type_name(data)}")
        self._positions(node, "")
        for key, value in (overrides or {}).items():
            data[key] = value  # from the command line: no line in the file
            inside = (f"{key}.", f"{key}[")
            for where in [k for k in self.lines if k == key or k.startswith(inside)]:
                del self.lines[where]
        return data

    def _positions(self, node: yaml.Node | None, prefix: str) -> None:
        """Records the line of every key and list item; refuses duplicate keys."""
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                key = f"{prefix}.{key_node.value}" if prefix else str(key_node.value)
                if key in self.lines:
                    first = self.lines[key]
                    self.lines[key] = key_node.start_mark.line + 1
                    self.note(key, "duplicate key")
                    self.lines[key] = first
                    continue
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
                self.note(full, f"unknown key{hint}")

    def section(self, data: dict[str, Any], key: str, allowed: Sequence[str]) -> dict[str, Any]:
        value = data.get(key, {})
        if not isinstance(value, dict):
            self.fail(key, f"expected a mapping of {', '.join(allowed)}, got {type_name(value)}")
        self.keys(value, f"{key}.", allowed)
        return {f"{key}.{k}": v for k, v in value.items()}

    def text(self, data: dict[str, Any], key: str, default: str) -> str:
        value = data.get(key, default)
        if not isinstance(value, str):
            self.fail(key, f"expected a string, got {type_name(value)}")
        return value

    def integer(self, data: dict[str, Any], key: str, default: int, lo: int,
                hi: int | None = None) -> int:
        value = data.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(key, f"expected an integer, got {type_name(value)} {value!r}")
        if value < lo or (hi is not None and value > hi):
            span = f"from {lo} to {hi}" if hi is not None else f"at least {lo}"
            self.fail(key, f"must be {span}, not {value}")
        return value

    def affinity(self, data: dict[str, Any]) -> bool | None:
        value = data.get("affinity", "auto")
        if value == "auto":
            return None
        if not isinstance(value, bool):
            self.fail("affinity", f"expected auto, true or false, got {type_name(value)} "
                                  f"{value!r}")
        return value

    def number(self, data: dict[str, Any], key: str, default: float) -> float:
        value = data.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.fail(key, f"expected a number, got {type_name(value)} {value!r}")
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

    def shared(self, data: dict[str, Any]) -> tuple[Path, ...]:
        value = data.get("shared", [])
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            self.fail("shared", f"expected a list of paths (folders or files every bot may "
                                f"read), got {type_name(value)}")
        result = []
        for i, item in enumerate(value, 1):
            path = (self.folder / os.path.expanduser(item)).absolute()
            if not path.exists():
                self.fail(f"shared[{i}]", f"{str(path)!r} does not exist")
            result.append(path)
        return tuple(result)

    def rating(self, data: dict[str, Any]) -> RatingConfig:
        d = RatingConfig()

        def number(key: str) -> float:
            return float(self.attempt(
                lambda: self.number(data, f"rating.{key}", getattr(d, key)), getattr(d, key)))

        mu = number("mu")
        values = {k: number(k) for k in ("sigma", "beta", "tau", "draw_probability")}
        for k in ("sigma", "beta"):
            if values[k] <= 0:
                self.note(f"rating.{k}", f"must be above 0, not {values[k]}")
        if values["tau"] < 0:
            self.note("rating.tau", f"must be 0 or more, not {values['tau']}")
        if not 0 < values["draw_probability"] < 1:
            self.note("rating.draw_probability",
                      f"must be between 0 and 1, both excluded, not {values['draw_probability']}")
        per = data.get("rating.per", d.per)
        if per not in ("set", "match"):
            self.note("rating.per", f"must be set or match, not {str(per)[:40]!r}")
            per = d.per
        return RatingConfig(mu=mu, **values, per=per)

    def entrant(self, i: int, item: object, seen: dict[str, str]) -> EntrantConfig:
        """One entrant, every key checked."""
        key = f"entrants[{i}]"
        if not isinstance(item, dict):
            self.fail(key, f"expected a mapping with name and command, got "
                           f"{type_name(item)}")
        self.keys(item, f"{key}.", ENTRANT_KEYS)
        item = {f"{key}.{k}": v for k, v in item.items()}
        for need in ("name", "command"):
            if f"{key}.{need}" not in item:
                self.fail(key, f"missing {need}")
        name = item[f"{key}.name"]
        if not isinstance(name, str | int) or isinstance(name, bool):
            self.note(f"{key}.name", f"expected a string, got {type_name(name)}")
        name = str(name)
        if not NAME_RE.fullmatch(name):
            self.note(f"{key}.name", f"{name!r} may only hold letters, digits, '-', '_' and '.'")
        if name in seen:
            self.note(f"{key}.name", f"{name!r} is already the name of {seen[name]}")
        seen.setdefault(name, key)
        workdir = self.folder
        if f"{key}.workdir" in item:
            workdir = (self.folder / self.text(item, f"{key}.workdir", "")).absolute()
            if not workdir.is_dir():
                self.fail(f"{key}.workdir", f"{str(workdir)!r} is not a folder")
        command, argv = self.command(item[f"{key}.command"], f"{key}.command", workdir)
        return EntrantConfig(name, command, argv, workdir, f"{key}.workdir" in item)

    def command(self, value: object, key: str,
                workdir: Path) -> tuple[str | tuple[str, ...], tuple[str, ...]]:
        if isinstance(value, list) and value and all(
                isinstance(a, str | int | float) and not isinstance(a, bool) for a in value):
            command: str | tuple[str, ...] = tuple(str(a) for a in value)
        elif isinstance(value, str) and value.strip():
            command = value
        else:
            self.fail(key, f"expected a command line or a list of arguments, got "
                           f"{type_name(value)} {value!r}")
        try:
            argv = tuple(resolve_command(command, workdir))
        except BotCommandError as err:
            self.fail(key, str(err))
        hint = shell_syntax_warning(command)
        if hint is not None:
            line = self.lines.get(key)
            self.warnings.append(f"{self.path}:{line}: {key}: {hint}" if line else
                                 f"{self.path}: {key}: {hint}")
        return command, argv


def read_common(loader: Loader, data: dict[str, Any], output: Path | str | None,
                concurrency: int | None, *, players: int, snapshot_mb: int, snapshot_min: int,
                rating_keys: Sequence[str] = RATING_KEYS) -> dict[str, Any]:
    """The :class:`Common` keys of ``data`` (but ``entrants``, which each kind reads as it
    needs them), each checked as every kind of run checks it: ``players`` and
    ``snapshot_mb``, the defaults; ``snapshot_min``, the least ``snapshot_mb``;
    ``rating_keys``, the rating's keys read."""
    name = loader.attempt(lambda: loader.text(data, "name", loader.path.stem), loader.path.stem)
    if not NAME_RE.fullmatch(name):
        loader.note("name", f"{name!r} may only hold letters, digits, '-', '_' and '.'")
    seats = loader.attempt(lambda: loader.integer(data, "players", players, 2, 4), 2)
    seatings = loader.attempt(lambda: loader.choice(data, "seatings", "all", SEATINGS), "all")
    variant = loader.attempt(
        lambda: loader.choice(data, "variant", "classic", [v.value for v in Variant]),
        "classic")
    sandbox = SandboxMode(loader.attempt(
        lambda: loader.choice(data, "sandbox", "auto", [m.value for m in SandboxMode]), "auto"))
    bot_uids = loader.attempt(lambda: loader.choice(data, "bot_uids", "own", BOT_UIDS), "own")
    limits: dict[str, Any] = loader.attempt(
        lambda: loader.section(data, "limits", LIMITS_KEYS), {})
    rating: dict[str, Any] = loader.attempt(
        lambda: loader.section(data, "rating", rating_keys), {})
    if concurrency is not None and concurrency < 1:
        loader.note("concurrency", f"must be at least 1, not {concurrency}")

    def integer(key: str, default: int, lo: int) -> int:
        return loader.attempt(lambda: loader.integer(data, key, default, lo), default)

    max_matches = None
    if "max_matches" in data:
        max_matches = loader.attempt(lambda: loader.integer(data, "max_matches", 0, 1), None)
        per_set = set_size(seats, seatings)
        if max_matches is not None and max_matches < per_set:
            loader.note("max_matches", f"{max_matches} is too small for one duplicate set "
                                     f"({per_set} matches: {seats} players, seatings "
                                     f"{seatings})")
    shared: tuple[Path, ...] = loader.attempt(lambda: loader.shared(data), ())
    return {
        "path": loader.path.absolute(), "name": name, "output": loader.output(data, output, name),
        "variant": Variant(variant), "players": seats,
        "target": integer("target", DEFAULT_TARGET, 1), "seatings": seatings,
        "concurrency": concurrency or integer("concurrency", 1, 1),
        "affinity": loader.attempt(lambda: loader.affinity(data), None),
        "limits": loader.limits(limits), "sandbox": sandbox,
        "rating": loader.attempt(lambda: loader.rating(rating), RatingConfig()),
        "shared": shared,
        "snapshot_mb": integer("snapshot_mb", snapshot_mb, snapshot_min),
        "bot_uids": bot_uids, "max_matches": max_matches}
