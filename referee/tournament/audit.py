"""The fair-play audit: a bot that remembers between the seatings of a duplicate set is caught
by the numbers. Each set's play order is drawn from the deal secret (:func:`in_play_order`); per
entrant and set, ``T`` is its points a deal in the later seatings minus the first-played one,
read by an exact randomization test; whom it names is :mod:`referee.tournament.attribution`'s.

Why it is exact, and what it catches: docs/statistics.md, *The fair-play audit*.

>>> audit = Audit(["a", "b"], bound=240, per_set=2)
>>> audit.result(alpha=0.05)["a"].flag
False
"""

from __future__ import annotations

import hashlib
import hmac
import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from referee.match.spec import MatchSpec
from referee.tournament.attribution import (
    AUDIT_PRIOR,
    AUDIT_SD,
    AUDIT_SIZE,
    AuditEvidence,
    FieldAudit,
    SetStat,
)
from referee.tournament.stopping import PairTest

__all__ = ["AUDIT_PRIOR", "AUDIT_SD", "AUDIT_SIZE", "Audit", "AuditEvidence", "SetStat",
           "Verdict", "cut_sets", "in_play_order", "play_key", "set_stat"]


def play_key(spec: MatchSpec) -> bytes:
    """Where ``spec`` comes in its group's play order: HMAC-SHA256 of the deal secret over
    ``order:<seed>:<seating>``, unknowable without the secret."""
    return hmac.new(spec.secret, f"order:{spec.seed}:{spec.seating}".encode(),
                    hashlib.sha256).digest()


def cut_sets(specs: Iterable[MatchSpec]) -> Iterator[list[MatchSpec]]:
    """``specs`` cut into duplicate sets: runs of consecutive matches with one deals key (a
    group's seatings follow each other in a schedule's round), one held at a time."""
    group: list[MatchSpec] = []
    for spec in specs:
        if group and spec.deals_key != group[0].deals_key:
            yield group
            group = []
        group.append(spec)
    if group:
        yield group


def in_play_order(specs: Iterable[MatchSpec]) -> Iterator[MatchSpec]:
    """``specs`` in the order they are to be played: groups as they come, each group's
    seatings in :func:`play_key` order (drawn from the deal secret: no bot knows whether it
    plays a set first). One group is held at a time (:func:`cut_sets`): a round of a million
    streams through."""
    for group in cut_sets(specs):
        yield from sorted(group, key=play_key)



@dataclass(frozen=True)
class Verdict:
    """One entrant's audit."""

    later_minus_first: float | None
    """Mean over its sets of (adjusted points a deal in the later seatings) - (in the
    first-played); ``None`` before any finished set."""
    low: float
    high: float
    """About where that mean lies (a normal confidence sequence at the entrant's level: a
    description; the flag is the randomization test's)."""
    flag: bool
    sets: int
    evidence: float = 0.0
    """The log of the randomization test's evidence (flagged at ``log(n / alpha)``)."""
    why: str = ""
    """Flagged: ``gains later``, ``loses later`` (its own effect) or ``the pair differs`` (two
    entrants: either may be the cause)."""

    def to_json(self) -> dict[str, Any]:
        """As ``standings.json`` holds it (floats to 4 places, an unbounded side ``None``)."""

        def num(x: float | None) -> float | None:
            return None if x is None or not math.isfinite(x) else round(x, 4)

        return {"later_minus_first": num(self.later_minus_first), "low": num(self.low),
                "high": num(self.high), "flag": self.flag, "sets": self.sets,
                "evidence": num(self.evidence), "why": self.why}

    def describe(self, name: str) -> str:
        """One line for the terminal."""
        what = {"gains later": "does better", "loses later": "does worse"}.get(self.why)
        size = (f"by {self.later_minus_first:+.1f} points a hand over {self.sets} sets "
                f"(evidence {_odds(self.evidence)})")
        if what is None:
            who, which = (("its one opponent", "either") if self.why == "the pair differs"
                          else ("the others of its group (every set held them all)", "any"))
            return (f"fair-play audit: {name} and {who} differ between the later "
                    f"seatings of a set and the first-played one {size}: {which} may be "
                    f"the cause, look at their records")
        return (f"fair-play audit: {name} {what} in the later seatings of a set than in the "
                f"first-played one {size}: beyond chance, look at its records")


def _odds(log_e: float) -> str:
    """Evidence as odds: ``1 in 340``."""
    return f"1 in {math.exp(min(log_e, 700)):,.0f}" if log_e < 46 else "beyond 1 in 10^20"


