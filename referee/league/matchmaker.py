"""Who plays next in a league (pure: no I/O, no clock).

:class:`Matchmaker` hands out one duplicate set's entrants at a time (:meth:`Matchmaker.next_set`):
a newcomer's placement sets first, then any entrant owed a whole set by the fair-share floor,
else the most uncertain entrant against the neighbours a result teaches most about
(``docs/league.md``, section 5). 1,000 entrants and a million sets run in minutes
(``bench/league.py``), in memory that does not grow with the sets.

>>> mm = Matchmaker(players=2, placement=1)
>>> for name in ("a", "b", "c"):
...     mm.add(name, 25.0, 8.3)
>>> mm.next_set()
('a', 'b')
"""

from __future__ import annotations

import bisect
import heapq
import math
from collections import deque
from dataclasses import dataclass, field

__all__ = ["FLOOR", "Matchmaker"]

FLOOR = 1.0
"""Sets an entrant may be owed before it plays next, whatever teaches most."""
WINDOW = 6
"""Neighbours on each side in the rating order an opponent is chosen from."""
RECENT = 3
"""An entrant's last opponents, avoided while others are as good."""


@dataclass
class _Member:
    name: str
    mu: float
    sigma: float
    joined: float
    """The share clock (:attr:`Matchmaker.clock`) when it joined, plus the sets it played:
    ``clock - joined`` is what it is owed, in sets."""
    placement: int
    """Placement sets still to hand out."""
    placed: int = 0
    version: int = 0
    recent: deque[str] = field(default_factory=lambda: deque(maxlen=RECENT))


