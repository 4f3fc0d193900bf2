"""Who the fair-play audit names: an entrant only on evidence about that entrant (pure, no I/O).

A cheat's gain in the later seatings is its opponents' loss in the same seatings: judged over
all its sets, a victim beside a large cheat would be accused.

**The rule.** Entrant ``i`` is *named* at level ``w_i alpha`` only once, for **every** other
entrant ``j``, its evidence over its sets *without* ``j`` has passed ``1 / (w_i alpha)``: with
at most one cheat in the field, an honest entrant is named with probability at most alpha
whatever the cheat's size (Ville; the shares ``w_i`` sum to at most 1). Where every set holds
the same entrants the field cannot be split, and a passed field test names the whole group.
Why, and the figures: docs/statistics.md.

>>> f = FieldAudit(lambda e: 1 / 3)
>>> f.add({0: SetStat((0, 1), 20.0, (20.0, -20.0)), 1: SetStat((0, 1), -20.0, (-20.0, 20.0))})
>>> f.named(0, 0.05), f.indivisible
(False, True)
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

__all__ = ["AUDIT_PRIOR", "AUDIT_SD", "AUDIT_SIZE", "AuditEvidence", "FieldAudit", "SetStat",
           "log_mean2"]

AUDIT_SIZE = 10.0
"""The audit's bets are sized for a change of this many points a hand (the prior of the mean, and
half of it the least bet: a choice)..."""
AUDIT_SD = 15.0
"""... and a spread of this many (the prior of the variance of ``T``: a choice)..."""
AUDIT_PRIOR = 3.0
"""... each with the weight of this many sets (a choice)."""


@dataclass(frozen=True)
class SetStat:
    """One entrant's ``T`` in one finished set, and the values it would take with each seating
    played first."""

    members: tuple[int, ...]
    observed: float
    alternatives: tuple[float, ...]


def _log_mean_exp(values: Sequence[float]) -> float:
    top = max(values)
    return top + math.log(math.fsum(math.exp(v - top) for v in values) / len(values))


def log_mean2(x: float, y: float) -> float:
    """``log((e^x + e^y) / 2)``: the log of the mean of two products."""
    top = max(x, y)
    return top + math.log1p(math.exp(min(x, y) - top)) - math.log(2)


@dataclass
class AuditEvidence:
    """The two betting products of one entrant over its sets, in schedule order: one bets on a
    gain in the later seatings, one on a loss; the evidence is their mean (its peak, at any
    look)."""

    n: int = 0
    total: float = 0.0
    squares: float = 0.0
    up: float = 0.0
    down: float = 0.0
    peak: float = 0.0
    peak_side: int = 0

    def factors(self, stat: SetStat) -> tuple[float, float]:
        """The log factors of the two products for one more set, bets sized from the sets so
        far only: ``exp(a T) / mean_j exp(a T_j)``, of mean exactly 1 for an honest entrant."""
        mean = self.total / self.n if self.n else 0.0
        ss = max(0.0, self.squares - self.n * mean * mean)
        var = (ss + AUDIT_PRIOR * AUDIT_SD ** 2) / (max(0, self.n - 1) + AUDIT_PRIOR)
        shift = AUDIT_PRIOR * AUDIT_SIZE
        a_up = max(AUDIT_SIZE / 2, (self.total + shift) / (self.n + AUDIT_PRIOR)) / var
        a_down = max(AUDIT_SIZE / 2, (shift - self.total) / (self.n + AUDIT_PRIOR)) / var
        t, alt = stat.observed, stat.alternatives
        return (a_up * t - _log_mean_exp([a_up * x for x in alt]),
                -a_down * t - _log_mean_exp([-a_down * x for x in alt]))

    def add(self, stat: SetStat) -> None:
        """One more set."""
        f_up, f_down = self.factors(stat)
        self.up += f_up
        self.down += f_down
        self.n += 1
        self.total += stat.observed
        self.squares += stat.observed ** 2
        log_e = log_mean2(self.up, self.down)
        if log_e > self.peak:
            self.peak, self.peak_side = log_e, 1 if self.up >= self.down else -1




@dataclass(slots=True)
class _Without:
    """An entrant's two products over its sets without one opponent, and their peak."""

    up: float
    down: float
    peak: float

    def add(self, f_up: float, f_down: float) -> None:
        self.up += f_up
        self.down += f_down
        self.peak = max(self.peak, log_mean2(self.up, self.down))


@dataclass(slots=True)
class _Entrant:
    evidence: AuditEvidence = field(default_factory=AuditEvidence)
    without: dict[int, _Without] = field(default_factory=dict)


CLOSED_MAX = 8
"""Fields of up to this many entrants are judged by closed testing (every subset's test kept:
``2^n`` of them); larger ones, and a league's growing field, by each entrant's evidence without
each other in turn at its share of ``alpha`` (a choice of cost, not a measured figure)."""


