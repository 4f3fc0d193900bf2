"""The fair-play audit: a bot that remembers between the seatings of a duplicate set is caught
by the numbers.

Every seating of a group plays the same deals. A bot that could carry anything from one seating
to the next (a channel the sandbox missed) can only gain in the seatings played *after* the
first: it has seen those deals. The order in which a group's seatings are played is drawn from
the deal secret (:func:`play_order`), so no bot can know whether it plays first.

**The statistic.** For every entrant and every finished set, its points a deal (adjusted for
the luck of the stock flips, over the deals every seating reached) in the later seatings,
averaged, minus those in the first-played one: ``T``.

**The test is a randomization test.** For an honest entrant the outcome of each seating does not
depend on when it was played, and the first-played seating was drawn at random among the set's
``S``, so given the ``S`` outcomes ``T`` is exactly uniform over the ``S`` values it would take
with each seating first (``T_j``). The e-value ``exp(a T) / mean_j exp(a T_j)`` then has mean
exactly 1 whatever the bots, the deals or the tails: no bound, no normal approximation. Its bet
``a`` is sized from the entrant's earlier sets only; one product bets on a gain, one on a
loss (a bot feeding an accomplice loses in later seatings), and their average is the
entrant's evidence. Over ``n`` entrants each is judged at ``alpha / n``, so an honest field
flags someone with probability at most ``alpha``, at whatever look.

**Who is the cause.** In a set a cheat's gain is the others' loss (the points of a hand are
fixed), so its victims' ``T`` lean the other way in the sets they shared. Among the entrants
whose evidence passes, the one whose effect is most its own (the most evidence left without the
opponent whose sets weigh most: a victim's lean is gone without the cheat's sets, a cheat's
gain remains against the others) is flagged first, the others are then judged on the sets
without it, and so on (step-down). If even that one shows next to nothing without its main
opponent (:data:`OWN_EVIDENCE`), the two are flagged as a pair: either may be the cause. Where
every set holds the same entrants (two entrants at two seats, three at three), nothing can tell
the cheat from its victims: the pair (the group) is flagged, all named.

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
from referee.tournament.stopping import PairTest


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


def play_order(specs: Iterable[MatchSpec]) -> list[MatchSpec]:
    """:func:`in_play_order` as a list."""
    return list(in_play_order(specs))


AUDIT_SIZE = 10.0
"""The audit's bets are sized for a change of this many points a hand (the prior of the mean, and
half of it the least bet)..."""
AUDIT_SD = 15.0
"""... and a spread of this many (the prior of the variance of ``T``)..."""
AUDIT_PRIOR = 3.0
"""... each with the weight of this many sets."""
OWN_EVIDENCE = 1.0
"""The log evidence an entrant flagged alone must still show without the opponent whose sets
weigh most; below it, the pair is flagged (either may be the cause)."""


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


@dataclass
class AuditEvidence:
    """The two betting products of one entrant over its sets, in schedule order."""

    n: int = 0
    total: float = 0.0
    squares: float = 0.0
    up: float = 0.0
    down: float = 0.0
    peak: float = 0.0
    peak_side: int = 0

    def add(self, stat: SetStat) -> None:
        mean = self.total / self.n if self.n else 0.0
        ss = max(0.0, self.squares - self.n * mean * mean)
        var = (ss + AUDIT_PRIOR * AUDIT_SD ** 2) / (max(0, self.n - 1) + AUDIT_PRIOR)
        shift = AUDIT_PRIOR * AUDIT_SIZE
        a_up = max(AUDIT_SIZE / 2, (self.total + shift) / (self.n + AUDIT_PRIOR)) / var
        a_down = max(AUDIT_SIZE / 2, (shift - self.total) / (self.n + AUDIT_PRIOR)) / var
        t, alt = stat.observed, stat.alternatives
        self.up += a_up * t - _log_mean_exp([a_up * x for x in alt])
        self.down += -a_down * t - _log_mean_exp([-a_down * x for x in alt])
        self.n += 1
        self.total += t
        self.squares += t * t
        both = max(self.up, self.down)
        log_e = both + math.log1p(math.exp(min(self.up, self.down) - both)) - math.log(2)
        if log_e > self.peak:
            self.peak, self.peak_side = log_e, 1 if self.up >= self.down else -1


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
            return (f"fair-play audit: {name} and its one opponent differ between the later "
                    f"seatings of a set and the first-played one {size}: either may be the "
                    f"cause, look at their records")
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

    def result(self, *, alpha: float) -> dict[str, Verdict]:
        """Every entrant's verdict at ``alpha`` over the whole tournament (see the module's
        doc: each entrant at ``alpha / n``, judged step-down, each on its own effect)."""
        level = alpha / max(1, len(self.names))
        bar = math.log(1 / level)
        stats = {i: self.entrant_stats(i) for i in range(len(self.names))}
        flagged: dict[int, str] = {}
        while True:
            kept = {i: [st for st in stats[i] if not flagged.keys() & set(st.members)]
                    for i in range(len(self.names)) if i not in flagged}
            full = {i: _evidence_of(sts) for i, sts in kept.items()}
            passed = [i for i in full if full[i].peak >= bar]
            if not passed:
                break
            own = {i: _own_evidence(i, kept[i]) for i in passed}
            best = max(passed, key=lambda i: (own[i][0].peak, full[i].peak))
            robust, alone, strongest = own[best]
            if not alone:  # every set it played holds the same others: none can be told apart
                members = {m for st in kept[best] for m in st.members}
                for m in members:
                    flagged[m] = "the pair differs" if len(members) == 2 else "the group differs"
                continue
            if robust.peak < OWN_EVIDENCE:  # against one opponent only: either may be the cause
                flagged[best] = flagged[strongest] = "the pair differs"
                continue
            flagged[best] = "gains later" if full[best].peak_side > 0 else "loses later"
        out = {}
        for i, name in enumerate(self.names):
            values = [st.observed for st in stats[i]]
            low, high = _about(values, level)
            out[name] = Verdict(math.fsum(values) / len(values) if values else None, low, high,
                                i in flagged, len(values), _evidence_of(stats[i]).peak,
                                flagged.get(i, ""))
        return out


def _own_evidence(entrant: int, stats: Sequence[SetStat]) -> tuple[AuditEvidence, bool, int]:
    """An entrant's evidence of an effect of its own: its evidence over its sets without the
    opponent whose sets weigh most (a victim's later seatings lean the other way only in the
    sets it shared with the cheat: without them, nothing is left; a cheat's effect is there
    against the others too), whether it had two opponents to tell apart (if every set holds
    the same others: its evidence over all its sets and ``False``), and that opponent."""
    opponents = sorted({m for st in stats for m in st.members} - {entrant})
    splits = {o: [st for st in stats if o not in st.members] for o in opponents}
    if len(opponents) < 2 or not all(splits.values()):
        return _evidence_of(stats), False, opponents[0] if opponents else entrant
    parts = {o: _evidence_of(part) for o, part in splits.items()}
    strongest = min(parts, key=lambda o: parts[o].peak)
    return parts[strongest], True, strongest


def _evidence_of(stats: Sequence[SetStat]) -> AuditEvidence:
    ev = AuditEvidence()
    for st in stats:
        ev.add(st)
    return ev


def _about(values: Sequence[float], level: float) -> tuple[float, float]:
    """A normal confidence sequence on the mean of ``values`` (the module's pair test's, its
    bets sized for :data:`AUDIT_SIZE`): where the effect about lies, for reading."""
    if not values:
        return -math.inf, math.inf
    t = PairTest(AUDIT_SIZE)
    t.add(values)
    return t.interval(level)
