"""Tournament formats: which groups play next, given the results so far.

Pure code, no I/O. A :class:`Format` plans one *round* at a time from a :class:`State` (what the
rounds before it produced: the order, the ratings, the pairs ``stop`` has not decided yet), like
fastchess's scheduler hands out the next jobs given the results so far. Every group of a round
plays a full duplicate set (every seating of the same deals). Round ``r`` depends only on the
results of rounds before it, so the schedule is deterministic, resumable, and the same at any
concurrency or on any runner.

* :class:`RoundRobin`: every group of ``players`` entrants, every round;
* :class:`Gauntlet`: every group of one candidate and ``players - 1`` of the others;
* :class:`Ladder`: each active entrant seeds one group of opponents drawn near its rating.

:func:`plan_round` applies what all formats share: ``stop``'s elimination (a group with no open
pair inside is not played), the caps (``rounds``, ``max_matches``), and the match specs.

>>> specs = plan_round(RoundRobin(4, 3), State.initial(4, 1), players=3, seatings="all",
...                    seed=1, secret=bytes(32), rounds=1)
>>> len(specs), specs[0].id, specs[0].seed
(24, 'r1-g001-s01', '1:1:1')
"""

from __future__ import annotations

import itertools
import math
import random
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from referee.match.job import MatchSpec
from referee.records.match_id import MatchId
from referee.tournament.schedule import seatings

FORMATS = ("round-robin", "gauntlet", "ladder")
LADDER_TRIES = 30
"""Draws a ladder makes for one group before it takes the nearest free opponents."""


@dataclass(frozen=True)
class State:
    """What the rounds before the one to plan produced."""

    entrants: int
    round: int
    """The round to plan, 1-based."""
    matches: int = 0
    """Matches played in the rounds before."""
    order: tuple[int, ...] = ()
    """Entrant indices, best first (the standings)."""
    mu: tuple[float, ...] = ()
    sigma: tuple[float, ...] = ()
    open: frozenset[tuple[int, int]] | None = None
    """Pairs ``(upper, lower)`` that ``stop`` must still decide (``None``: no ``stop``)."""
    last: frozenset[tuple[int, ...]] = field(default_factory=frozenset)
    """The groups (sorted) of the round before."""

    @classmethod
    def initial(cls, entrants: int, round_: int = 1) -> State:
        """Nothing played yet: configuration order, equal ratings."""
        return cls(entrants, round_, 0, tuple(range(entrants)), (25.0,) * entrants,
                   (25.0 / 3,) * entrants)


class Format(Protocol):
    """Plans the groups of each round."""

    name: str

    def groups(self, state: State) -> list[tuple[int, ...]]:
        """The groups of round ``state.round`` (each a duplicate set), in play order."""

    def group_ids(self) -> int:
        """How many digits group numbers need (at least 3)."""

    def per_round(self) -> int | None:
        """Groups in every round, if fixed in advance."""

    def questions(self, order: Sequence[int]) -> list[tuple[int, int]]:
        """The ``(upper, lower)`` pairs ``stop`` decides, for a standings ``order``."""


class RoundRobin:
    """Every group of ``players`` entrants (combinations, in configuration order), every round."""

    name = "round-robin"

    def __init__(self, entrants: int, players: int) -> None:
        self.all = list(itertools.combinations(range(entrants), players))

    def groups(self, state: State) -> list[tuple[int, ...]]:
        """See :meth:`Format.groups`."""
        return list(self.all)

    def group_ids(self) -> int:
        """See :meth:`Format.group_ids`."""
        return max(3, len(str(len(self.all))))

    def per_round(self) -> int | None:
        """See :meth:`Format.per_round`."""
        return len(self.all)

    def questions(self, order: Sequence[int]) -> list[tuple[int, int]]:
        """Adjacent pairs of the order."""
        return list(itertools.pairwise(order))


class Gauntlet(RoundRobin):
    """Every group of one candidate and ``players - 1`` of the other entrants (never two
    candidates); the candidate sits first in the group's own order.

    :raises ValueError: for no candidate, or too few other entrants to fill a table.
    """

    name = "gauntlet"

    def __init__(self, entrants: int, players: int, candidates: Sequence[int]) -> None:
        self.candidates = tuple(sorted(set(candidates)))
        if not self.candidates:
            raise ValueError("a gauntlet needs at least one candidate")
        self.others = tuple(i for i in range(entrants) if i not in self.candidates)
        if len(self.others) < players - 1:
            raise ValueError(f"a gauntlet of {players} players needs at least {players - 1} "
                             f"entrants that are not candidates, not {len(self.others)}")
        self.all = [(c, *rest) for c in self.candidates
                    for rest in itertools.combinations(self.others, players - 1)]

    def questions(self, order: Sequence[int]) -> list[tuple[int, int]]:
        """Each candidate against each of the others ("is it better than the old ones?"),
        upper first in ``order``: candidates never meet, so no pair of two is asked."""
        place = {e: i for i, e in enumerate(order)}
        pairs = [(c, o) if place[c] < place[o] else (o, c)
                 for c in self.candidates for o in self.others]
        return sorted(pairs, key=lambda p: (place[p[0]], place[p[1]]))


