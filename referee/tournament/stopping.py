"""Stopping when the order is settled: paired evidence per deal, anytime-valid intervals, verdicts.

Pure code, no I/O. The evidence between two entrants is their difference in points per hand over
the duplicate sets they shared. A *duplicate set* is every seating of one group in one round:
the same deals, every seat order, so the luck of the cards cancels within it. Within a set, deal
*k* (hand *k* of every seating) is one paired observation: for each entrant, its points in hand
*k* averaged over the set's seatings, and for each pair the difference of those averages. Only
deals that every seating of the set reached count (a seating that ended sooner leaves the later
deals unbalanced). Deals are independent draws, so the paired differences of one pair are
independent observations whose mean is the pair's difference in points per hand.

**The interval** is a normal-mixture confidence sequence (Robbins; Howard et al. 2021, eq. 14):
for independent observations with mean ``mu`` and variance (proxy) ``v``, and any ``rho > 0``,

    P( for some n:  |S_n - n mu| >= sqrt((n + rho) v log((n + rho) / (rho alpha^2))) ) <= alpha

(Ville's inequality on the mixture martingale ``sqrt(rho / (n + rho)) exp(S^2 / (2 v (n + rho)))``,
``S = S_n - n mu``). It holds *however often one looks*: the interval after every set may be
read, and acted on, without inflating the error, unlike a threshold on a posterior probability
that is checked again and again. ``v`` is the pair's sample variance of its deal differences (at
least :data:`MIN_DEALS` deals before any verdict; a plug-in, near exact since every set adds
about ten deals); ``rho`` is :data:`RHO` deals.

**Multiple comparisons.** Each pair's interval is built at level ``alpha / C(K, 2)`` for ``K``
entrants (Bonferroni over every pair that could ever be adjacent). The adjacent pairs change as
the order does, so a split over only the ``K - 1`` pairs adjacent at one moment would not bound
the error over the pairs that become adjacent later; with every pair covered, the chance that
*any* interval of *any* pair ever misses its true difference is at most ``alpha = 1 -
confidence``, and only a miss can make a wrong call. Hence: a pair called ``stronger`` the wrong
way, or equal twins called different, happens in at most ``1 - confidence`` of tournaments.

**Verdicts** for an adjacent pair (upper, lower) of the order: ``stronger`` when the interval of
``upper - lower`` lies above 0; ``tie`` when it lies within ``[-margin, margin]``; else ``open``.
The order itself is the rating table's, except that an adjacent pair whose interval lies wholly
below 0 (the lower decidedly stronger) is swapped (:func:`reorder`), so a verdict never
contradicts the table.

>>> ev = Evidence(2)
>>> ev.add_set([(0, 1), (1, 0)], [[[30, 10], [25, 15]] * 8, [[12, 28], [14, 26]] * 8])
>>> iv = ev.interval(0, 1, alpha=0.05)
>>> iv.sets, iv.deals, round(iv.diff, 1), iv.low > 0
(1, 16, 14.5, True)
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

VERDICTS = ("stronger", "tie", "open")
RHO = 10.0
"""The mixture's scale in deals: the boundary is tightest near a few dozen deals (a few sets)."""
MIN_DEALS = 10
"""Deals a pair must share before its interval is finite (the variance needs a few)."""


@dataclass(frozen=True)
class Stop:
    """The ``stop`` setting: decide adjacent pairs at ``confidence``; ``margin`` in points per
    hand makes close pairs a ``tie``."""

    confidence: float = 0.95
    margin: float = 0.0

    @property
    def alpha(self) -> float:
        """The error allowed over the whole tournament."""
        return 1.0 - self.confidence


@dataclass(frozen=True)
class Interval:
    """What the evidence says about ``a - b`` in points per hand."""

    diff: float | None
    """Mean difference per hand (``None``: no shared deal)."""
    low: float
    high: float
    sets: int
    """Duplicate sets the two shared."""
    deals: int


@dataclass(frozen=True)
class Pair:
    """The verdict on one adjacent pair of the order."""

    upper: str
    lower: str
    verdict: str
    diff: float | None
    low: float | None
    high: float | None
    sets: int

    def to_json(self) -> dict[str, Any]:
        """As a JSON object (floats rounded to 4 places, infinite bounds as ``None``)."""

        def num(x: float | None) -> float | None:
            return None if x is None or not math.isfinite(x) else round(x, 4)

        return {"upper": self.upper, "lower": self.lower, "verdict": self.verdict,
                "diff": num(self.diff), "low": num(self.low), "high": num(self.high),
                "sets": self.sets}


@dataclass
class _Series:
    deals: int = 0
    total: float = 0.0
    squares: float = 0.0
    sets: int = 0


def half_width(deals: int, variance: float, alpha: float, rho: float = RHO) -> float:
    """Half the width of the normal-mixture interval on a mean after ``deals`` observations.

    >>> round(half_width(40, 100.0, 0.05), 2)
    4.87
    """
    if deals <= 0:
        return math.inf
    n = deals + rho
    return math.sqrt(variance * n * math.log(n / (rho * alpha * alpha))) / deals


