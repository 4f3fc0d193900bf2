"""The fair-play audit: a bot that remembers between the seatings of a duplicate set is caught
by the numbers.

Every seating of a group plays the same deals. A bot that could carry anything from one seating
to the next (a channel the sandbox missed) can only gain in the seatings played *after* the
first: it has seen those deals. The order in which a group's seatings are played is drawn from
the deal secret (:func:`play_order`), so no bot can know whether it plays first, and for an
honest bot the first-played seating is a seating like any other: its points a hand there have
the same mean as in the later ones.

For every entrant and every finished set, the audit takes its points a hand in the later
seatings (averaged) minus those in the first-played one: values within ``±hand_total``, of mean
0 for an honest bot. :func:`referee.tournament.stopping.interval`, the anytime-valid interval of
``stop``, at level ``alpha / entrants`` (so that, over all entrants, an honest tournament flags
someone with probability at most ``alpha``), bounds their mean; an entrant is *flagged* when the
whole interval lies above 0: its later seatings are better beyond chance.

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

from referee.match.job import MatchSpec
from referee.tournament.stopping import interval


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


@dataclass(frozen=True)
class Verdict:
    """One entrant's audit."""

    later_minus_first: float | None
    """Mean over its sets of (points a hand in the later seatings) - (in the first-played);
    ``None`` before any finished set."""
    low: float
    high: float
    flag: bool
    sets: int

    def to_json(self) -> dict[str, Any]:
        """As ``standings.json`` holds it (floats to 4 places, an unbounded side ``None``)."""

        def num(x: float | None) -> float | None:
            return None if x is None or not math.isfinite(x) else round(x, 4)

        return {"later_minus_first": num(self.later_minus_first), "low": num(self.low),
                "high": num(self.high), "flag": self.flag, "sets": self.sets}

    def describe(self, name: str) -> str:
        """One line for the terminal."""
        return (f"fair-play audit: {name} does better in the later seatings of a set than in "
                f"the first-played one by {self.later_minus_first:+.1f} points a hand (interval "
                f"{self.low:+.1f} to {self.high:+.1f}, {self.sets} sets): beyond chance, look "
                f"at its records")


class Audit:
    """Gathers the finished matches of a tournament (any order) and judges each entrant."""

    def __init__(self, names: Sequence[str], *, bound: float, per_set: int) -> None:
        self.names = list(names)
        self.bound = bound
        self.per_set = per_set
        self._sets: dict[tuple[int, int], list[tuple[bytes, tuple[int, ...], list[float]]]] = {}

    def add(self, spec: MatchSpec, hand_scores: Sequence[Sequence[int]]) -> None:
        """One finished match: its seats and every hand's points by seat."""
        if not hand_scores:
            return
        per_hand = [sum(h[seat] for h in hand_scores) / len(hand_scores)
                    for seat in range(len(spec.seats))]
        seatings = self._sets.setdefault(spec.deals_key, [])
        key = play_key(spec)
        if all(k != key for k, _, _ in seatings):
            seatings.append((key, spec.seats, per_hand))

    def values(self, entrant: int) -> list[float]:
        """The entrant's later-minus-first value of every finished set it played, in schedule
        order (round, group): the interval depends on the order of its values, and the order
        sets finish in depends on the concurrency."""
        out = []
        for _, seatings in sorted(self._sets.items()):
            if len(seatings) < max(2, self.per_set) or entrant not in seatings[0][1]:
                continue
            ordered = sorted(seatings)
            points = [pts[seats.index(entrant)] for _, seats, pts in ordered]
            out.append(math.fsum(points[1:]) / (len(points) - 1) - points[0])
        return out

    def result(self, *, alpha: float) -> dict[str, Verdict]:
        """Every entrant's verdict at ``alpha`` over the whole tournament."""
        level = alpha / max(1, len(self.names))
        out = {}
        for i, name in enumerate(self.names):
            iv = interval(self.values(i), alpha=level, bound=self.bound)
            out[name] = Verdict(iv.diff, iv.low, iv.high, iv.diff is not None and iv.low > 0,
                                iv.sets)
        return out
