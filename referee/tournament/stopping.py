"""Stopping when the order is settled: each pair's paired evidence per deal, its anytime-valid
test (:class:`PairTest`: a sign bet and a normal bet on every deal, and the confidence sequence of
:mod:`referee.tournament.confseq`), the verdicts, the pair levels and the order. Pure, no I/O.

What each number guarantees, and why: docs/statistics.md (*The evidence: paired deals*, *The
test: two bets on every deal*, *Many pairs*).

>>> ev = Evidence(2)
>>> points = ev.add_set([(0, 1), (1, 0)], [[[30, 10], [25, 15]] * 9, [[12, 28], [14, 26]] * 9])
>>> iv = ev.interval(0, 1, alpha=0.05)
>>> iv.sets, iv.deals, round(iv.diff, 1), iv.low > 0
(1, 18, 14.5, True)
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from referee.tournament import confseq

HAND_POINTS = 240
"""Points in play in one hand of the classic variant: the bound of a raw difference per deal."""
MIN_DEALS = 20
"""Deals a pair must share before a ``tie`` (with a margin) may be called."""
PRIOR_SD = 12.0
"""The test's variance estimate is shrunk toward this standard deviation per deal (points)..."""
PRIOR_DEALS = 10.0
"""... with the weight of this many deals, so a few quiet deals never make it small."""
PIECE_SD = 15.0
"""The bets' variance estimate of a piece is shrunk toward this standard deviation..."""
PIECE_PRIOR = 12.0
"""... with the weight of this many pieces (two sets of 6 deals): a skewed pair (ahead on most
deals, far behind on a rare one) looks steady in its first sets, and a variance learnt from 3
pieces let its bets pass on equal means (a choice made with ``bench/skewed.py``:
docs/statistics.md)."""
MEAN_PRIOR = 3.0
"""Its estimate of the mean is shrunk toward the margin with the weight of this many pieces."""
BET_SIZE = 3.0
"""Without a margin, the bets are sized for a difference of this many points a hand (the prior
of the mean, and half of it the least bet)."""
LOG2 = math.log(2)
FULL_REORDER = 24
"""Fields up to this size have every pair checked against the order, larger ones the adjacent
pairs."""


@dataclass(frozen=True)
class Stop:
    """The ``stop`` setting: decide pairs at ``confidence``; ``margin`` (points per hand) > 0
    sizes the bets for it and turns on ``tie`` (neither stronger by the margin)."""

    confidence: float = 0.95
    margin: float = 0.0

    @property
    def alpha(self) -> float:
        """The error allowed over the whole tournament (each kind, with a margin)."""
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
    """The verdict on one pair of the order."""

    upper: str
    lower: str
    verdict: str
    diff: float | None
    """Adjusted difference per hand (the mean of the pieces the tests read)."""
    low: float | None
    high: float | None
    """The anytime-valid confidence sequence on the difference (adjusted points)."""
    sets: int
    raw: float | None = None
    """Raw difference per hand."""
    llr: float | None = None
    """With a margin: the log-likelihood ratio for ``upper`` stronger by the margin."""
    evidence: float | None = None
    """The log of the evidence for ``upper`` stronger (:meth:`Evidence.evidence_for`): the
    verdict is ``stronger`` once it reaches ``log(1 / alpha)``."""

    def to_json(self) -> dict[str, Any]:
        """As a JSON object (floats rounded to 4 places, infinite bounds as ``None``)."""

        def num(x: float | None) -> float | None:
            return None if x is None or not math.isfinite(x) else round(x, 4)

        return {"upper": self.upper, "lower": self.lower, "verdict": self.verdict,
                "diff": num(self.diff), "low": num(self.low), "high": num(self.high),
                "sets": self.sets, "raw": num(self.raw), "llr": num(self.llr),
                "evidence": num(self.evidence)}


# -- the normal model (ties, the forecast) ------------------------------------------------------


def _shrunk_var(n: int, total: float, squares: float, sd: float, weight: float) -> float:
    """The variance after ``n`` values, shrunk toward ``sd**2`` with the weight of ``weight``
    values."""
    mean = total / n if n else 0.0
    ss = max(0.0, squares - n * mean * mean)
    return (ss + weight * sd ** 2) / (max(0, n - 1) + weight)


def _shrunk(n: int, total: float, squares: float) -> float:
    """The variance per deal after ``n`` deals, shrunk toward :data:`PRIOR_SD`."""
    return _shrunk_var(n, total, squares, PRIOR_SD, PRIOR_DEALS)