class Ladder:
    """Swiss-like rounds for many entrants: each active entrant (every entrant, or with ``stop``
    those in an open pair) seeds one group, most uncertain first; its opponents are drawn near it
    in rating order: ranks offset by a Cauchy draw of scale ``window`` (times the entrant's
    sigma over the median sigma, so a late entrant looks wide), heavy-tailed so that leaders
    still meet the field. No group repeats within a round or from the round before. With
    ``stop``, an entrant's first opponent is its neighbour in an open pair."""

    name = "ladder"

    def __init__(self, entrants: int, players: int, *, seed: int | str,
                 window: float = 1.5) -> None:
        self.entrants, self.players, self.seed, self.window = entrants, players, seed, window

    def group_ids(self) -> int:
        """See :meth:`Format.group_ids`."""
        return max(3, len(str(self.entrants)))

    def per_round(self) -> int | None:
        """See :meth:`Format.per_round`: every entrant seeds one group (without ``stop``)."""
        return self.entrants

    def questions(self, order: Sequence[int]) -> list[tuple[int, int]]:
        """Adjacent pairs of the order."""
        return list(itertools.pairwise(order))

    def groups(self, state: State) -> list[tuple[int, ...]]:
        """See :meth:`Format.groups`."""
        n, p = state.entrants, self.players
        rng = random.Random(f"{self.seed}:ladder:{state.round}")
        by_rating = sorted(range(n), key=lambda e: (-state.mu[e], e))
        place = {e: i for i, e in enumerate(by_rating)}
        partners: dict[int, list[int]] = {}
        if state.open is not None:
            for a, b in sorted(state.open):
                partners.setdefault(a, []).append(b)
                partners.setdefault(b, []).append(a)
            active = sorted(partners)
        else:
            active = list(range(n))
        typical = statistics.median(state.sigma) or 1.0
        seeding = sorted(active, key=lambda e: (-round(state.sigma[e], 9), place[e], e))
        taken: set[tuple[int, ...]] = set(state.last)
        out: list[tuple[int, ...]] = []
        for e in seeding:
            scale = self.window * max(1.0, state.sigma[e] / typical)
            first = partners.get(e, [])
            fixed = [first[state.round % len(first)]] if first else []
            group = None
            for _ in range(LADDER_TRIES):
                members = [e, *fixed]
                while len(members) < p:
                    j = place[e] + round(scale * math.tan(math.pi * (rng.random() - 0.5)))
                    if 0 <= j < n and by_rating[j] not in members:
                        members.append(by_rating[j])
                key = tuple(sorted(members))
                if key not in taken:
                    group = key
                    break
            if group is None:  # the nearest free entrants in rating order
                near = sorted((e2 for e2 in range(n) if e2 != e and e2 not in fixed),
                              key=lambda e2: (abs(place[e2] - place[e]), place[e2]))
                group = tuple(sorted([e, *fixed, *near[:p - 1 - len(fixed)]]))
            taken.add(group)
            out.append(group)
        return out


def make_format(name: str, entrants: int, players: int, *, seed: int | str,
                candidates: Sequence[int] = ()) -> Format:
    """The format called ``name``.

    :raises ValueError: for an unknown name, or a gauntlet that cannot be built.
    """
    if name == "round-robin":
        return RoundRobin(entrants, players)
    if name == "gauntlet":
        return Gauntlet(entrants, players, candidates)
    if name == "ladder":
        return Ladder(entrants, players, seed=seed)
    raise ValueError(f"unknown format {name!r} (use {' or '.join(FORMATS)})")


def set_size(players: int, kind: str) -> int:
    """Matches in one duplicate set: every seating of a group."""
    return len(seatings(tuple(range(players)), kind))


def capped_total(fmt: Format, *, players: int, seatings: str, rounds: int | None,
                 max_matches: int | None) -> int | None:
    """Matches the tournament plays if nothing stops it early (``None``: unknown, or no cap)."""
    per = fmt.per_round()
    size = set_size(players, seatings)
    cap = None if max_matches is None else max_matches // size * size
    if per is None or rounds is None:
        return cap
    full = rounds * per * size
    return full if cap is None else min(full, cap)


def plan_round(fmt: Format, state: State, *, players: int, seatings: str, seed: int | str,
               secret: bytes, rounds: int | None = None, max_matches: int | None = None,
               planned: Sequence[tuple[int, tuple[int, ...]]] | None = None) -> list[MatchSpec]:
    """The matches of round ``state.round``: ``[]`` when the tournament is over (every round
    played, the match cap reached, or with ``stop`` no open pair left).

    With ``stop`` (``state.open`` set), a group with no open pair among its members is not
    played. Under ``max_matches`` a round ends with the last whole set that fits. ``secret``
    keys the deals (:meth:`referee.tournament.schedule.MatchSpec.deal`). ``planned``, the round's
    ``(group number, members)`` as an earlier run planned it, is played as it was.
    """
    r = state.round
    size = set_size(players, seatings)
    widths = (len(str(rounds)) if rounds is not None else 3, fmt.group_ids(),
              max(2, len(str(size))))
    if planned is not None:
        return _specs(planned, state, widths, seatings, seed, secret)
    if rounds is not None and r > rounds:
        return []
    if state.open is not None and not state.open:
        return []
    budget = None if max_matches is None else (max_matches - state.matches) // size
    chosen: list[tuple[int, tuple[int, ...]]] = []
    for g, group in enumerate(fmt.groups(state), 1):
        if state.open is not None and not any(a in group and b in group for a, b in state.open):
            continue
        if budget is not None and len(chosen) >= budget:
            break
        chosen.append((g, group))
    return _specs(chosen, state, widths, seatings, seed, secret)


def _specs(groups: Sequence[tuple[int, tuple[int, ...]]], state: State,
           widths: tuple[int, int, int], kind: str, seed: int | str,
           secret: bytes) -> list[MatchSpec]:
    r = state.round
    specs: list[MatchSpec] = []
    for g, group in groups:
        prefix = f"{seed}:{r}:{g}"
        for s, seats in enumerate(_seatings(group, kind), 1):
            specs.append(MatchSpec(str(MatchId(r, g, s, widths)),
                                   state.matches + len(specs), r, g, s, seats, prefix, secret))
    return specs


_seatings = seatings