def set_stat(seatings: Sequence[tuple[bytes, Sequence[int], Sequence[Sequence[float]]]],
             entrant: int) -> SetStat | None:
    """``entrant``'s ``T`` of one finished set of two seatings or more: ``seatings`` each
    seating's :func:`play_key`, entrants by seat and points by hand and seat less the luck of
    the stock flips, in any order (taken in play order); ``None`` where a seating has no hand.

    >>> set_stat([(b"b", (0, 1), [[10, 2]]), (b"a", (1, 0), [[8, 4]])], 0).observed
    6.0
    """
    ordered = sorted(seatings)
    common = min(len(h) for _, _, h in ordered)
    if common == 0:
        return None
    points = [math.fsum(h[k][list(seats).index(entrant)] for k in range(common)) / common
              for _, seats, h in ordered]
    total, s = math.fsum(points), len(points)
    alternatives = tuple((total - y) / (s - 1) - y for y in points)
    return SetStat(tuple(sorted(ordered[0][1])), alternatives[0], alternatives)


class Audit:
    """Gathers the finished matches of a tournament (any order) and judges each entrant."""

    def __init__(self, names: Sequence[str], *, bound: float, per_set: int) -> None:
        self.names = list(names)
        self.bound = bound
        self.per_set = per_set
        self._sets: dict[tuple[int, int], list[tuple[bytes, tuple[int, ...],
                                                     list[list[float]]]]] = {}

    def add(self, spec: MatchSpec, hand_scores: Sequence[Sequence[int]],
            luck: Sequence[Sequence[float]] | None = None) -> None:
        """One finished match: its seats, every hand's points by seat and, when known, every
        hand's luck of the stock flips by seat (the record's ``hands[i].luck``)."""
        if not hand_scores:
            return
        adjusted = [[h[seat] - (luck[k][seat] if luck is not None and k < len(luck) else 0.0)
                     for seat in range(len(spec.seats))] for k, h in enumerate(hand_scores)]
        seatings = self._sets.setdefault(spec.deals_key, [])
        key = play_key(spec)
        if all(k != key for k, _, _ in seatings):
            seatings.append((key, spec.seats, adjusted))

    def entrant_stats(self, entrant: int) -> list[SetStat]:
        """The entrant's ``T`` of every finished set it played, in schedule order (round,
        group): the evidence depends on the order of its sets, and the order sets finish in
        depends on the concurrency."""
        out = []
        for _, seatings in sorted(self._sets.items()):
            if len(seatings) < max(2, self.per_set) or entrant not in seatings[0][1]:
                continue
            stat = set_stat(seatings, entrant)
            if stat is not None:
                out.append(stat)
        return out

    def values(self, entrant: int) -> list[float]:
        """The entrant's later-minus-first value of every finished set it played, in schedule
        order."""
        return [st.observed for st in self.entrant_stats(entrant)]

    def field(self) -> FieldAudit:
        """The attribution's state over every finished set, in schedule order (round, group),
        each entrant at an equal share of ``alpha``."""
        n = max(1, len(self.names))
        audit = FieldAudit(lambda e: 1 / n, closed=len(self.names))
        for _, seatings in sorted(self._sets.items()):
            if len(seatings) < max(2, self.per_set):
                continue
            stats = {e: set_stat(seatings, e) for e in seatings[0][1]}
            audit.add({e: st for e, st in stats.items() if st is not None})
        return audit

    def result(self, *, alpha: float) -> dict[str, Verdict]:
        """Every entrant's verdict at ``alpha`` over the whole tournament (see the module's
        doc: each entrant at ``alpha / n``, on its evidence without each other entrant in turn;
        an indivisible field flagged as a whole)."""
        level = alpha / max(1, len(self.names))
        field = self.field()
        flagged = flags(field, len(self.names), alpha)
        out = {}
        for i, name in enumerate(self.names):
            values = self.values(i)
            low, high = _about(values, level)
            st = field.entrants.get(i)
            out[name] = Verdict(math.fsum(values) / len(values) if values else None, low, high,
                                i in flagged, len(values),
                                st.evidence.peak if st is not None else 0.0,
                                flagged.get(i, ""))
        return out


def flags(field: FieldAudit, entrants: int, alpha: float) -> dict[int, str]:
    """Who ``field`` names at ``alpha`` in a field of ``entrants``, and why: alone (``gains
    later``, ``loses later``), or, where every set held the same entrants and the field's test
    passed, all of them (``the pair differs``, ``the group differs``)."""
    flagged: dict[int, str] = {}
    if not field.indivisible:
        for i, st in field.entrants.items():
            if field.named(i, alpha, entrants):
                flagged[i] = "gains later" if st.evidence.peak_side > 0 else "loses later"
    elif field.field_passed(alpha):
        members = sorted(next(iter(field.groups)))
        for m in members:
            flagged[m] = "the pair differs" if len(members) == 2 else "the group differs"
    return flagged


def _about(values: Sequence[float], level: float) -> tuple[float, float]:
    """A normal confidence sequence on the mean of ``values`` (the module's pair test's, its
    bets sized for :data:`AUDIT_SIZE`): where the effect about lies, for reading."""
    if not values:
        return -math.inf, math.inf
    t = PairTest(AUDIT_SIZE)
    t.add(values)
    return t.interval(level)
