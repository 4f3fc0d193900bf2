"""The tournament configuration (``tournament.md``): reading, checking, resolving.

:func:`load_config` reads a YAML file and checks every key before any bot starts; the mistakes
are one :class:`ConfigError` with a line for each, in file order, naming the file (and line),
the key and the problem:

>>> load_config(Path("tournaments/demo.yaml")).players  # doctest: +SKIP
3
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
from referee.match.job import DealSecret, MatchSpec
from referee.match.play import Entrant
from referee.tournament.admission import Preflight
from referee.tournament.course import TournamentPlan, TournamentProgress
from referee.tournament.formats import (
    FORMATS,
    Format,
    RoundRobin,
    State,
    capped_total,
    format_named,
    plan_round,
    set_size,
)
from referee.tournament.ratings import RatingConfig
from referee.tournament.schedule import SEATINGS
from referee.tournament.stopping import Stop

NAME_RE = re.compile(r"[A-Za-z0-9_.-]+")

KEYS = ("name", "entrants", "variant", "players", "target", "format", "candidates", "rounds",
        "max_matches", "stop", "seatings", "seed", "concurrency", "affinity", "limits", "sandbox",
        "output", "rating", "preflight", "max_faults", "shared", "snapshot_mb", "bot_uids")
BOT_UIDS = ("own", "shared")
"""``bot_uids``: each bot a uid of its own (a root referee), or, accepted on purpose, the
organiser's one uid for every bot (a referee that is not root)."""
ENTRANT_KEYS = ("name", "command", "workdir")
LIMITS_KEYS = ("startup_ms", "move_ms", "bank_ms", "memory_mb", "pids", "cpus", "tmp_mb",
               "file_mb")
RATING_KEYS = ("mu", "sigma", "beta", "tau", "draw_probability", "per")
STOP_KEYS = ("confidence", "margin")


class ConfigError(ValueError):
    """A configuration or output folder that cannot be used: one line per mistake."""

    def __init__(self, *lines: str) -> None:
        super().__init__("\n".join(lines))
        self.lines = lines