def _softplus(z: float) -> float:
    """``log(1 + e^z)`` without overflow."""
    return z if z > 30 else math.log1p(math.exp(z))


def _logaddexp(x: float, y: float) -> float:
    """``log(e^x + e^y)``."""
    big = max(x, y)
    return big + math.log1p(math.exp(min(x, y) - big))


def llr(n: int, total: float, squares: float, margin: float) -> float:
    """The log-likelihood ratio of ``d = margin`` against ``d = 0`` after ``n`` observations
    with this sum and sum of squares, in the normal model with the shrunk variance.

    >>> round(llr(40, 200.0, 40 * 50.0, 2.0), 2)
    6.43
    """
    if n == 0:
        return 0.0
    return margin / _shrunk(n, total, squares) * (total - n * margin / 2)


def expected_deals(diff: float, margin: float, sd: float, alpha: float, beta: float) -> float:
    """Deals the normal model's ratio test needs on average to decide a pair whose true
    difference is ``diff`` (Wald's approximation, per-deal standard deviation ``sd``): ``inf``
    near the middle of the indifference zone, where it may take long.

    >>> round(expected_deals(5.0, 2.0, 7.0, 0.0167, 0.0167))
    25
    """
    drift = margin / sd ** 2 * (abs(diff) - margin / 2)
    if abs(drift) < 1e-12:
        return math.inf
    return (math.log(1 / alpha) if drift > 0 else math.log(1 / beta)) / abs(drift)


# -- evidence ----------------------------------------------------------------------------------


@dataclass
class _Series:
    raw: list[float] = field(default_factory=list)
    """Raw differences per deal, ``low - high`` entrant index."""
    total: float = 0.0
    squares: float = 0.0
    """Sum and sum of squares of the adjusted differences."""
    sets: int = 0
    pieces: list[list[float]] = field(default_factory=list)
    """The tests' evidence, oriented ``low - high`` entrant index, per set and deal: the adjusted
    difference over the swap pairs that reached it (:func:`deal_pieces`)."""
    tests: dict[float, PairTest] = field(default_factory=dict)


