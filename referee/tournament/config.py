"""The tournament configuration (``tournament.md``): reading, checking, resolving.

:func:`load_config` reads a YAML file and checks every key before any bot starts; the mistakes
are one :class:`ConfigError` with a line for each, in file order, naming the file (and line),
the key and the problem:

>>> load_config(Path("tournaments/demo.yaml")).players  # doctest: +SKIP
3
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.match.job import DealSecret
from referee.tournament.admission import Preflight
from referee.tournament.common import (
    BOT_UIDS,
    ENTRANT_KEYS,
    LIMITS_KEYS,
    NAME_RE,
    RATING_KEYS,
    Common,
    ConfigError,
    EntrantConfig,
    Loader,
    Mistake,
    type_name,
)
from referee.tournament.course import TournamentPlan, TournamentProgress
from referee.tournament.formats import (
    FORMATS,
    Format,
    RoundRobin,
    capped_total,
    format_named,
)
from referee.tournament.stopping import Stop

__all__ = ["BOT_UIDS", "ENTRANT_KEYS", "KEYS", "LIMITS_KEYS", "NAME_RE", "RATING_KEYS", "Config",
           "ConfigError", "EntrantConfig", "load_config", "parse_stop"]

KEYS = ("name", "entrants", "variant", "players", "target", "format", "candidates", "rounds",
        "max_matches", "stop", "seatings", "seed", "concurrency", "affinity", "limits", "sandbox",
        "output", "rating", "preflight", "max_faults", "shared", "snapshot_mb", "bot_uids")
STOP_KEYS = ("confidence", "margin")


@dataclass(frozen=True, kw_only=True)
class Config(Common):
    """A checked tournament configuration, defaults filled in, paths absolute: the keys it
    shares with a league (:class:`~referee.tournament.common.Common`) and its own."""

    players: int = 3
    format: type[Format] = RoundRobin
    """The format's class (:data:`~referee.tournament.formats.FORMATS`), named once at load."""
    rounds: int | None = 1
    """``None``: as many as ``max_matches`` allows."""
    seed: int | str = 1
    candidates: tuple[str, ...] = ()
    """The gauntlet's candidates."""
    stop: Stop | None = None
    preflight: Preflight = Preflight.LEAVE_OUT
    """Each entrant started once before the matches: one that does not start is left out
    (``leave-out``), plays on and loses by fault (``keep``); ``off``: no pre-flight."""
    max_faults: int = 0
    """Faults after which an entrant is disqualified (0: never)."""

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
    return _TournamentLoader(Path(path)).load(output, concurrency, overrides or {})


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



class _TournamentLoader(Loader):
    """The :class:`~referee.tournament.common.Loader`, reading a tournament's own keys too."""

    def load(self, output: Path | str | None, concurrency: int | None,
             overrides: dict[str, Any]) -> Config:
        data = self.parse(overrides)
        self.keys(data, "", KEYS)
        common = self.common(data, output, concurrency, players=3, snapshot_mb=512,
                             snapshot_min=0)
        players, seatings = common["players"], common["seatings"]
        entrants: tuple[EntrantConfig, ...] = self.attempt(
            lambda: self.entrants(data, players), ())
        fmt = format_named(self.attempt(
            lambda: self.choice(data, "format", RoundRobin.name, list(FORMATS)), RoundRobin.name))
        if data.get("preflight") is False:  # YAML reads an unquoted off as false
            data["preflight"] = Preflight.OFF.value
        preflight = Preflight(self.attempt(
            lambda: self.choice(data, "preflight", "leave-out", [m.value for m in Preflight]),
            "leave-out"))
        seed = data.get("seed", 1)
        if isinstance(seed, bool) or not isinstance(seed, int | str):
            self.note("seed", f"expected an integer or a string, got {type_name(seed)}")
            seed = 1
        names = [e.name for e in entrants]
        candidates: tuple[str, ...] = self.attempt(
            lambda: self.candidates(data, fmt, names, players), ())
        stop = self.attempt(lambda: self.stop(data), None)
        if stop is not None and seatings == "rotate" and players >= 3:
            self.note("stop", f"needs seatings: all with {players} players (with rotate each "
                              f"entrant always plays after the same neighbour, which shifts "
                              f"the differences the verdicts read: docs/statistics.md)")
        rounds = self.caps(data, fmt)
        max_faults = self.attempt(lambda: self.integer(data, "max_faults", 0, 0), 0)
        config = Config(**common, entrants=entrants, format=fmt, rounds=rounds,
                        candidates=candidates, stop=stop, seed=seed, preflight=preflight,
                        max_faults=max_faults, warnings=tuple(self.warnings))
        self.raise_mistakes()
        return config

    def caps(self, data: dict[str, Any], fmt: type[Format]) -> int | None:
        """``rounds``: a cap for ``stop`` and for a format that needs one (``max_matches`` is
        read with the common keys)."""
        rounds: int | None = self.attempt(lambda: self.integer(data, "rounds", 1, 1), 1)
        if "rounds" not in data and ("max_matches" in data or "stop" in data):
            rounds = None
        if rounds is None and "max_matches" not in data:
            self.note("stop", "needs a cap: add rounds or max_matches (on the command line, "
                                  "--rounds N or --max-matches N)")
        if fmt.needs_cap and "rounds" not in data and "max_matches" not in data:
            self.note("format", f"a {fmt.name} needs a cap: add rounds or max_matches")
        return rounds

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

    def entrants(self, data: dict[str, Any], players: int) -> tuple[EntrantConfig, ...]:
        items = data.get("entrants")
        if items is None:
            self.fail("entrants", "missing: list the bots, each with a name and a command")
        if not isinstance(items, list):
            self.fail("entrants", f"expected a list of entrants, got {type_name(items)}")
        seen: dict[str, str] = {}
        result: list[EntrantConfig] = []
        for i, item in enumerate(items, 1):
            try:
                result.append(self.entrant(i, item, seen))
            except Mistake:  # noted; the other entrants are checked all the same
                continue
        if len(items) < players:
            self.fail("entrants", f"{len(items)} entrant(s) cannot fill a table of "
                                  f"{players} players")
        return tuple(result)