@dataclass(slots=True)
class _Subset:
    """The test of "every member of this subset is honest": the mean of its members' products
    over the sets held within it, and its peak."""

    logs: dict[int, tuple[float, float]]
    peak: float = 0.0

    def add(self, factors: Mapping[int, tuple[float, float]]) -> None:
        for e, (f_up, f_down) in factors.items():
            up, down = self.logs[e]
            self.logs[e] = (up + f_up, down + f_down)
        terms = [log_mean2(up, down) for up, down in self.logs.values()]
        top = max(terms)
        mean = top + math.log(math.fsum(math.exp(t - top) for t in terms) / len(terms))
        self.peak = max(self.peak, mean)


class FieldAudit:
    """The audit of a field fed one finished set at a time (each member's :class:`SetStat`),
    in schedule order. ``share(e)``: entrant ``e``'s share ``w_e`` of ``alpha`` (the shares
    summing to at most 1 over any field). ``closed``: a fixed field of this many entrants
    (numbered from 0), judged by closed testing if it has at most :data:`CLOSED_MAX`;
    otherwise (``None``, a league) memory grows with the pairs of entrants that met, never
    with the sets."""

    def __init__(self, share: Callable[[int], float], closed: int | None = None) -> None:
        self.share = share
        self.entrants: dict[int, _Entrant] = {}
        self.groups: set[frozenset[int]] = set()
        self.field_peak = 0.0
        """The most the field test has shown at any look (log)."""
        self.subsets: dict[frozenset[int], _Subset] = {}
        """Closed testing: every subset of two entrants or more, and its test."""
        if closed is not None and closed <= CLOSED_MAX:
            for size in range(2, closed + 1):
                for members in itertools.combinations(range(closed), size):
                    self.subsets[frozenset(members)] = _Subset(dict.fromkeys(members,
                                                                             (0.0, 0.0)))

    def add(self, stats: Mapping[int, SetStat]) -> None:
        """One finished set: each member's ``T`` and its alternatives."""
        if not stats:
            return
        members = set(stats)
        self.groups.add(frozenset(members))
        factors: dict[int, tuple[float, float]] = {}
        for e, stat in sorted(stats.items()):
            st = self.entrants.setdefault(e, _Entrant())
            for o in members - {e} - st.without.keys():  # met for the first time: until now,
                ev = st.evidence                      # its sets without o were all its sets
                st.without[o] = _Without(ev.up, ev.down, ev.peak)
            f_up, f_down = st.evidence.factors(stat)
            factors[e] = (f_up, f_down)
            for o, w in st.without.items():
                if o not in members:
                    w.add(f_up, f_down)
            st.evidence.add(stat)
        for subset, test in self.subsets.items():
            if members <= subset:
                test.add(factors)
        self.field_peak = max(self.field_peak, self.field_log())

    def field_log(self) -> float:
        """The log of the field test's wealth now."""
        arrived = [(self.share(e), st.evidence) for e, st in self.entrants.items()]
        rest = max(0.0, 1.0 - math.fsum(w for w, _ in arrived))
        terms = [math.log(w) + log_mean2(ev.up, ev.down) for w, ev in arrived if w > 0]
        if rest > 0:
            terms.append(math.log(rest))
        top = max(terms)
        return top + math.log(math.fsum(math.exp(t - top) for t in terms))

    @property
    def indivisible(self) -> bool:
        """Whether every set so far held the same entrants (nobody can be told apart)."""
        return len(self.groups) == 1

    def own(self, e: int, field_size: int) -> float:
        """The least evidence (log) entrant ``e`` has shown over its sets without any one other
        entrant of a field of ``field_size`` (at most ever, each): ``0`` before it met two."""
        st = self.entrants.get(e)
        if st is None or len(st.without) < 1:
            return 0.0
        least = min(w.peak for w in st.without.values())
        if len(st.without) < field_size - 1:  # someone it never met: without them, all its sets
            least = min(least, st.evidence.peak)
        return least

    def named(self, e: int, alpha: float, field_size: int | None = None) -> bool:
        """Whether ``e`` is named alone at ``alpha``: by closed testing, once every subset
        holding it has been rejected (each at ``alpha``: if two entrants or more are honest, an
        honest one is named only if the subset of all the honest ones is rejected, a true
        hypothesis); otherwise at its share of ``alpha`` on its evidence without each other."""
        if self.subsets:
            bar = math.log(1 / alpha)
            return all(t.peak >= bar for s, t in self.subsets.items() if e in s)
        size = len(self.entrants) if field_size is None else field_size
        return self.own(e, size) >= math.log(1 / (self.share(e) * alpha))

    def field_passed(self, alpha: float) -> bool:
        """Whether the field test has passed ``1 / alpha``: someone differs."""
        return self.field_peak >= math.log(1 / alpha)