def interval(values: Sequence[float], *, alpha: float, bound: float) -> Interval:
    """An anytime-valid interval on the mean of independent ``values``, each within
    ``±bound``: the normal mixture of :func:`half_width` with the sample variance (at least
    :data:`MIN_DEALS` values before it is finite), never wider than the bound itself.
    ``sets`` and ``deals`` both count the values.

    >>> iv = interval([1.0, 3.0] * 10, alpha=0.05, bound=240)
    >>> round(iv.diff, 1), iv.low < 2 < iv.high
    (2.0, True)
    """
    n = len(values)
    if n == 0:
        return Interval(None, -math.inf, math.inf, 0, 0)
    mean = math.fsum(values) / n + 0.0
    if n < MIN_DEALS:
        return Interval(mean, -bound, bound, n, n)
    variance = math.fsum((v - mean) ** 2 for v in values) / (n - 1)
    h = half_width(n, variance, alpha)
    return Interval(mean, max(-bound, mean - h), min(bound, mean + h), n, n)


class Evidence:
    """Paired deal differences between entrants (by index), fed one finished duplicate set at a
    time, in schedule order."""

    def __init__(self, entrants: int) -> None:
        self.entrants = entrants
        self._series: dict[tuple[int, int], _Series] = {}

    def grow(self, entrants: int) -> None:
        """Makes room for entrants added since (a ladder's late entrants)."""
        self.entrants = max(self.entrants, entrants)

    def add_set(self, seats: Sequence[Sequence[int]],
                hand_scores: Sequence[Sequence[Sequence[int]]]) -> None:
        """Adds one duplicate set: for each of its matches, the entrants by seat and the points
        of every hand by seat (the record's ``hands[i].scores``).

        :raises ValueError: if the matches do not seat the same entrants.
        """
        if not seats:
            return
        members = sorted(seats[0])
        if any(sorted(s) != members for s in seats):
            raise ValueError(f"the matches of a set seat different entrants: {list(seats)}")
        common = min(len(h) for h in hand_scores)
        # points[e][k]: entrant e's points in deal k, averaged over the seatings
        points = {e: [0.0] * common for e in members}
        for order, hands in zip(seats, hand_scores, strict=True):
            for k in range(common):
                for seat, e in enumerate(order):
                    points[e][k] += hands[k][seat] / len(seats)
        for a, b in itertools.combinations(members, 2):
            key = (a, b) if a < b else (b, a)
            s = self._series.setdefault(key, _Series())
            s.sets += 1
            for k in range(common):
                d = points[key[0]][k] - points[key[1]][k]
                s.deals += 1
                s.total += d
                s.squares += d * d

    def sets(self, a: int, b: int) -> int:
        """Duplicate sets ``a`` and ``b`` shared."""
        s = self._series.get((min(a, b), max(a, b)))
        return s.sets if s else 0

    def interval(self, a: int, b: int, *, alpha: float) -> Interval:
        """The interval on ``a - b`` (points per hand) at level ``alpha`` for this one pair."""
        s = self._series.get((min(a, b), max(a, b)))
        if s is None or s.deals == 0:
            return Interval(None, -math.inf, math.inf, 0, 0)
        mean = s.total / s.deals
        diff = (mean if a < b else -mean) + 0.0  # never -0.0
        if s.deals < MIN_DEALS:
            return Interval(diff, -math.inf, math.inf, s.sets, s.deals)
        variance = max(0.0, (s.squares - s.deals * mean * mean) / (s.deals - 1))
        h = half_width(s.deals, variance, alpha)
        return Interval(diff, diff - h, diff + h, s.sets, s.deals)


def pair_alpha(stop: Stop, entrants: int) -> float:
    """The level of each pair's interval: ``alpha`` split over every pair of entrants."""
    return stop.alpha / max(1, math.comb(entrants, 2))


def verdict(iv: Interval, margin: float) -> str:
    """``stronger`` (interval above 0), ``tie`` (within ``±margin``) or ``open``."""
    if iv.low > 0:
        return "stronger"
    if -margin <= iv.low and iv.high <= margin:
        return "tie"
    return "open"


def reorder(order: Sequence[int], evidence: Evidence, stop: Stop) -> list[int]:
    """``order`` (best first), with every adjacent pair whose interval says the lower is
    decidedly stronger swapped, until none is left (at most ``len(order)`` passes)."""
    result = list(order)
    alpha = pair_alpha(stop, evidence.entrants)
    for _ in range(len(result)):
        swapped = False
        for i in range(len(result) - 1):
            if evidence.interval(result[i], result[i + 1], alpha=alpha).high < 0:
                result[i], result[i + 1] = result[i + 1], result[i]
                swapped = True
        if not swapped:
            break
    return result


def judge(pairs: Sequence[tuple[int, int]], names: Sequence[str], evidence: Evidence,
          stop: Stop) -> list[Pair]:
    """The verdict on each ``(upper, lower)`` pair of entrant indices."""
    alpha = pair_alpha(stop, evidence.entrants)
    out = []
    for upper, lower in pairs:
        iv = evidence.interval(upper, lower, alpha=alpha)
        out.append(Pair(names[upper], names[lower], verdict(iv, stop.margin), iv.diff,
                        None if iv.diff is None else iv.low,
                        None if iv.diff is None else iv.high, iv.sets))
    return out


def adjacent(order: Sequence[int]) -> list[tuple[int, int]]:
    """The adjacent pairs of an order, best first."""
    return list(itertools.pairwise(order))