class _Mistake(Exception):
    """One mistake was noted; the check that found it gives up on its key."""


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
    format: type[Format] = RoundRobin
    """The format's class (:data:`~referee.tournament.formats.FORMATS`), named once at load."""
    rounds: int | None = 1
    """``None``: as many as ``max_matches`` allows."""
    seatings: str = "all"
    seed: int | str = 1
    concurrency: int = 1
    affinity: bool | None = None
    """Each match's referee and bots on one CPU (the k-th worker on the k-th CPU): cheaper
    matches; ``None`` (``auto``): where the matches take every CPU (concurrency at least the
    CPUs this process may use)."""
    limits: Limits = field(default_factory=Limits)
    sandbox: SandboxMode = SandboxMode.AUTO
    """As configured: read, not probed (the run works out what it means here)."""
    rating: RatingConfig = field(default_factory=RatingConfig)
    candidates: tuple[str, ...] = ()
    """The gauntlet's candidates."""
    max_matches: int | None = None
    stop: Stop | None = None
    preflight: Preflight = Preflight.LEAVE_OUT
    """Each entrant started once before the matches: one that does not start is left out
    (``leave-out``), plays on and loses by fault (``keep``); ``off``: no pre-flight."""
    max_faults: int = 0
    """Faults after which an entrant is disqualified (0: never)."""
    shared: tuple[Path, ...] = ()
    """Folders or files every bot may read (read-only), named in commands or not."""
    snapshot_mb: int = 512
    """The largest entrant folder snapshotted, in MiB (0: no cap)."""
    bot_uids: str = "own"
    """``own`` or ``shared`` (see :data:`BOT_UIDS`)."""
    warnings: tuple[str, ...] = ()
    """Things that are allowed but probably not meant (shell syntax in a command), one line
    each, located like a mistake."""

    def tournament_format(self) -> Format:
        """The format that plans the rounds, built for these entrants."""
        names = [e.name for e in self.entrants]
        return self.format.build(len(names), self.players, seed=self.seed,
                                 candidates=[names.index(c) for c in self.candidates])

    def plan(self, *, secret: DealSecret | bytes) -> TournamentPlan:
        """What every round shares: seats, seatings, seed, caps and ``stop``; ``secret`` keys
        the deals."""
        return TournamentPlan(players=self.players, seatings=self.seatings, seed=self.seed,
                    rounds=self.rounds, max_matches=self.max_matches, stop=self.stop,
                    secret=DealSecret.of(secret))

    def course(self, *, secret: DealSecret | bytes) -> TournamentProgress:
        """A fresh :class:`referee.tournament.course.TournamentProgress` of this tournament, its
        deals keyed by ``secret``."""
        return TournamentProgress(self.tournament_format(), [e.name for e in self.entrants],
                      self.plan(secret=secret), self.rating)

    def total(self) -> int | None:
        """Matches played if nothing stops the tournament early (``None``: not known)."""
        return capped_total(self.tournament_format(), players=self.players,
                            seatings=self.seatings, rounds=self.rounds,
                            max_matches=self.max_matches)

    def schedule(self, *, secret: DealSecret | bytes) -> list[MatchSpec]:
        """Every match of a tournament planned in advance (a round robin or a gauntlet without
        ``stop``), in rating order, its deals keyed by ``secret``.

        :raises ValueError: for a format planned round by round from the results (a ladder, or
            ``stop``).
        """
        if self.format.seeded_by_results or self.stop is not None:
            raise ValueError(f"a {self.format.name}{' with stop' if self.stop else ''} is planned "
                             f"round by round from the results")
        fmt, n = self.tournament_format(), len(self.entrants)
        specs: list[MatchSpec] = []
        state = State.initial(n)
        while more := plan_round(fmt, state, players=self.players, seatings=self.seatings,
                                 seed=self.seed, secret=DealSecret.of(secret).key,
                                 rounds=self.rounds,
                                 max_matches=self.max_matches):
            specs += more
            state = State(n, state.round + 1, len(specs), state.order, state.mu, state.sigma)
        return specs

    def identity(self) -> dict[str, Any]:
        """What decides the matches and their results: two runs resume each other only if
        this is equal (``output``, ``concurrency``, ``affinity`` and ``rating`` may
        change)."""
        return {
            "name": self.name,
            "entrants": [{"name": e.name, "argv": list(e.argv), "workdir": str(e.workdir)}
                         for e in self.entrants],
            "variant": self.variant.value, "players": self.players, "target": self.target,
            "format": self.format.name, "rounds": self.rounds, "seatings": self.seatings,
            "seed": self.seed, "sandbox": self.sandbox.value,
            "limits": {k: getattr(self.limits, k) for k in LIMITS_KEYS},
        } | self._extras()

    def _extras(self) -> dict[str, Any]:
        """The newer keys, only when set (folders written before them resume as before)."""
        extra: dict[str, Any] = {}
        if self.candidates:
            extra["candidates"] = list(self.candidates)
        if self.max_matches is not None:
            extra["max_matches"] = self.max_matches
        if self.stop is not None:
            extra["stop"] = {"confidence": self.stop.confidence, "margin": self.stop.margin}
        if self.max_faults:
            extra["max_faults"] = self.max_faults
        return extra

    def resolved(self) -> dict[str, Any]:
        """The configuration as ``tournament.yaml`` holds it: every key, absolute paths."""
        return {
            "name": self.name,
            "entrants": [{"name": e.name,
                          "command": e.absolute_command(),
                          "workdir": str(e.workdir)} for e in self.entrants],
            "variant": self.variant.value, "players": self.players, "target": self.target,
            "format": self.format.name, "rounds": self.rounds, "seatings": self.seatings,
            "seed": self.seed, "concurrency": self.concurrency,
            "affinity": "auto" if self.affinity is None else self.affinity,
            "limits": {k: getattr(self.limits, k) for k in LIMITS_KEYS},
            "sandbox": self.sandbox.value, "output": str(self.output),
            "rating": {k: getattr(self.rating, k) for k in RATING_KEYS},
            "preflight": self.preflight.value, "max_faults": self.max_faults,
            "shared": [str(p) for p in self.shared], "snapshot_mb": self.snapshot_mb,
            "bot_uids": self.bot_uids,
        } | self._extras()


