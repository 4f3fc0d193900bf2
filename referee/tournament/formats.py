"""Tournament formats: which groups play next, given the results so far. Pure, no I/O.

A :class:`Format` (:class:`RoundRobin`, :class:`Gauntlet`, :class:`Ladder`) plans one round at a
time from a :class:`State` (the order, the ratings, the pairs still open); round ``r`` depends
only on the rounds before it, so the schedule is deterministic and resumable. :func:`plan_round`
applies what all share: ``stop``'s elimination, the caps, the match specs. Guide:
docs/tournaments.md.

>>> specs = plan_round(RoundRobin(4, 3), State.initial(4, 1), players=3, seatings="all",
...                    seed=1, secret=bytes(32), rounds=1)
>>> len(specs), specs[0].id, specs[0].seed
(24, 'r1-g001-s01', '1:1:1')
"""

from __future__ import annotations

import heapq
import itertools
import math
import random
import statistics
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, TypeVar, overload

from referee.match.spec import MatchSpec
from referee.records.match_id import MatchId
from referee.tournament.schedule import seatings

LADDER_TRIES = 30
"""Draws a ladder makes for one group before it takes the nearest free opponents."""
WIDEN = 6
"""Entrants past the fewest-seated a balanced capped round robin tries before it takes the
first free group."""


class Combinations(Sequence[tuple[int, ...]]):
    """Every group of ``k`` of ``n`` entrant indices in lexicographic order, computed on
    demand (a round robin of 100 entrants in 3 seats has 161,700: none is stored).

    >>> c = Combinations(5, 3)
    >>> len(c), c[0], c[7], c.rank((1, 2, 4)), list(c) == list(itertools.combinations(range(5), 3))
    (10, (0, 1, 2), (1, 2, 4), 7, True)
    """

    def __init__(self, n: int, k: int) -> None:
        self.n, self.k = n, k
        self._len = math.comb(n, k)

    def __len__(self) -> int:
        return self._len

    def __iter__(self) -> Iterator[tuple[int, ...]]:
        return itertools.combinations(range(self.n), self.k)

    @overload
    def __getitem__(self, i: int) -> tuple[int, ...]: ...
    @overload
    def __getitem__(self, i: slice) -> list[tuple[int, ...]]: ...

    def __getitem__(self, i: int | slice) -> tuple[int, ...] | list[tuple[int, ...]]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self._len))]
        if i < 0:
            i += self._len
        if not 0 <= i < self._len:
            raise IndexError(i)
        out: list[int] = []
        x = 0
        for j in range(self.k):
            while True:
                c = math.comb(self.n - x - 1, self.k - j - 1)
                if i < c:
                    out.append(x)
                    x += 1
                    break
                i -= c
                x += 1
        return tuple(out)

    def rank(self, group: Sequence[int]) -> int:
        """The position of ``group`` (sorted members) in the order."""
        r, low = 0, 0
        for j, member in enumerate(group):
            for y in range(low, member):
                r += math.comb(self.n - y - 1, self.k - j - 1)
            low = member + 1
        return r


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


class Format:
    """Plans the groups of each round: a format's name becomes one of its subclasses once, when
    the configuration is read (:data:`FORMATS`); every way formats differ is a method or a class
    attribute here, so the rest of the code never asks which format it holds. A new format is
    one subclass and one line of :data:`FORMATS`."""

    name: ClassVar[str]
    """The configuration's ``format``."""
    seeded_by_results: ClassVar[bool] = False
    """Whether each round is drawn from the results so far (the ratings), so no round may be
    planned before the one before it is complete, the rounds as planned are logged for a resume
    to play them the same, and the round before's groups are avoided."""
    grows: ClassVar[bool] = False
    """Whether a resumed tournament may add entrants at the end (its questions then change)."""
    fixed_groups_per_entrant: ClassVar[bool] = False
    """Whether each entrant plays a fixed number of groups a round, however many entrants
    there are (what a huge plan is advised to use instead)."""
    needs_cap: ClassVar[bool] = False
    """Whether the configuration must cap it (``rounds`` or ``max_matches``)."""
    has_candidates: ClassVar[bool] = False
    """Whether it takes ``candidates``, and its verdicts are each candidate against the others."""

    @classmethod
    def build(cls, entrants: int, players: int, *, seed: int | str,
              candidates: Sequence[int] = ()) -> Format:
        """This format over ``entrants`` entrants in groups of ``players``.

        :raises ValueError: for a format that cannot be built so.
        """
        raise NotImplementedError

    def groups(self, state: State) -> Sequence[tuple[int, ...]]:
        """The groups of round ``state.round`` (each a duplicate set), in play order."""
        raise NotImplementedError

    def group_ids(self) -> int:
        """How many digits group numbers need (at least 3)."""
        raise NotImplementedError

    def per_round(self) -> int | None:
        """Groups in every round, if fixed in advance."""
        raise NotImplementedError

    def questions(self, order: Sequence[int]) -> list[tuple[int, int]]:
        """The ``(upper, lower)`` pairs ``stop`` decides, for a standings ``order``: adjacent
        pairs of the order."""
        return list(itertools.pairwise(order))


