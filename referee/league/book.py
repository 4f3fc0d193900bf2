"""A league's book (:class:`Book`): every finished match booked once, whether read back from
the journal or saved now. A match counts into the table as it finishes; its duplicate set is
rated once every seating is in (TrueSkill on the points less the flips' luck, the pairs'
verdicts and the fair-play audit), and only then are its matches shown with their replays (a
set under way shows nothing of its deals). Memory is bounded by the versions, never by the
matches: the sets under way, the newest results, and each author's newest matches.
"""

from __future__ import annotations

import itertools
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from referee.league.config import LeagueConfig
from referee.league.journal import match_id
from referee.league.table import Table, set_points
from referee.league.verdicts import Verdicts
from referee.match.job import DealSecret, MatchSpec
from referee.records.match_id import MatchId
from referee.tournament.audit import play_key
from referee.tournament.output import JournalLine
from referee.tournament.schedule import seatings
from referee.tournament.stopping import Stop

__all__ = ["NEWEST", "OWN", "Book", "Set"]

NEWEST = 30
"""The newest finished matches shown on the page."""
OWN = 20
"""Each author's newest finished matches shown in its section."""


@dataclass
class Set:
    """A duplicate set under way: its members' group order and its finished seatings."""

    group: tuple[str, ...]
    done: dict[int, JournalLine] = field(default_factory=dict)
    queued: bool = False