def load_config(
    path: Path | str, *, output: Path | str | None = None, concurrency: int | None = None,
    overrides: dict[str, Any] | None = None,
) -> Config:
    """Reads and checks a tournament configuration.

    Paths in the file are relative to its folder; ``output`` (the ``--output`` option) and the
    default ``results/<name>`` are relative to the current directory. ``overrides`` replace
    top-level keys of the file (the command line's ``--rounds``, ``--seed``, ``--stop``,
    ``--max-matches``, ``--affinity``) and are checked like them.

    :raises ConfigError: naming the file, the key and what is wrong.
    """
    return _Loader(Path(path)).load(output, concurrency, overrides or {})


def parse_stop(text: str) -> dict[str, float]:
    """The ``--stop`` option: ``CONFIDENCE`` or ``CONFIDENCE:MARGIN``.

    >>> parse_stop("0.95:2")
    {'confidence': 0.95, 'margin': 2.0}

    :raises ValueError: for anything else.
    """
    parts = text.split(":")
    try:
        if len(parts) > 2:
            raise ValueError
        values = [float(p) for p in parts]
    except ValueError:
        raise ValueError(f"expected CONFIDENCE or CONFIDENCE:MARGIN (like 0.95 or 0.95:2), "
                         f"not {text!r}") from None
    confidence, margin = values[0], values[1] if len(values) > 1 else 0.0
    if not 0.5 <= confidence < 1:
        raise ValueError(f"the confidence must be from 0.5 up to 1 (excluded), not {confidence:g}"
                         f" (0.95, say, not 95)")
    if margin < 0:
        raise ValueError(f"the margin must not be negative, not {margin:g}")
    return {"confidence": confidence, "margin": margin}


def _type_name(value: object) -> str:
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


