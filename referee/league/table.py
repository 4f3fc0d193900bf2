"""A league's table (pure: no I/O): each version's TrueSkill rating, updated once per finished
duplicate set (its members ranked by their points over the set less the luck of the stock
flips, a member that faulted below the others: as a tournament rates per set), its counts, and
its rating over time, kept bounded (:data:`HISTORY` points, thinned by half when full: a
season of a million matches keeps the same memory as one of a thousand).

>>> t = Table()
>>> t.join("a", author="a", version=1); t.join("b", author="b", version=1)
>>> t.rate_set({"a": 30.0, "b": 10.0}, faulted=set())
>>> [r.name for r in t.ranked()]
['a', 'b']
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import trueskill

from referee.tournament.ratings import MatchResult, RatingConfig, p_stronger

__all__ = ["HISTORY", "Row", "Table", "set_points"]

HISTORY = 120
"""Points of an entrant's rating history kept (halved, every other dropped, when full)."""


@dataclass
class Row:
    """One version's line of the table."""

    name: str
    author: str
    version: int
    rating: trueskill.Rating
    active: bool = True
    why: str = ""
    """Why it no longer plays (retired: replaced, withdrawn)."""
    sets: int = 0
    matches: int = 0
    wins: int = 0
    points: int = 0
    hands: int = 0
    faults: int = 0
    history: list[tuple[int, float, float]] = field(default_factory=list)
    """``(sets rated in the league so far, mu, sigma)`` after its sets, thinned."""
    step: int = 1
    """Every how many of its sets a point is kept (doubles as the history is thinned)."""

    @property
    def score(self) -> float:
        """The conservative estimate, ``mu - 3 sigma``."""
        return float(self.rating.mu - 3 * self.rating.sigma)

    def to_json(self) -> dict[str, Any]:
        """As the page's data."""
        return {"name": self.name, "author": self.author, "version": self.version,
                "mu": round(self.rating.mu, 3), "sigma": round(self.rating.sigma, 3),
                "score": round(self.score, 3), "active": self.active, "why": self.why,
                "sets": self.sets, "matches": self.matches, "wins": self.wins,
                "points_per_hand": round(self.points / self.hands, 3) if self.hands else None,
                "faults": self.faults,
                "history": [[n, round(mu, 2), round(s, 2)] for n, mu, s in self.history]}


def set_points(seats: Sequence[Sequence[str]], scores: Sequence[Sequence[Sequence[int]]],
               luck: Sequence[Sequence[Sequence[float]] | None]) -> dict[str, float]:
    """Each member's points over one duplicate set less the luck of its stock flips (where a
    match's line has it), averaged over the seatings, over the hands every seating played.

    >>> set_points([("a", "b"), ("b", "a")], [[[10, 2]], [[8, 4]]], [None, None])
    {'a': 7.0, 'b': 5.0}
    """
    common = min(len(s) for s in scores)
    total: dict[str, float] = {}
    for names, hands, flips in zip(seats, scores, luck, strict=True):
        for k in range(common):
            for seat, name in enumerate(names):
                lucky = flips[k][seat] if flips is not None and k < len(flips) else 0.0
                total[name] = total.get(name, 0.0) + (hands[k][seat] - lucky) / len(seats)
    return total


class Table:
    """The league's ratings, by version name."""

    def __init__(self, config: RatingConfig | None = None) -> None:
        config = config or RatingConfig()
        self.config = config
        self.env = config.env()
        self.rows: dict[str, Row] = {}
        self.sets = 0
        self.matches = 0

    def join(self, name: str, *, author: str, version: int) -> None:
        """A new version, at the prior (one already there is kept as it is)."""
        if name not in self.rows:
            self.rows[name] = Row(name, author, version, self.env.create_rating())

    def retire(self, name: str, why: str) -> None:
        """``name`` plays no more; its row and history stay."""
        row = self.rows.get(name)
        if row is not None:
            row.active, row.why = False, why

    def count(self, result: MatchResult) -> None:
        """Counts one finished match (its rating waits for its set: :meth:`rate_set`)."""
        self.matches += 1
        for seat, name in enumerate(result.players):
            row = self.rows.get(name)
            if row is None:
                continue
            row.matches += 1
            row.wins += result.ranks[seat] == 1
            row.points += result.totals[seat]
            row.hands += result.hands
        for seat, _ in result.faults:
            row = self.rows.get(result.players[seat])
            if row is not None:
                row.faults += 1

    def rate_set(self, points: Mapping[str, float], faulted: Iterable[str]) -> None:
        """One TrueSkill update for a finished set: its members ranked by ``points``
        (:func:`set_points`), those in ``faulted`` below the others."""
        bad = set(faulted)
        members = [n for n in points if n in self.rows]
        if len(members) < 2:
            return
        keys = {n: (n in bad, -round(points[n], 6)) for n in members}
        members.sort(key=lambda n: keys[n])
        ranks = [sum(keys[o] < keys[n] for o in members) for n in members]
        rated = self.env.rate([(self.rows[n].rating,) for n in members], ranks=ranks)
        self.sets += 1
        for name, (rating,) in zip(members, rated, strict=True):
            row = self.rows[name]
            row.rating = rating
            row.sets += 1
            if row.sets % row.step == 0:
                row.history.append((self.sets, float(rating.mu), float(rating.sigma)))
                if len(row.history) >= HISTORY:
                    row.history = row.history[::2]
                    row.step *= 2

    def ranked(self) -> list[Row]:
        """The active versions, best first (conservative score, then mu, then name)."""
        return sorted((r for r in self.rows.values() if r.active),
                      key=lambda r: (-r.score, -r.rating.mu, r.name))

    def retired(self) -> list[Row]:
        """The versions that play no more."""
        return [r for r in self.rows.values() if not r.active]

    def p_above(self, a: str, b: str) -> float:
        """The probability that ``a`` is truly stronger than ``b``."""
        return p_stronger(self.rows[a].rating, self.rows[b].rating)