@dataclass
class PairTest:
    """The two bets of the module's test on a pair's pieces, extended set by set, sized for
    a difference of ``margin`` (points a hand): per direction the log of the sign bets
    (``up``, ``down``) and of the normal bets (``normal_up``, ``normal_down``), and what the
    confidence sequence needs.

    A sign bet is the log of the test martingale for a mean above 0,
    ``sum log(1 + tanh(a_i x_i))`` with ``a_i = m_(i-1) / v_(i-1)`` from the earlier values only
    (``m``: their mean shrunk toward ``margin`` and at least ``margin / 2``; ``v``: their variance
    shrunk toward :data:`PIECE_SD`). For values whose distribution given the past is symmetric
    about 0 (two equal entrants in duplicate play: swapping them changes nothing) or about a
    value below 0, ``E[1 + tanh(a x)] <= 1`` (``tanh`` is odd and increasing), so it is a test
    supermartingale whatever the tails and passes ``log(1/alpha)`` with probability at most
    ``alpha`` (Ville).

    >>> equal, ahead = PairTest(3.0), PairTest(3.0)
    >>> equal.add([0.0] * 50); ahead.add([5.0] * 50)
    >>> equal.up == 0.0, ahead.up > math.log(40)
    (True, True)
    """

    margin: float
    n: int = 0
    """Pieces so far."""
    sets: int = 0
    """Duplicate sets so far (:meth:`add_set`)."""
    total: float = 0.0
    squares: float = 0.0
    up: float = 0.0
    down: float = 0.0
    normal_up: float = 0.0
    normal_down: float = 0.0
    sign_up: float = 0.0
    sign_down: float = 0.0
    """The most the sign bets have shown for each direction at any look (the log of the average
    of the two directions' products, at a look where this direction leads)."""
    normal_peak_up: float = 0.0
    normal_peak_down: float = 0.0
    """The most each direction's normal bets have shown at any look, less ``log 2`` (each side
    at half the level)."""
    cs_peak_up: float = 0.0
    cs_peak_down: float = 0.0
    """The most the printed interval's sequence has shown against 0 on each side at any look
    (:func:`referee.tournament.confseq.log_evidence`): above ``log(1 / alpha)`` exactly when
    the interval at ``alpha`` lay wholly on that side."""

    def add(self, values: Sequence[float]) -> None:
        """Pieces, each a bet of its own, sized from the earlier ones only; the peaks are looked
        at once, after the last."""
        size = self.margin if self.margin > 0 else BET_SIZE
        shift = MEAN_PRIOR * size
        for x in values:
            var = _shrunk_var(self.n, self.total, self.squares, PIECE_SD, PIECE_PRIOR)
            a_up = max(size / 2, (self.total + shift) / (self.n + MEAN_PRIOR)) / var
            a_down = max(size / 2, (shift - self.total) / (self.n + MEAN_PRIOR)) / var
            # 1 + tanh(a x): the likelihood ratio of N(m, v) against its mirror, a = m / v
            self.up += LOG2 - _softplus(-2 * a_up * x)
            self.down += LOG2 - _softplus(2 * a_down * x)
            self.normal_up += a_up * x - a_up * a_up * var / 2
            self.normal_down += -a_down * x - a_down * a_down * var / 2
            self.n += 1
            self.total += x
            self.squares += x * x
        # a look: after the whole batch (a set's every deal), never inside it. Ville's bound
        # holds at any times chosen in advance; inside a set the deals' order would let a
        # skewed pair's run of small gains peak before its rare large loss comes.
        sign = _logaddexp(self.up, self.down) - LOG2
        if self.up >= self.down:
            self.sign_up = max(self.sign_up, sign)
        else:
            self.sign_down = max(self.sign_down, sign)
        self.normal_peak_up = max(self.normal_peak_up, self.normal_up - LOG2)
        self.normal_peak_down = max(self.normal_peak_down, self.normal_down - LOG2)
        cs = confseq.log_evidence(self.n, self.total, self.squares, prior_sd=PIECE_SD)
        if self.total > 0:
            self.cs_peak_up = max(self.cs_peak_up, cs)
        elif self.total < 0:
            self.cs_peak_down = max(self.cs_peak_down, cs)

    def add_set(self, values: Sequence[float]) -> None:
        """One duplicate set's pieces (:meth:`add`), counted in :attr:`sets`."""
        self.add(values)
        self.sets += 1

    @property
    def peak_up(self) -> float:
        """The evidence for a mean above 0: the smaller of what the two tests have shown (each
        at its most so far): a verdict, once given, stays."""
        return min(self.sign_up, self.normal_peak_up, self.cs_peak_up)

    @property
    def peak_down(self) -> float:
        """The evidence for a mean below 0 (see :attr:`peak_up`)."""
        return min(self.sign_down, self.normal_peak_down, self.cs_peak_down)

    def interval(self, alpha: float) -> tuple[float, float]:
        """The confidence sequence on the mean at ``alpha``: the asymptotic confidence sequence
        of :mod:`referee.tournament.confseq` over the pieces so far, its variance learnt from
        them (not the bets' prior). Before any piece ``(-inf, inf)``."""
        return confseq.interval(self.n, self.total, self.squares, alpha, prior_sd=PIECE_SD)

    def passed(self, alpha: float) -> int:
        """``1``: the mean is above 0 at ``alpha`` by both tests; ``-1``: below; ``0``: not
        yet."""
        bar = math.log(1 / alpha)
        if self.peak_up >= bar and self.peak_up >= self.peak_down:
            return 1
        if self.peak_down >= bar:
            return -1
        return 0


def deal_pieces(a: int, b: int, seats: Sequence[Sequence[int]],
            hand_scores: Sequence[Sequence[Sequence[int]]],
            luck: Sequence[Sequence[Sequence[float]]] | None) -> list[float]:
    """The pieces of ``a - b`` in one set, for the test: one per deal, the adjusted
    difference averaged over the set's *swap pairs* that reached the deal (a seating and the one
    with ``a`` and ``b`` exchanged, every other entrant in the same seat, so that the luck of the
    cards cancels between the two). A set of ``seatings: all`` has 1, 3 or 12 swap pairs for 2,
    3 or 4 seats; a deal that some swap pairs did not reach (their matches ended sooner) still
    counts, over the pairs that did. Between two copies of one bot each piece is symmetric about
    0: exchanging them turns it into its negative. A set whose seatings have no swap partner
    (``seatings: rotate`` with 3 or 4 seats) gives the deals every seating reached, averaged
    over the set (not symmetric then: see docs/statistics.md)."""
    index = {tuple(order): m for m, order in enumerate(seats)}

    def diff(m: int, k: int) -> float:
        order = seats[m]
        sa, sb = order.index(a), order.index(b)
        hand = hand_scores[m][k]
        la = lb = 0.0
        if luck is not None and k < len(luck[m]):
            la, lb = luck[m][k][sa], luck[m][k][sb]
        return (hand[sa] - la) - (hand[sb] - lb)

    partners = []
    for m, order in enumerate(seats):
        other = index.get(tuple(b if e == a else a if e == b else e for e in order))
        if other is None:
            common = min(len(h) for h in hand_scores)
            return [sum(diff(j, k) for j in range(len(seats))) / len(seats)
                    for k in range(common)]
        if m < other:
            partners.append((m, other, min(len(hand_scores[m]), len(hand_scores[other]))))
    out = []
    for k in range(max(reach for _, _, reach in partners)):
        reached = [(m, o) for m, o, reach in partners if k < reach]
        out.append(sum(diff(m, k) + diff(o, k) for m, o in reached) / (2 * len(reached)))
    return out