class Book:
    """The league's bookkeeping over the versions numbered in admission order (:meth:`join`:
    a seat's entrant index in a match's spec, a pair's place in the verdicts' split of
    ``alpha``). ``say``: a line for the organiser (a fair-play flag)."""

    def __init__(self, config: LeagueConfig, secret: DealSecret, *,
                 say: Callable[[str], None] = lambda line: None) -> None:
        self.config, self.secret, self.say = config, secret, say
        self.table = Table(config.rating)
        self.stop_rule = Stop()
        self.verdicts = Verdicts(self.stop_rule)
        """The pairs' verdicts and the fair-play audit (bounded: :mod:`referee.league.verdicts`)."""
        self.flagged: set[str] = set()
        self.order = seatings(tuple(range(config.players)), config.seatings)
        """Each seating of a set, as positions in its group."""
        self.number: dict[str, int] = {}
        self.names: list[str] = []
        """Each version's number, in order."""
        self.sets: dict[int, Set] = {}
        self.next_group = 1
        self.newest: deque[dict[str, Any]] = deque(maxlen=NEWEST)
        """The newest matches of finished sets, newest first."""
        self.own: dict[str, deque[dict[str, Any]]] = {}
        """Each author's newest matches of finished sets, newest first."""
        self.ended: list[dict[str, Any]] = []
        """The matches of the sets finished since :meth:`take_ended` (their replays due, their
        rows in the lists of every match): each as :attr:`newest` holds it, and ``authors``."""
        self.day = ""
        self.today = 0
        """Matches finished on the machine's calendar day :attr:`day` (the daily budget)."""

    @property
    def done(self) -> int:
        """Matches finished."""
        return self.table.matches

    def join(self, name: str, *, author: str, version: int) -> None:
        """A version, numbered once (a version already known keeps its row and number)."""
        self.table.join(name, author=author, version=version)
        if name not in self.number:
            self.number[name] = len(self.names)
            self.names.append(name)

    def retire(self, name: str, why: str) -> None:
        """``name`` plays no more: its row stays, its pairs' evidence goes."""
        self.table.retire(name, why)
        if name in self.number:
            self.verdicts.drop(self.number[name])

    def spec(self, group: int, members: tuple[str, ...], seating: int) -> MatchSpec:
        """Seating ``seating`` of set ``group`` of ``members`` (in group order)."""
        seats = tuple(members[p] for p in self.order[seating - 1])
        return MatchSpec(match_id(group, seating), group * len(self.order) + seating, 1, group,
                         seating, tuple(self.number[n] for n in seats),
                         f"{self.config.name}:1:{group}", self.secret.key)

    def _count_day(self, line: JournalLine) -> None:
        at = line.raw.get("at")
        day = time.strftime("%Y-%m-%d", time.localtime(at if isinstance(at, int | float)
                                                       else None))
        if day != self.day:
            self.day, self.today = day, 0
        self.today += 1

    def book(self, line: JournalLine) -> list[str]:
        """Counts one finished match, and rates its set once every seating is in; the names
        rated then (``[]``: the set goes on)."""
        self.table.count(line.result)
        self._count_day(line)
        mid = MatchId.parse(line.id)
        self.next_group = max(self.next_group, mid.group + 1)
        players = line.result.players
        s = self.sets.get(mid.group)
        if s is None:
            group: list[str] = [""] * len(players)
            for j, position in enumerate(self.order[(mid.seating - 1) % len(self.order)]):
                group[position] = players[j]
            s = self.sets[mid.group] = Set(tuple(group))
        s.done[mid.seating] = line
        if len(s.done) < len(self.order):
            return []
        del self.sets[mid.group]
        lines = list(s.done.values())
        points = set_points([ln.result.players for ln in lines],
                            [ln.scores or [] for ln in lines], [ln.luck for ln in lines])
        faulted = {ln.result.players[seat] for ln in lines for seat, _ in ln.result.faults}
        self.table.rate_set(points, faulted)
        self._judge(mid.group, s, lines)
        self._show(lines)
        return [n for n in points if n in self.table.rows]

    def _show(self, lines: Sequence[JournalLine]) -> None:
        """A finished set's matches: among the newest, in each member's author's section,
        their replays due."""
        rows = self.table.rows
        for ln in lines:
            item = {"id": ln.id, "players": list(ln.result.players),
                    "totals": list(ln.result.totals), "faults": len(ln.faults)}
            self.newest.appendleft(item)
            authors = sorted({rows[n].author for n in ln.result.players if n in rows})
            for author in authors:
                self.own.setdefault(author, deque(maxlen=OWN)).appendleft(item)
            self.ended.append(dict(item, authors=authors))
        if len(self.ended) > 4 * NEWEST * len(self.order):  # nobody takes them: the newest
            del self.ended[:-NEWEST * len(self.order)]

    def take_ended(self) -> list[dict[str, Any]]:
        """The matches whose set finished since the last call."""
        ended, self.ended = self.ended, []
        return ended

    def _judge(self, group: int, s: Set, lines: list[JournalLine]) -> None:
        """Feeds a finished set to the audit, and to the tests of its pairs of versions that
        play (a retired version's pairs are forgotten: on a restart, which reads the versions'
        events before the matches, as live)."""
        rows = self.table.rows
        if not all(n in self.number for n in s.group):
            return
        seats = [tuple(self.number[p] for p in ln.result.players) for ln in lines]
        keys = [play_key(self.spec(group, s.group, k)) for k in s.done]
        playing = {self.number[n] for n in s.group if n in rows and rows[n].active}
        self.verdicts.add_set(seats, [ln.scores or [] for ln in lines],
                              [ln.luck for ln in lines], keys, pairs_of=playing)
        for name in s.group:
            if name in self.flagged:
                continue
            verdict = self.verdicts.audit(self.number[name])
            if verdict.flag:
                self.flagged.add(name)
                self.say(verdict.describe(name))

    # -- what the page and the planner read --------------------------------------------------

    def pair(self, upper: str, lower: str) -> dict[str, Any] | None:
        """The verdict on ``upper`` over ``lower`` as the page's data (``None``: unknown)."""
        if upper not in self.number or lower not in self.number:
            return None
        return self.verdicts.pair(self.number[upper], self.number[lower], self.names).to_json()

    def audit(self, name: str) -> dict[str, Any] | None:
        """``name``'s fair-play audit as the page's data (``None``: unknown)."""
        if name not in self.number:
            return None
        return self.verdicts.audit(self.number[name]).to_json()

    def flags(self) -> list[str]:
        """Each flagged version's audit in words, in admission order."""
        return [self.verdicts.audit(self.number[n]).describe(n)
                for n in sorted(self.flagged, key=self.number.__getitem__)]

    def settled(self, margin: float) -> bool:
        """Whether every neighbour pair of the leaderboard is settled: its verdict decided,
        or its interval within ``margin`` points a hand of 0 either way (a rest's rule)."""
        ranked = self.table.ranked()
        if len(ranked) < 2:
            return False
        for upper, lower in itertools.pairwise(ranked):
            pair = self.pair(upper.name, lower.name)
            if pair is None:
                return False
            low, high = pair.get("low"), pair.get("high")
            decided = pair.get("verdict") in ("stronger", "weaker")
            close = low is not None and high is not None and -margin <= low and high <= margin
            if not decided and not close:
                return False
        return True