class Matchmaker:
    """The league's matchmaking over the entrants that may play now (:meth:`add`,
    :meth:`remove`), told each new rating (:meth:`update`)."""

    def __init__(self, *, players: int = 2, placement: int = 3, beta: float = 25.0 / 6) -> None:
        self.players, self.placement, self.beta = players, placement, beta
        self.members: dict[str, _Member] = {}
        self.clock = 0.0
        """Sets owed to an entrant active since the start: ``players / active`` for every set
        handed out."""
        self.sets = 0
        self._order: list[tuple[float, str]] = []  # (mu, name), sorted
        self._new: deque[str] = deque()  # entrants with placement sets left, oldest first
        self._owed: list[tuple[float, str]] = []  # (joined, name): the most owed first
        self._sigma: list[tuple[float, int, str]] = []  # (-sigma, version, name)

    def __len__(self) -> int:
        return len(self.members)

    def add(self, name: str, mu: float, sigma: float, *, placement: int | None = None) -> None:
        """Makes ``name`` playable (a new version, or one ready again after a restart:
        ``placement`` the sets of placement it has left; default: all of them)."""
        if name in self.members:
            return
        left = self.placement if placement is None else max(0, placement)
        m = _Member(name, mu, sigma, self.clock, left)
        self.members[name] = m
        bisect.insort(self._order, (mu, name))
        if left:
            self._new.append(name)
        heapq.heappush(self._owed, (m.joined, name))
        heapq.heappush(self._sigma, (-sigma, 0, name))

    def remove(self, name: str) -> None:
        """Takes ``name`` out of matchmaking (retired, or its folder gone); its history stays
        where it is kept (the table)."""
        m = self.members.pop(name, None)
        if m is None:
            return
        i = bisect.bisect_left(self._order, (m.mu, name))
        if i < len(self._order) and self._order[i] == (m.mu, name):
            del self._order[i]

    def update(self, name: str, mu: float, sigma: float) -> None:
        """A new rating for ``name`` (after a rated set)."""
        m = self.members.get(name)
        if m is None:
            return
        i = bisect.bisect_left(self._order, (m.mu, name))
        if i < len(self._order) and self._order[i] == (m.mu, name):
            del self._order[i]
        m.mu, m.sigma = mu, sigma
        m.version += 1
        bisect.insort(self._order, (mu, name))
        heapq.heappush(self._sigma, (-sigma, m.version, name))
        if len(self._sigma) > 4 * len(self.members) + 64:  # drop the stale entries
            self._sigma = [(-x.sigma, x.version, x.name) for x in self.members.values()]
            heapq.heapify(self._sigma)

    # -- choosing ----------------------------------------------------------------------------

    def next_set(self) -> tuple[str, ...] | None:
        """The entrants of the next duplicate set, the one it was chosen for first (``None``:
        fewer entrants than seats)."""
        if len(self.members) < self.players:
            return None
        placing = self._placing()
        if placing is not None:
            focal, targets = placing
            chosen = [focal]
            for target in targets:
                other = self._nearest(target, chosen)
                if other is not None:
                    chosen.append(other)
        else:  # those owed a set first, every seat; then where a set teaches most
            chosen = self._most_owed(self.players) or [self._most_uncertain()]
        while len(chosen) < self.players:
            chosen.append(self._teaching(chosen))
        self._handed(chosen)
        return tuple(chosen)

    def placing(self) -> bool:
        """Whether a new entrant has placement sets left (the next set is one of them)."""
        return any(m is not None and m.placement
                   for m in map(self.members.get, self._new))

    def owed(self, name: str) -> float:
        """Sets ``name`` is owed by the fair share (negative: ahead of it)."""
        return self.clock - self.members[name].joined

    def _placing(self) -> tuple[str, list[float]] | None:
        """A new entrant with placement sets left, and the ratings its opponents are sought
        near (``None``: none is left)."""
        while self._new:
            m = self.members.get(self._new.popleft())
            if m is None or not m.placement:
                continue
            k = m.placed
            m.placement -= 1
            m.placed += 1
            if m.placement:  # the newcomers take turns: each plays its first set soon
                self._new.append(m.name)
            # the k-th placement set: near mu, then mu + sigma, mu - sigma, mu + 2 sigma, ...
            z = (k + 1) // 2 * (1 if k % 2 else -1)
            return m.name, [m.mu + z * m.sigma + j * m.sigma for j in range(self.players - 1)]
        return None

    def _most_owed(self, most: int) -> list[str]:
        """Up to ``most`` entrants owed :data:`FLOOR` sets or more, the most owed first."""
        found: list[tuple[float, str]] = []
        while self._owed and len(found) < most:
            joined, name = heapq.heappop(self._owed)
            m = self.members.get(name)
            if m is None or m.joined != joined or any(name == n for _, n in found):
                continue  # stale
            if self.clock - joined < FLOOR:
                heapq.heappush(self._owed, (joined, name))
                break
            found.append((joined, name))
        for item in found:
            heapq.heappush(self._owed, item)
        return [name for _, name in found]

    def _most_uncertain(self) -> str:
        while True:
            _, version, name = self._sigma[0]
            m = self.members.get(name)
            if m is None or m.version != version:
                heapq.heappop(self._sigma)
                continue
            return name

    def _nearest(self, mu: float, taken: list[str]) -> str | None:
        """The entrant rated nearest ``mu`` not in ``taken``, the least uncertain of the few
        nearest (an established opponent places a newcomer best)."""
        i = bisect.bisect_left(self._order, (mu, ""))
        lo, hi = max(0, i - WINDOW), min(len(self._order), i + WINDOW)
        near = [(abs(m - mu), name) for m, name in self._order[lo:hi] if name not in taken]
        if not near:
            return None
        near.sort()
        best = near[:3]
        return min(best, key=lambda x: (self.members[x[1]].sigma, x[0]))[1]

    def _teaching(self, chosen: list[str]) -> str:
        """The opponent for ``chosen`` whose result is least foreseeable and most uncertain:
        TrueSkill's quality of the pair times its variance, among the first one's neighbours
        in the rating order (its last opponents weighed down)."""
        first = self.members[chosen[0]]
        i = bisect.bisect_left(self._order, (first.mu, first.name))
        lo, hi = max(0, i - WINDOW), min(len(self._order), i + WINDOW + 1)
        best, best_value = None, -math.inf
        for mu, name in self._order[lo:hi]:
            if name in chosen:
                continue
            m = self.members[name]
            spread = 2 * self.beta ** 2 + first.sigma ** 2 + m.sigma ** 2
            quality = math.sqrt(2 * self.beta ** 2 / spread) * \
                math.exp(-(first.mu - mu) ** 2 / (2 * spread))
            value = quality * (first.sigma ** 2 + m.sigma ** 2)
            if name in first.recent:
                value *= 0.5
            if value > best_value:
                best, best_value = name, value
        if best is None:  # every neighbour taken: anyone not seated
            best = next(n for n in self.members if n not in chosen)
        return best

    def _handed(self, chosen: list[str]) -> None:
        """Books one set of ``chosen``: their seats paid, the share clock advanced."""
        self.sets += 1
        self.clock += self.players / len(self.members)
        for name in chosen:
            m = self.members[name]
            m.joined += 1
            heapq.heappush(self._owed, (m.joined, name))
            for other in chosen:
                if other != name:
                    m.recent.append(other)
        if len(self._owed) > 4 * len(self.members) + 64:
            self._owed = [(m.joined, m.name) for m in self.members.values()]
            heapq.heapify(self._owed)