class Evidence:
    """Paired deal differences between entrants (by index), fed one finished duplicate set at a
    time, in schedule order. ``bound``: the points of one hand (the variant's)."""

    def __init__(self, entrants: int, *, bound: float = HAND_POINTS) -> None:
        self.entrants = entrants
        self.bound = bound
        self._series: dict[tuple[int, int], _Series] = {}

    def add_set(self, seats: Sequence[Sequence[int]],
                hand_scores: Sequence[Sequence[Sequence[int]]],
                luck: Sequence[Sequence[Sequence[float]]] | None = None) -> dict[int, float]:
        """Adds one duplicate set: for each of its matches, the entrants by seat, the points of
        every hand by seat (the record's ``hands[i].scores``) and, when known, the luck of the
        stock flips of every hand by seat (``hands[i].luck``; without it adjusted = raw).
        Returns each member's adjusted points over the deals counted.

        :raises ValueError: if the matches do not seat the same entrants.
        """
        if not seats:
            return {}
        members = sorted(seats[0])
        if any(sorted(s) != members for s in seats):
            raise ValueError(f"the matches of a set seat different entrants: {list(seats)}")
        common = min(len(h) for h in hand_scores)
        # points[e][k], adjusted[e][k]: entrant e's points in deal k, averaged over the seatings
        points = {e: [0.0] * common for e in members}
        adjusted = {e: [0.0] * common for e in members}
        for m, (order, hands) in enumerate(zip(seats, hand_scores, strict=True)):
            for k in range(common):
                for seat, e in enumerate(order):
                    points[e][k] += hands[k][seat] / len(seats)
                    flips = luck[m][k][seat] if luck is not None and k < len(luck[m]) else 0.0
                    adjusted[e][k] += (hands[k][seat] - flips) / len(seats)
        for a, b in itertools.combinations(members, 2):
            s = self._series.setdefault((a, b), _Series())
            s.sets += 1
            for k in range(common):
                s.raw.append(points[a][k] - points[b][k])
                d = adjusted[a][k] - adjusted[b][k]
                s.total += d
                s.squares += d * d
            s.pieces.append(deal_pieces(a, b, seats, hand_scores, luck))
        return {e: sum(adjusted[e]) for e in members}

    def sets(self, a: int, b: int) -> int:
        """Duplicate sets ``a`` and ``b`` shared."""
        s = self._series.get((min(a, b), max(a, b)))
        return s.sets if s else 0

    def test(self, a: int, b: int, margin: float) -> PairTest | None:
        """The pair's test sized for ``margin`` (oriented lower index minus higher), extended
        to every piece so far."""
        s = self._series.get((min(a, b), max(a, b)))
        if s is None:
            return None
        t = s.tests.setdefault(margin, PairTest(margin))
        for xs in s.pieces[t.sets:]:
            t.add_set(xs)
        return t

    def interval(self, a: int, b: int, *, alpha: float, margin: float = 0.0) -> Interval:
        """The confidence sequence on ``a - b`` (adjusted points per hand) at level ``alpha``
        for this one pair (:meth:`PairTest.interval`), its ``diff`` the mean piece."""
        t = self.test(a, b, margin)
        s = self._series.get((min(a, b), max(a, b)))
        if t is None or s is None or not t.n:
            return Interval(None, -math.inf, math.inf, s.sets if s else 0, 0)
        low, high = t.interval(alpha)
        mean = t.total / t.n
        if a > b:
            mean, low, high = -mean, -high, -low
        return Interval(mean + 0.0, low, high, s.sets, t.n)

    def raw_diff(self, a: int, b: int) -> float | None:
        """The raw mean difference ``a - b`` per hand."""
        s = self._series.get((min(a, b), max(a, b)))
        if s is None or not s.raw:
            return None
        mean = sum(s.raw) / len(s.raw)
        return (-mean if a > b else mean) + 0.0

    def evidence_for(self, a: int, b: int, margin: float) -> float:
        """The log of the evidence for ``a`` stronger than ``b``: the smaller of what the two
        tests have shown at once (:attr:`PairTest.peak_up`), at most ever."""
        t = self.test(a, b, margin)
        if t is None:
            return 0.0
        return t.peak_up if a < b else t.peak_down

    def llr(self, a: int, b: int, margin: float) -> float:
        """The log-likelihood ratio for ``a - b = margin`` against ``a - b = 0`` (adjusted
        differences)."""
        s = self._series.get((min(a, b), max(a, b)))
        if s is None:
            return 0.0
        return llr(len(s.raw), s.total if a < b else -s.total, s.squares, margin)