class RoundRobin(Format):
    """Every group of ``players`` entrants (combinations, in configuration order), every round."""

    name = "round-robin"

    @classmethod
    def build(cls, entrants: int, players: int, *, seed: int | str,
              candidates: Sequence[int] = ()) -> Format:
        """See :meth:`Format.build`."""
        return cls(entrants, players)

    def __init__(self, entrants: int, players: int) -> None:
        self.all: Sequence[tuple[int, ...]] = Combinations(entrants, players)

    def groups(self, state: State) -> Sequence[tuple[int, ...]]:
        """See :meth:`Format.groups`."""
        return self.all

    def group_ids(self) -> int:
        """See :meth:`Format.group_ids`."""
        return max(3, len(str(len(self.all))))

    def per_round(self) -> int | None:
        """See :meth:`Format.per_round`."""
        return len(self.all)


class Gauntlet(RoundRobin):
    """Every group of one candidate and ``players - 1`` of the other entrants (never two
    candidates); the candidate sits first in the group's own order.

    :raises ValueError: for no candidate, or too few other entrants to fill a table.
    """

    name = "gauntlet"
    has_candidates = True

    @classmethod
    def build(cls, entrants: int, players: int, *, seed: int | str,
              candidates: Sequence[int] = ()) -> Format:
        """See :meth:`Format.build`."""
        return cls(entrants, players, candidates)

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


class Ladder(Format):
    """Swiss-like rounds for many entrants: each active entrant (every entrant, or with ``stop``
    those in an open pair) seeds one group, most uncertain first; its opponents are drawn near it
    in rating order: ranks offset by a Cauchy draw of scale ``window`` (times the entrant's
    sigma over the median sigma, so a late entrant looks wide), heavy-tailed so that leaders
    still meet the field. No group repeats within a round or from the round before. With
    ``stop``, an entrant's first opponent is its neighbour in an open pair."""

    name = "ladder"
    seeded_by_results = grows = fixed_groups_per_entrant = needs_cap = True

    @classmethod
    def build(cls, entrants: int, players: int, *, seed: int | str,
              candidates: Sequence[int] = ()) -> Format:
        """See :meth:`Format.build`."""
        return cls(entrants, players, seed=seed)

    def __init__(self, entrants: int, players: int, *, seed: int | str,
                 window: float = 1.5) -> None:
        self.entrants, self.players, self.seed, self.window = entrants, players, seed, window

    def group_ids(self) -> int:
        """See :meth:`Format.group_ids`."""
        return max(3, len(str(self.entrants)))

    def per_round(self) -> int | None:
        """See :meth:`Format.per_round`: every entrant seeds one group (without ``stop``)."""
        return self.entrants

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


FORMATS: dict[str, type[Format]] = {f.name: f for f in (RoundRobin, Gauntlet, Ladder)}
"""Every format by its configuration name: the one place a name becomes a class."""


