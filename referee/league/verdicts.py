"""A league's pairwise verdicts and fair-play audit, in memory that does not grow with the sets
(pure: no I/O). The tests are the tournament's (:mod:`referee.tournament.stopping`,
:mod:`referee.tournament.audit`), read online: each finished set once, in the journal's order,
then forgotten; a pair is kept while both its versions play. Levels are the growing field's
split. Why, and what it keeps: docs/league.md, *7. Verdicts and the fair-play audit*.

>>> from referee.tournament.stopping import Stop
>>> v = Verdicts(Stop())
>>> v.add_set([(0, 1), (1, 0)], [[[30, 10], [25, 15]] * 9, [[12, 28], [14, 26]] * 9], [None, None])
>>> p = v.pair(0, 1, ["a", "b"])
>>> p.sets, round(p.diff or 0, 1), (p.low or 0) > 0
(1, 14.5, True)
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from referee.tournament.attribution import FieldAudit
from referee.tournament.audit import AUDIT_SIZE, SetStat, Verdict, set_stat
from referee.tournament.stopping import Pair, PairTest, Stop, deal_pieces, pair_alpha

__all__ = ["Verdicts", "audit_level", "set_stats"]


def audit_level(stop: Stop, entrant: int) -> float:
    """The audit's level of the version numbered ``entrant`` (from 0, admission order).

    >>> round(sum(audit_level(Stop(), j) for j in range(10_000)), 4)
    0.05
    """
    j = entrant + 1
    return stop.alpha / (j * (j + 1))


@dataclass(slots=True)
class _PairState:
    test: PairTest
    alpha: float
    raw: float = 0.0
    """Sum of the raw differences per deal, lower index minus higher."""
    deals: int = 0


@dataclass(slots=True)
class _AuditState:
    level: float
    about: PairTest = field(default_factory=lambda: PairTest(AUDIT_SIZE))
    total: float = 0.0


def set_stats(seats: Sequence[Sequence[int]], keys: Sequence[bytes],
              adjusted: Sequence[Sequence[Sequence[float]]]) -> dict[int, SetStat]:
    """Each member's ``T`` of one finished set (the audit's, :meth:`~referee.tournament.audit.
    Audit.entrant_stats`): ``seats`` the entrants by seat of each seating, ``keys`` each
    seating's :func:`~referee.tournament.audit.play_key`, ``adjusted`` each seating's points by
    hand and seat less the luck of the stock flips (each member's the audit's own
    :func:`~referee.tournament.audit.set_stat`). Empty for a set of one seating.

    >>> st = set_stats([(0, 1), (1, 0)], [b"b", b"a"], [[[10, 2]], [[8, 4]]])
    >>> st[0].observed, st[1].observed
    (6.0, -6.0)
    """
    if len(seats) < 2:
        return {}
    seatings = list(zip(keys, seats, adjusted, strict=True))
    stats = {e: set_stat(seatings, e) for e in sorted(seats[0])}
    return {e: st for e, st in stats.items() if st is not None}


class Verdicts:
    """The league's pair tests and audit, over version numbers (admission order)."""

    def __init__(self, stop: Stop) -> None:
        self.stop = stop
        self.pairs: dict[tuple[int, int], _PairState] = {}
        self._partners: dict[int, set[int]] = {}
        self.audits: dict[int, _AuditState] = {}
        self.field = FieldAudit(lambda e: 1 / ((e + 1) * (e + 2)))
        """Who the audit names (the tournament's attribution, each version at its share)."""

    def add_set(self, seats: Sequence[Sequence[int]],
                hand_scores: Sequence[Sequence[Sequence[int]]],
                luck: Sequence[Sequence[Sequence[float]] | None],
                keys: Sequence[bytes] | None = None, *,
                pairs_of: Collection[int] | None = None) -> None:
        """One finished duplicate set: each seating's entrants by seat, points by hand and
        seat, luck by hand and seat (``None`` where unknown); ``keys``: each seating's play key
        (for the audit; without them no audit); ``pairs_of``: the members whose pairs are
        tested (default: all; the league's: those playing)."""
        if not seats:
            return
        members = sorted(seats[0])
        common = min(len(h) for h in hand_scores)
        known = None if any(x is None for x in luck) else [x or [] for x in luck]
        points = {e: [0.0] * common for e in members}
        for order, hands in zip(seats, hand_scores, strict=True):
            for k in range(common):
                for seat, e in enumerate(order):
                    points[e][k] += hands[k][seat] / len(seats)
        tested = [e for e in members if pairs_of is None or e in pairs_of]
        for a, b in itertools.combinations(tested, 2):
            s = self.pairs.get((a, b))
            if s is None:
                s = self.pairs[(a, b)] = _PairState(
                    PairTest(self.stop.margin), pair_alpha(self.stop, 0, a, b, growing=True))
                self._partners.setdefault(a, set()).add(b)
                self._partners.setdefault(b, set()).add(a)
            s.raw += math.fsum(points[a][k] - points[b][k] for k in range(common))
            s.deals += common
            s.test.add_set(deal_pieces(a, b, seats, hand_scores, known))
        if keys is None:
            return
        adjusted = [[[h[k][seat] - (flips[k][seat] if flips is not None and k < len(flips)
                                    else 0.0) for seat in range(len(order))]
                     for k in range(len(h))]
                    for order, h, flips in zip(seats, hand_scores, luck, strict=True)]
        stats = set_stats(seats, keys, adjusted)
        self.field.add(stats)
        for e, stat in stats.items():
            st = self.audits.get(e)
            if st is None:
                st = self.audits[e] = _AuditState(audit_level(self.stop, e))
            st.about.add([stat.observed])
            st.total += stat.observed

    def drop(self, entrant: int) -> None:
        """Forgets the pairs of ``entrant`` (a version that plays no more); its audit stays."""
        for other in self._partners.pop(entrant, set()):
            self.pairs.pop((min(entrant, other), max(entrant, other)), None)
            partners = self._partners.get(other)
            if partners is not None:
                partners.discard(entrant)

    def pair(self, upper: int, lower: int, names: Sequence[str]) -> Pair:
        """The verdict on ``upper`` over ``lower``: ``stronger`` (the test says ``upper`` is),
        ``weaker`` (it says ``lower`` is: the ratings' order and the test disagree), or
        ``open``; the anytime-valid interval on ``upper - lower`` (points per hand, adjusted
        for luck) at the pair's level."""
        a, b = min(upper, lower), max(upper, lower)
        s = self.pairs.get((a, b))
        if s is None or not s.test.n:
            return Pair(names[upper], names[lower], "open", None, None, None,
                        s.test.sets if s else 0)
        t = s.test
        low, high = t.interval(s.alpha)
        mean, raw = t.total / t.n, s.raw / s.deals if s.deals else None
        side = t.passed(s.alpha)
        evidence = t.peak_up if upper < lower else t.peak_down
        if upper > lower:
            mean, low, high, side = -mean, -high, -low, -side
            raw = None if raw is None else -raw
        word = "stronger" if side > 0 else "weaker" if side < 0 else "open"
        return Pair(names[upper], names[lower], word, mean + 0.0,
                    low if math.isfinite(low) else None, high if math.isfinite(high) else None,
                    t.sets, raw, None, evidence)

    def audit(self, entrant: int) -> Verdict:
        """The audit's verdict on ``entrant``: named once its evidence without each other version
        in turn passes its share of the level (:class:`~referee.tournament.attribution.
        FieldAudit`); with two versions only (or every set of the same three), the pair
        (group) once the season's test passes."""
        st = self.audits.get(entrant)
        own = self.field.entrants.get(entrant)
        if st is None or own is None or not own.evidence.n:
            return Verdict(None, -math.inf, math.inf, False, 0)
        ev = own.evidence
        why = ""
        if not self.field.indivisible and self.field.named(entrant, self.stop.alpha):
            why = "gains later" if ev.peak_side > 0 else "loses later"
        elif self.field.indivisible and self.field.field_passed(self.stop.alpha):
            why = "the pair differs" if len(self.field.entrants) == 2 else "the group differs"
        low, high = st.about.interval(st.level)
        return Verdict(st.total / ev.n, low, high, bool(why), ev.n, ev.peak, why)