def pair_alpha(stop: Stop, entrants: int, a: int = 0, b: int = 1, *,
               growing: bool = False) -> float:
    """The level of the pair ``(a, b)``: ``alpha`` split over every pair of the field
    (``growing``: a ladder's field, whose later entrants may be added between runs)."""
    if growing:
        j = max(a, b, 1)
        return stop.alpha / (j * j * (j + 1))
    return stop.alpha / max(1, math.comb(entrants, 2))


def decide(evidence: Evidence, a: int, b: int, stop: Stop, alpha: float) -> tuple[str, Interval,
                                                                                  float | None]:
    """The verdict on ``a`` over ``b`` (``stronger``, ``tie``, ``open``, or ``weaker``: ``b``
    is decidedly stronger), the confidence sequence, and the ratio with a margin."""
    iv = evidence.interval(a, b, alpha=alpha, margin=stop.margin)
    t = evidence.test(a, b, stop.margin)
    side = 0 if t is None else t.passed(alpha)
    if a > b:
        side = -side
    up = evidence.llr(a, b, stop.margin) if stop.margin > 0 else None
    if side:
        return ("stronger" if side > 0 else "weaker"), iv, up
    if (stop.margin > 0 and iv.deals >= MIN_DEALS and up is not None
            and up <= math.log(alpha) and evidence.llr(b, a, stop.margin) <= math.log(alpha)):
        return "tie", iv, up
    return "open", iv, up


class Judge:
    """Verdicts for one tournament's evidence at ``stop``'s levels."""

    def __init__(self, evidence: Evidence, stop: Stop, *, growing: bool = False) -> None:
        self.evidence, self.stop, self.growing = evidence, stop, growing

    def alpha(self, a: int, b: int) -> float:
        """The level of the pair ``(a, b)``."""
        return pair_alpha(self.stop, self.evidence.entrants, a, b, growing=self.growing)

    def decide(self, a: int, b: int) -> tuple[str, Interval, float | None]:
        """See :func:`decide`."""
        return decide(self.evidence, a, b, self.stop, self.alpha(a, b))

    def reorder(self, order: Sequence[int]) -> list[int]:
        """``order`` (best first), with every pair whose verdict says the lower is decidedly
        stronger moved above it, until none is left: a verdict never contradicts the order
        (every pair of a field of up to :data:`FULL_REORDER` entrants is checked, else the
        adjacent pairs)."""
        result = list(order)
        full = len(result) <= FULL_REORDER
        for _ in range(len(result) * len(result)):
            swapped = False
            for i in range(len(result)):
                for j in range(i + 1, len(result) if full else min(i + 2, len(result))):
                    if self.decide(result[i], result[j])[0] == "weaker":
                        result.insert(i, result.pop(j))
                        swapped = True
                        break
                if swapped:
                    break
            if not swapped:
                break
        return result

    def judge(self, pairs: Sequence[tuple[int, int]], names: Sequence[str]) -> list[Pair]:
        """The verdict on each ``(upper, lower)`` pair of entrant indices."""
        out = []
        for upper, lower in pairs:
            word, iv, ratio = self.decide(upper, lower)
            if word == "weaker":  # only for pairs asked out of order
                word = "open"
            known = iv.diff is not None
            margin = self.stop.margin
            out.append(Pair(names[upper], names[lower], word, iv.diff,
                            iv.low if known else None, iv.high if known else None, iv.sets,
                            self.evidence.raw_diff(upper, lower), ratio,
                            self.evidence.evidence_for(upper, lower, margin)))
        return out