def format_named(name: str) -> type[Format]:
    """The format called ``name``.

    :raises ValueError: for an unknown name.
    """
    try:
        return FORMATS[name]
    except KeyError:
        raise ValueError(f"unknown format {name!r} (use {' or '.join(FORMATS)})") from None


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
               planned: Sequence[tuple[int, tuple[int, ...]]] | None = None) -> RoundSpecs:
    """The matches of round ``state.round``: empty when the tournament is over (every round
    played, the match cap reached, or with ``stop`` no open pair left). The matches are
    computed as they are read (:class:`RoundSpecs`): a round of a million takes no memory.

    With ``stop`` (``state.open`` set), a group with no open pair among its members is not
    played. Under ``max_matches`` a round ends with the last whole set that fits; a round robin
    cut short so plays a balanced choice of its groups (:func:`balanced_groups`: each entrant's
    number of groups within one of the others'). ``secret`` keys the deals
    (:meth:`referee.tournament.schedule.MatchSpec.deal`). ``planned``, the round's
    ``(group number, members)`` as an earlier run planned it, is played as it was.
    """
    r = state.round
    size = set_size(players, seatings)
    widths = (len(str(rounds)) if rounds is not None else 3, fmt.group_ids(),
              max(2, len(str(size))))
    if planned is not None:
        return RoundSpecs(planned, state, widths, seatings, seed, secret)
    if (rounds is not None and r > rounds) or (state.open is not None and not state.open):
        return RoundSpecs((), state, widths, seatings, seed, secret)
    budget = None if max_matches is None else max(0, (max_matches - state.matches) // size)
    groups = fmt.groups(state)
    chosen: Sequence[tuple[int, tuple[int, ...]]]
    if state.open is None and (budget is None or budget >= len(groups)):
        chosen = _Numbered(groups)
    elif state.open is None and isinstance(groups, Combinations):
        assert budget is not None
        chosen = [(groups.rank(g) + 1, g) for g in balanced_groups(
            groups.n, groups.k, budget, seed=f"{seed}:{r}")]
    else:
        chosen = []
        for g, group in enumerate(groups, 1):
            if state.open is not None and \
                    not any(a in group and b in group for a, b in state.open):
                continue
            if budget is not None and len(chosen) >= budget:
                break
            chosen.append((g, group))
    return RoundSpecs(chosen, state, widths, seatings, seed, secret)


def balanced_groups(n: int, k: int, count: int, *, seed: str) -> list[tuple[int, ...]]:
    """``count`` distinct groups of ``k`` of ``n`` entrants (sorted members) in which every
    entrant sits within one group of every other: each group takes the entrants that sit in
    the fewest so far, ties broken by a draw from ``seed`` (so partners vary), the next fewest
    when that group was taken already.

    >>> from collections import Counter
    >>> gs = balanced_groups(6, 3, 5, seed="x")
    >>> sorted(Counter(e for g in gs for e in g).values()), len(set(gs))
    ([2, 2, 2, 3, 3, 3], 5)
    """
    count = min(count, math.comb(n, k))
    rng = random.Random(f"{seed}:balanced")
    heap = [(0, rng.random(), e) for e in range(n)]
    heapq.heapify(heap)
    taken: set[tuple[int, ...]] = set()
    out: list[tuple[int, ...]] = []
    while len(out) < count:
        popped = [heapq.heappop(heap) for _ in range(k)]
        group = tuple(sorted(e for _, _, e in popped))
        while group in taken:  # widen: swap in the next fewest, one at a time
            if not heap or len(popped) > k + WIDEN:  # nearly every group taken: the first free
                popped += [heapq.heappop(heap) for _ in range(len(heap))]  # all re-counted
                group = next(g for g in itertools.combinations(range(n), k) if g not in taken)
                break
            popped.append(heapq.heappop(heap))
            for combo in itertools.combinations(popped, k):
                candidate = tuple(sorted(e for _, _, e in combo))
                if candidate not in taken:
                    group = candidate
                    break
        members = set(group)
        taken.add(group)
        out.append(group)
        for used, _, e in popped:
            heapq.heappush(heap, (used + (e in members), rng.random(), e))
    return out


class _Numbered(Sequence[tuple[int, tuple[int, ...]]]):
    """``(number, group)`` of every group of a sequence, numbered from 1, computed on demand."""

    def __init__(self, groups: Sequence[tuple[int, ...]]) -> None:
        self.groups = groups

    def __len__(self) -> int:
        return len(self.groups)

    def __iter__(self) -> Iterator[tuple[int, tuple[int, ...]]]:
        return enumerate(self.groups, 1)

    @overload
    def __getitem__(self, i: int) -> tuple[int, tuple[int, ...]]: ...
    @overload
    def __getitem__(self, i: slice) -> list[tuple[int, tuple[int, ...]]]: ...

    def __getitem__(self, i: int | slice) -> Any:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        i = i + len(self) if i < 0 else i
        return (i + 1, self.groups[i])


class RoundSpecs(Sequence[MatchSpec]):
    """The matches of one round, in play (and rating) order: every seating of each group,
    computed as they are read (iterating costs one spec at a time; indexing is allowed). Equal
    to a list of the same specs.
    """

    def __init__(self, groups: Sequence[tuple[int, tuple[int, ...]]], state: State,
                 widths: tuple[int, int, int], kind: str, seed: int | str,
                 secret: bytes) -> None:
        self.groups, self.state, self.widths = groups, state, widths
        self.kind, self.seed, self.secret = kind, seed, secret
        self.size = len(_seatings(tuple(range(len(groups[0][1]))), kind)) if groups else 0

    def __len__(self) -> int:
        return len(self.groups) * self.size

    def _spec(self, index: int, g: int, s: int, seats: tuple[int, ...]) -> MatchSpec:
        r = self.state.round
        return MatchSpec(str(MatchId(r, g, s, self.widths)), self.state.matches + index,
                         r, g, s, seats, f"{self.seed}:{r}:{g}", self.secret)

    def __iter__(self) -> Iterator[MatchSpec]:
        index = 0
        for g, group in self.groups:
            for s, seats in enumerate(_seatings(group, self.kind), 1):
                yield self._spec(index, g, s, seats)
                index += 1

    @overload
    def __getitem__(self, i: int) -> MatchSpec: ...
    @overload
    def __getitem__(self, i: slice) -> list[MatchSpec]: ...

    def __getitem__(self, i: int | slice) -> MatchSpec | list[MatchSpec]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        i = i + len(self) if i < 0 else i
        if not 0 <= i < len(self):
            raise IndexError(i)
        g, group = self.groups[i // self.size]
        s = i % self.size
        return self._spec(i, g, s + 1, _seatings(group, self.kind)[s])

    def __eq__(self, other: object) -> bool:
        if isinstance(other, RoundSpecs | list):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other,
                                                                            strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __add__(self, other: Sequence[MatchSpec]) -> list[MatchSpec]:
        return [*self, *other]

    def __radd__(self, other: Sequence[MatchSpec]) -> list[MatchSpec]:
        return [*other, *self]

    def __repr__(self) -> str:
        return f"RoundSpecs({len(self)} matches of round {self.state.round})"


_seatings = seatings


T = TypeVar("T")


class Prefix(Generic[T]):
    """The finished prefix of a schedule whose rounds are added as they are planned (the
    rounds before may still be in play): matches finish in any order, and :meth:`finish`
    hands each back once every match before it in the schedule has."""

    def __init__(self) -> None:
        self._rounds: deque[Iterator[MatchSpec]] = deque()  # added after the current one
        self._current: Iterator[MatchSpec] = iter(())
        self._waiting: dict[str, T] = {}  # finished, beyond the prefix: by match id
        self.next: MatchSpec | None = None
        """The first match of the schedule not finished yet (``None``: every match added)."""

    def add_round(self, specs: Iterable[MatchSpec]) -> None:
        """The next round's matches, in schedule order."""
        self._rounds.append(iter(specs))
        if self.next is None:
            self._advance()

    def finish(self, match_id: str, value: T) -> list[tuple[MatchSpec, T]]:
        """Match ``match_id`` of a round added finished with ``value``: the matches the prefix
        now reaches, in schedule order, each with its value."""
        self._waiting[match_id] = value
        out = []
        while self.next is not None and self.next.id in self._waiting:
            out.append((self.next, self._waiting.pop(self.next.id)))
            self._advance()
        return out

    def _advance(self) -> None:
        self.next = next(self._current, None)
        while self.next is None and self._rounds:
            self._current = self._rounds.popleft()
            self.next = next(self._current, None)
