"""A league's configuration (``league.yaml``), read and checked before anything starts, with
the tournament's loader (:mod:`referee.tournament.config`): every mistake one line naming the
file, the line and the key.

>>> load_league(Path("league.yaml")).placement  # doctest: +SKIP
3
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from referee.bots.limits import Limits, SandboxMode
from referee.game.rules import DEFAULT_TARGET, Variant
from referee.tournament.config import (
    BOT_UIDS,
    NAME_RE,
    ConfigError,
    EntrantConfig,
    _Loader,
    _Mistake,
)
from referee.tournament.ratings import RatingConfig
from referee.tournament.schedule import SEATINGS

__all__ = ["KEYS", "LeagueConfig", "load_league"]

KEYS = ("name", "submissions", "command", "entrants", "variant", "players", "target", "seatings",
        "concurrency", "affinity", "limits", "sandbox", "output", "rating", "shared",
        "snapshot_mb", "bot_uids", "placement", "poll_s", "settle_s", "version_s", "check",
        "max_matches", "keep_logs")
LIMITS_KEYS = ("startup_ms", "move_ms", "bank_ms", "memory_mb", "pids", "cpus", "tmp_mb",
               "file_mb")
RATING_KEYS = ("mu", "sigma", "beta", "tau", "draw_probability")
DEFAULT_COMMAND = "python3 bot.py"
"""What a submission runs unless the league or its folder (``command.txt``) says otherwise."""


@dataclass(frozen=True)
class LeagueConfig:
    """A checked league configuration, defaults filled in, paths absolute."""

    path: Path
    name: str
    output: Path
    submissions: Path | None = None
    """The folder of submissions: one folder an entrant (its name the author's)."""
    command: str = DEFAULT_COMMAND
    """A submission's command, run in its folder (a ``command.txt`` there may replace it)."""
    entrants: tuple[EntrantConfig, ...] = ()
    """The house entrants, from the YAML (each one version per change of its folder)."""
    variant: Variant = Variant.CLASSIC
    players: int = 2
    target: int = DEFAULT_TARGET
    seatings: str = "all"
    concurrency: int = 1
    affinity: bool | None = None
    limits: Limits = field(default_factory=Limits)
    sandbox: SandboxMode = SandboxMode.AUTO
    rating: RatingConfig = field(default_factory=RatingConfig)
    shared: tuple[Path, ...] = ()
    snapshot_mb: int = 64
    """The largest submission snapshotted, in MiB (and 8 entries a MiB): a larger one is
    refused, whatever it holds."""
    bot_uids: str = "own"
    placement: int = 3
    """Duplicate sets a new version plays at once, against opponents spread over its
    uncertainty."""
    poll_s: float = 1.0
    """How often the submissions folder is looked at."""
    settle_s: float = 1.0
    """How long a folder must stay unchanged before it is admitted."""
    version_s: float = 60.0
    """The least time between two versions of one author admitted: a newer folder waits, and
    the folder as it is when the time is up is admitted (0: no wait)."""
    check: bool = True
    """Whether a submission passes ``ct-referee check``'s conformance before it plays."""
    max_matches: int | None = None
    """Matches after which the league stops (``None``: it plays until stopped)."""
    keep_logs: int = 0
    """The bots' stderr kept for the last this many sets (0: every set's)."""

    def identity(self) -> dict[str, Any]:
        """What a resumed output folder must agree on (the rest may change between runs)."""
        return {"name": self.name, "variant": self.variant.value, "players": self.players,
                "target": self.target, "seatings": self.seatings}


class _LeagueLoader(_Loader):
    """The tournament's loader, reading a league's keys."""

    def load_league(self, output: Path | str | None, concurrency: int | None,
                    overrides: dict[str, Any]) -> LeagueConfig:
        data = self._parse()
        data.update(overrides)
        self.keys(data, "", KEYS)
        name = self.attempt(lambda: self.text(data, "name", self.path.stem), self.path.stem)
        if not NAME_RE.fullmatch(name):
            self.note("name", f"{name!r} may only hold letters, digits, '-', '_' and '.'")
        players = self.attempt(lambda: self.integer(data, "players", 2, 2, 4), 2)
        submissions = None
        if "submissions" in data:
            text = self.attempt(lambda: self.text(data, "submissions", ""), "")
            submissions = (self.folder / text).absolute()
            if not submissions.is_dir():
                self.note("submissions", f"{str(submissions)!r} is not a folder")
        command = self.attempt(lambda: self.text(data, "command", DEFAULT_COMMAND),
                               DEFAULT_COMMAND)
        try:
            if not shlex.split(command):
                self.note("command", "is empty")
        except ValueError as err:
            self.note("command", f"cannot be split: {err}")
        entrants = self.house(data)
        if submissions is None and not entrants:
            self.note("submissions", "missing: give the folder of submissions (or entrants)")
        variant = self.attempt(
            lambda: self.choice(data, "variant", "classic", [v.value for v in Variant]),
            "classic")
        seatings = self.attempt(lambda: self.choice(data, "seatings", "all", SEATINGS), "all")
        sandbox = SandboxMode(self.attempt(
            lambda: self.choice(data, "sandbox", "auto", [m.value for m in SandboxMode]), "auto"))
        bot_uids = self.attempt(lambda: self.choice(data, "bot_uids", "own", BOT_UIDS), "own")
        limits: dict[str, Any] = self.attempt(
            lambda: self.section(data, "limits", LIMITS_KEYS), {})
        rating: dict[str, Any] = self.attempt(
            lambda: self.section(data, "rating", RATING_KEYS), {})
        if concurrency is not None and concurrency < 1:
            self.note("concurrency", f"must be at least 1, not {concurrency}")

        def integer(key: str, default: int, lo: int) -> int:
            return self.attempt(lambda: self.integer(data, key, default, lo), default)

        def seconds(key: str, default: float) -> float:
            value = self.attempt(lambda: self.number(data, key, default), default)
            if not 0.05 <= value <= 3600:
                self.note(key, f"must be from 0.05 to 3600 seconds, not {value:g}")
            return value

        version_s = self.attempt(lambda: self.number(data, "version_s", 60.0), 60.0)
        if not 0 <= version_s <= 86400:
            self.note("version_s", f"must be from 0 to 86400 seconds, not {version_s:g}")
        check = data.get("check", True)
        if not isinstance(check, bool):
            self.note("check", f"expected true or false, got {check!r}")
            check = True
        max_matches = integer("max_matches", 0, 1) if "max_matches" in data else None
        config = LeagueConfig(
            path=self.path.absolute(), name=name, output=self.output(data, output, name),
            submissions=submissions, command=command, entrants=entrants,
            variant=Variant(variant), players=players,
            target=integer("target", DEFAULT_TARGET, 1), seatings=seatings,
            concurrency=concurrency or integer("concurrency", 1, 1),
            affinity=self.attempt(lambda: self.affinity(data), None),
            limits=self.limits(limits), sandbox=sandbox,
            rating=self.attempt(lambda: self.rating(rating), RatingConfig()),
            shared=self.attempt(lambda: self.shared(data), ()),
            snapshot_mb=integer("snapshot_mb", 64, 1), bot_uids=bot_uids,
            placement=integer("placement", 3, 0), poll_s=seconds("poll_s", 1.0),
            settle_s=seconds("settle_s", 1.0), version_s=version_s, check=check,
            max_matches=max_matches, keep_logs=integer("keep_logs", 0, 0))
        if self.mistakes:
            raise ConfigError(*(text for _, _, text in sorted(self.mistakes)))
        return config

    def house(self, data: dict[str, Any]) -> tuple[EntrantConfig, ...]:
        """The house entrants (``entrants``, optional here)."""
        items = data.get("entrants", [])
        if not isinstance(items, list):
            self.note("entrants", "expected a list of entrants, each with a name and a command")
            return ()
        seen: dict[str, str] = {}
        result = []
        for i, item in enumerate(items, 1):
            try:
                result.append(self.entrant(i, item, seen))
            except _Mistake:
                continue
        return tuple(result)


def load_league(path: Path | str, *, output: Path | str | None = None,
                concurrency: int | None = None,
                overrides: dict[str, Any] | None = None) -> LeagueConfig:
    """Reads and checks a league's configuration (paths relative to its folder; ``output`` and
    the default ``results/<name>`` relative to the current one).

    :raises ConfigError: naming the file, the key and what is wrong.
    """
    return _LeagueLoader(Path(path)).load_league(output, concurrency, overrides or {})