class _Loader:
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
        raise _Mistake

    def attempt(self, check: Callable[[], _T], default: _T) -> _T:
        """``check()``, or ``default`` if it found a mistake (noted): the checks go on."""
        try:
            return check()
        except _Mistake:
            return default

    def load(self, output: Path | str | None, concurrency: int | None,
             overrides: dict[str, Any]) -> Config:
        data = self._parse()
        for key, value in overrides.items():
            data[key] = value  # from the command line: no line in the file
            inside = (f"{key}.", f"{key}[")
            for where in [k for k in self.lines if k == key or k.startswith(inside)]:
                del self.lines[where]
        self.keys(data, "", KEYS)
        name = self.attempt(lambda: self.text(data, "name", self.path.stem), self.path.stem)
        if not NAME_RE.fullmatch(name):
            self.note("name", f"{name!r} may only hold letters, digits, '-', '_' and '.'")
        players = self.attempt(lambda: self.integer(data, "players", 3, 2, 4), 2)
        entrants: tuple[EntrantConfig, ...] = self.attempt(
            lambda: self.entrants(data, players), ())
        variant = self.attempt(
            lambda: self.choice(data, "variant", "classic", [v.value for v in Variant]),
            "classic")
        fmt = format_named(self.attempt(
            lambda: self.choice(data, "format", RoundRobin.name, list(FORMATS)), RoundRobin.name))
        seatings = self.attempt(lambda: self.choice(data, "seatings", "all", SEATINGS), "all")
        sandbox = SandboxMode(self.attempt(
            lambda: self.choice(data, "sandbox", "auto", [m.value for m in SandboxMode]), "auto"))
        if data.get("preflight") is False:  # YAML reads an unquoted off as false
            data["preflight"] = Preflight.OFF.value
        preflight = Preflight(self.attempt(
            lambda: self.choice(data, "preflight", "leave-out", [m.value for m in Preflight]),
            "leave-out"))
        bot_uids = self.attempt(lambda: self.choice(data, "bot_uids", "own", BOT_UIDS), "own")
        shared: tuple[Path, ...] = self.attempt(lambda: self.shared(data), ())
        seed = data.get("seed", 1)
        if isinstance(seed, bool) or not isinstance(seed, int | str):
            self.note("seed", f"expected an integer or a string, got {_type_name(seed)}")
            seed = 1
        limits: dict[str, Any] = self.attempt(
            lambda: self.section(data, "limits", LIMITS_KEYS), {})
        rating: dict[str, Any] = self.attempt(
            lambda: self.section(data, "rating", RATING_KEYS), {})
        out_path = self.output(data, output, name)
        if concurrency is not None and concurrency < 1:
            self.note("concurrency", f"must be at least 1, not {concurrency}")

        def integer(source: dict[str, Any], key: str, default: int, lo: int) -> int:
            return self.attempt(lambda: self.integer(source, key, default, lo), default)

        names = [e.name for e in entrants]
        candidates: tuple[str, ...] = self.attempt(
            lambda: self.candidates(data, fmt, names, players), ())
        stop = self.attempt(lambda: self.stop(data), None)
        if stop is not None and seatings == "rotate" and players >= 3:
            self.note("stop", f"needs seatings: all with {players} players (with rotate each "
                              f"entrant always plays after the same neighbour, which shifts "
                              f"the differences the verdicts read: docs/statistics.md)")
        rounds, max_matches = self.caps(data, fmt, players, seatings)
        config = Config(
            path=self.path.absolute(), name=name, entrants=entrants, output=out_path,
            variant=Variant(variant), players=players,
            target=integer(data, "target", DEFAULT_TARGET, 1),
            format=fmt, rounds=rounds, seatings=seatings, candidates=candidates,
            max_matches=max_matches, stop=stop,
            seed=seed,
            concurrency=concurrency or integer(data, "concurrency", 1, 1),
            affinity=self.attempt(lambda: self.affinity(data), None),
            limits=self.limits(limits),
            sandbox=sandbox, rating=self.attempt(lambda: self.rating(rating), RatingConfig()),
            preflight=preflight, max_faults=integer(data, "max_faults", 0, 0),
            shared=shared, snapshot_mb=integer(data, "snapshot_mb", 512, 0), bot_uids=bot_uids,
            warnings=tuple(self.warnings),
        )
        if self.mistakes:
            raise ConfigError(*(text for _, _, text in sorted(self.mistakes)))
        return config

    def output(self, data: dict[str, Any], output: Path | str | None, name: str) -> Path:
        """The output folder: the command line's, else the configuration's (relative to its
        folder), else ``results/<name>``."""
        out = self.attempt(lambda: self.text(data, "output", ""), "")
        if output is not None:
            return Path(output).absolute()
        if out:
            return (self.folder / out).absolute()
        return (Path("results") / name).absolute()

    def caps(self, data: dict[str, Any], fmt: type[Format], players: int,
             seatings: str) -> tuple[int | None, int | None]:
        """``rounds`` and ``max_matches``: a cap for ``stop`` and for a format that needs one,
        and room for one duplicate set."""
        max_matches = None
        if "max_matches" in data:
            max_matches = self.attempt(lambda: self.integer(data, "max_matches", 0, 1), None)
            per_set = set_size(players, seatings)
            if max_matches is not None and max_matches < per_set:
                self.note("max_matches", f"{max_matches} is too small for one duplicate set "
                                         f"({per_set} matches: {players} players, seatings "
                                         f"{seatings})")
        rounds: int | None = self.attempt(lambda: self.integer(data, "rounds", 1, 1), 1)
        if "rounds" not in data and ("max_matches" in data or "stop" in data):
            rounds = None
        if rounds is None and "max_matches" not in data:
            self.note("stop", "needs a cap: add rounds or max_matches (on the command line, "
                                  "--rounds N or --max-matches N)")
        if fmt.needs_cap and "rounds" not in data and "max_matches" not in data:
            self.note("format", f"a {fmt.name} needs a cap: add rounds or max_matches")
        return rounds, max_matches

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

    def _parse(self) -> dict[str, Any]:
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
                              f"got {_type_name(data)}")
        self._positions(node, "")
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

    def affinity(self, data: dict[str, Any]) -> bool | None:
        value = data.get("affinity", "auto")
        if value == "auto":
            return None
        if not isinstance(value, bool):
            self.fail("affinity", f"expected auto, true or false, got {_type_name(value)} "
                                  f"{value!r}")
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

    def candidates(self, data: dict[str, Any], fmt: type[Format], names: Sequence[str],
                   players: int) -> tuple[str, ...]:
        value = data.get("candidates")
        if not fmt.has_candidates:
            if value is not None:
                self.fail("candidates",
                          f"only a gauntlet has candidates (format is {fmt.name!r})")
            return ()
        if not isinstance(value, list) or not value:
            self.fail("candidates" if value is not None else "format",
                      "a gauntlet needs candidates: a list of entrant names")
        result: list[str] = []
        for i, item in enumerate(value, 1):
            name = str(item)
            if name not in names:
                close = difflib.get_close_matches(name, names, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                self.fail(f"candidates[{i}]", f"{name!r} is not an entrant{hint}")
            if name in result:
                self.fail(f"candidates[{i}]", f"{name!r} is listed twice")
            result.append(name)
        others = len(names) - len(result)
        if others < players - 1:
            self.fail("candidates", f"a gauntlet of {players} players needs at least "
                                    f"{players - 1} entrants that are not candidates, not "
                                    f"{others}")
        return tuple(result)

    def shared(self, data: dict[str, Any]) -> tuple[Path, ...]:
        value = data.get("shared", [])
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            self.fail("shared", f"expected a list of paths (folders or files every bot may "
                                f"read), got {_type_name(value)}")
        result = []
        for i, item in enumerate(value, 1):
            path = (self.folder / os.path.expanduser(item)).absolute()
            if not path.exists():
                self.fail(f"shared[{i}]", f"{str(path)!r} does not exist")
            result.append(path)
        return tuple(result)

    def stop(self, data: dict[str, Any]) -> Stop | None:
        if "stop" not in data:
            return None
        section = self.section(data, "stop", STOP_KEYS)
        confidence = self.number(section, "stop.confidence", 0.95)
        if not 0.5 <= confidence < 1:
            self.fail("stop.confidence", f"must be from 0.5 up to 1 (excluded), not {confidence}")
        margin = self.number(section, "stop.margin", 0.0)
        if margin < 0:
            self.fail("stop.margin", f"must be 0 or more points per hand, not {margin}")
        return Stop(confidence, margin)

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

    def entrants(self, data: dict[str, Any], players: int) -> tuple[EntrantConfig, ...]:
        items = data.get("entrants")
        if items is None:
            self.fail("entrants", "missing: list the bots, each with a name and a command")
        if not isinstance(items, list):
            self.fail("entrants", f"expected a list of entrants, got {_type_name(items)}")
        seen: dict[str, str] = {}
        result: list[EntrantConfig] = []
        for i, item in enumerate(items, 1):
            try:
                result.append(self.entrant(i, item, seen))
            except _Mistake:  # noted; the other entrants are checked all the same
                continue
        if len(items) < players:
            self.fail("entrants", f"{len(items)} entrant(s) cannot fill a table of "
                                  f"{players} players")
        return tuple(result)

    def entrant(self, i: int, item: object, seen: dict[str, str]) -> EntrantConfig:
        """One entrant, every key checked."""
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
            self.note(f"{key}.name", f"expected a string, got {_type_name(name)}")
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
                           f"{_type_name(value)} {value!r}")
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

