"""A league's configuration (``league.yaml``), read and checked before anything starts, with
the tournament's loader (:mod:`referee.tournament.common`: the keys they share read once, the
same way): every mistake one line naming the file, the line and the key.

>>> load_league(Path("league.yaml")).placement  # doctest: +SKIP
3
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from referee.tournament.common import (
    RATING_KEYS,
    Common,
    EntrantConfig,
    Loader,
    Mistake,
)

__all__ = ["BUDGET_KEYS", "KEYS", "Budget", "LeagueConfig", "load_league"]

KEYS = ("name", "submissions", "command", "entrants", "variant", "players", "target", "seatings",
        "concurrency", "affinity", "limits", "sandbox", "output", "rating", "shared",
        "snapshot_mb", "bot_uids", "placement", "poll_s", "settle_s", "version_s", "check",
        "max_matches", "keep_logs", "budget")
LEAGUE_RATING_KEYS = tuple(k for k in RATING_KEYS if k != "per")
"""A league rates once per duplicate set: the rating's keys but ``per``."""
DEFAULT_COMMAND = "python3 bot.py"
"""What a submission runs unless the league or its folder (``command.txt``) says otherwise."""
BUDGET_KEYS = ("daily", "rest", "margin")


@dataclass(frozen=True)
class Budget:
    """How much a season plays (``budget:``): a new version's placement sets always play;
    the rest at most ``daily`` matches a day (the machine's calendar day), and none once
    every neighbour pair of the leaderboard is settled (``rest``: its verdict decided, or its
    interval within ``margin`` points a hand of 0 either way) until a new version comes."""

    daily: int | None = None
    rest: bool = True
    margin: float = 2.0


@dataclass(frozen=True, kw_only=True)
class LeagueConfig(Common):
    """A checked league configuration, defaults filled in, paths absolute: the keys it shares
    with a tournament (:class:`~referee.tournament.common.Common`, ``entrants`` the house
    entrants, each one version per change of its folder) and its own."""

    snapshot_mb: int = 64
    """The largest submission snapshotted, in MiB (and 8 entries a MiB): a larger one is
    refused, whatever it holds."""
    submissions: Path | None = None
    """The folder of submissions: one folder an entrant (its name the author's)."""
    command: str = DEFAULT_COMMAND
    """A submission's command, run in its folder (a ``command.txt`` there may replace it)."""
    placement: int = 3
    """Duplicate sets a new version plays at once, against opponents spread over its
    uncertainty."""
    poll_s: float = 1.0
    """How often the submissions folder is looked at."""
    settle_s: float = 1.0
    """How long a folder must stay unchanged before it is admitted."""
    version_s: float = 60.0
    """The least time between two attempts of one author (a version admitted or a folder
    refused): a newer folder waits, and the folder as it is when the time is up is tried
    (0: no wait)."""
    check: bool = True
    """Whether a submission passes ``ct-referee check``'s conformance before it plays."""
    keep_logs: int = 0
    """The bots' stderr kept for the last this many sets (0: every set's)."""
    budget: Budget = field(default_factory=Budget)
    """How much the season plays (:class:`Budget`)."""

    def identity(self) -> dict[str, Any]:
        """What a resumed output folder must agree on (the rest may change between runs)."""
        return {"name": self.name, "variant": self.variant.value, "players": self.players,
                "target": self.target, "seatings": self.seatings}


class _LeagueLoader(Loader):
    """The :class:`~referee.tournament.common.Loader`, reading a league's own keys too."""

    def load_league(self, output: Path | str | None, concurrency: int | None,
                    overrides: dict[str, Any]) -> LeagueConfig:
        data = self.parse(overrides)
        self.keys(data, "", KEYS)
        common = self.common(data, output, concurrency, players=2, snapshot_mb=64,
                             snapshot_min=1, rating_keys=LEAGUE_RATING_KEYS)
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

        def seconds(key: str, default: float, lo: float = 0.05, hi: float = 3600) -> float:
            value = self.attempt(lambda: self.number(data, key, default), default)
            if not lo <= value <= hi:
                self.note(key, f"must be from {lo:g} to {hi:g} seconds, not {value:g}")
            return value

        check = data.get("check", True)
        if not isinstance(check, bool):
            self.note("check", f"expected true or false, got {check!r}")
            check = True
        config = LeagueConfig(
            **common, submissions=submissions, command=command, entrants=entrants,
            placement=self.attempt(lambda: self.integer(data, "placement", 3, 0), 3),
            poll_s=seconds("poll_s", 1.0), settle_s=seconds("settle_s", 1.0),
            version_s=seconds("version_s", 60.0, 0, 86400), check=check,
            keep_logs=self.attempt(lambda: self.integer(data, "keep_logs", 0, 0), 0),
            budget=self.attempt(lambda: self.budget(data), Budget()),
            warnings=tuple(self.warnings))
        self.raise_mistakes()
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
            except Mistake:
                continue
        return tuple(result)

    def budget(self, data: dict[str, Any]) -> Budget:
        """The ``budget`` section (:data:`BUDGET_KEYS`)."""
        section = self.section(data, "budget", BUDGET_KEYS)
        daily = None
        if "budget.daily" in section:
            daily = self.integer(section, "budget.daily", 0, 1)
        rest = section.get("budget.rest", True)
        if not isinstance(rest, bool):
            self.fail("budget.rest", f"expected true or false, got {rest!r}")
        margin = self.number(section, "budget.margin", 2.0)
        if margin < 0:
            self.fail("budget.margin", f"must be 0 or more points a hand, not {margin:g}")
        return Budget(daily=daily, rest=rest, margin=margin)


def load_league(path: Path | str, *, output: Path | str | None = None,
                concurrency: int | None = None,
                overrides: dict[str, Any] | None = None) -> LeagueConfig:
    """Reads and checks a league's configuration (paths relative to its folder; ``output`` and
    the default ``results/<name>`` relative to the current one).

    :raises ConfigError: naming the file, the key and what is wrong.
    """
    return _LeagueLoader(Path(path)).load_league(output, concurrency, overrides or {})