def reorder(order: Sequence[int], evidence: Evidence, stop: Stop) -> list[int]:
    """:meth:`Judge.reorder` at the levels of a fixed field."""
    return Judge(evidence, stop).reorder(order)


def judge(pairs: Sequence[tuple[int, int]], names: Sequence[str], evidence: Evidence,
          stop: Stop) -> list[Pair]:
    """:meth:`Judge.judge` at the levels of a fixed field."""
    return Judge(evidence, stop).judge(pairs, names)


def adjacent(order: Sequence[int]) -> list[tuple[int, int]]:
    """The adjacent pairs of an order, best first."""
    return list(itertools.pairwise(order))


TYPICAL_SD = 10.0
"""The per-deal standard deviation of a pair's piece the forecast assumes: about the measured
ones, adjusted for luck, 6.9 to 10.4 over the three real pairs of random, greedy and mc
(variances 47 to 108 a deal: docs/statistics.md, *Seatings*)."""
LEARNING = 1.4
"""The forecast's allowance for bets sized from the data so far, against a test told the true
difference: a choice (a planning figure, not a measured one)."""


def _deals_for(diff: float, level: float) -> float:
    """Deals the test needs, about, for a pair ``diff`` points a hand apart."""
    return LEARNING * math.log(1 / level) / (diff * diff / (2 * TYPICAL_SD ** 2))


def forecast(stop: Stop, *, entrants: int, players: int, set_size: int, target: int,
             growing: bool = False, cap: int | None = None) -> str:
    """Before play: about how many matches a pair needs to be decided, for pairs 5 and 15 points
    a hand apart (with :data:`TYPICAL_SD` and about as many deals a set as a match has hands),
    with a margin the matches to a ``tie`` between equals, and with a cap (``max_matches``)
    the closest pair it can decide: a planning figure, not a promise."""
    a = pair_alpha(stop, entrants, entrants - 2, entrants - 1, growing=growing)
    hands = max(1.0, target / (HAND_POINTS / players * 1.35))

    def matches(deals: float) -> int:
        return max(1, math.ceil(deals / hands)) * set_size

    parts = [f"a pair 15 points a hand apart takes about {matches(_deals_for(15, a))} matches, "
             f"5 apart about {matches(_deals_for(5, a))}"]
    if stop.margin > 0:
        tie = expected_deals(0.0, stop.margin, TYPICAL_SD, a / 2, a)
        parts.append(f"equals tie (within {stop.margin:g}) in about {matches(tie)}")
    if cap is not None:
        deals = cap / set_size * hands
        closest = TYPICAL_SD * math.sqrt(2 * LEARNING * math.log(1 / a) / max(deals, 1.0))
        parts.append(f"the cap of {cap} matches decides a pair at least about {closest:.0f} "
                     f"points a hand apart; a closer one may end open")
    return "; ".join(parts) + f" (if a deal's difference varies by {TYPICAL_SD:g} points)"


# -- words ------------------------------------------------------------------------------------


def interval_ends(low: float, high: float) -> str:
    """An interval's two ends as a verdict prints them, rounded outward (the interval printed
    holds the one computed): ``+0.1 to +21.0`` for 0.14 and 20.91; an end that would read
    ``0.0`` keeps two significant digits and its side, never ``+0.0`` beside ``stronger``.

    >>> interval_ends(0.14, 20.91), interval_ends(0.07, 20.9), interval_ends(-2.04, -0.031)
    ('+0.1 to +21.0', '+0.07 to +20.9', '-2.1 to -0.031')
    """
    return f"{lower_end(low)} to {upper_end(high)}"


def lower_end(low: float) -> str:
    """An interval's lower end, rounded down (:func:`interval_ends`)."""
    return _outward(low, math.floor)


def upper_end(high: float) -> str:
    """An interval's upper end, rounded up (:func:`interval_ends`)."""
    return _outward(high, math.ceil)


def _outward(end: float, way: Callable[[float], float]) -> str:
    """``end`` to one decimal rounded ``way``, or with two significant digits where that
    would read ``0.0``."""
    tenths = way(round(end * 10, 9)) / 10
    if tenths == 0 and end != 0:
        return f"{end:+.2g}"
    return f"{tenths:+.1f}"
