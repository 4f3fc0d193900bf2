"""Which matches a league plays next (:class:`Planner`): the missing seatings of a set an
earlier run left under way, else the :class:`~referee.league.matchmaker.Matchmaker`'s next
duplicate set (a new version's placement first), each set's seatings in an order drawn from the
deal secret (the audit), within the season's budget (``budget:``: a new version's placement
always plays; the rest at most ``daily`` matches a calendar day, and none once every neighbour
pair is settled).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from referee.bots.limits import SandboxMode
from referee.league.book import Book, Set
from referee.league.config import LeagueConfig
from referee.league.journal import LeagueFolder
from referee.league.matchmaker import Matchmaker
from referee.league.versions import Versions
from referee.match.job import MatchJob, MatchSpec
from referee.tournament.audit import in_play_order
from referee.tournament.startup import match_job

__all__ = ["IDLE_S", "Planner"]

IDLE_S = 0.1
"""How often an idle league (fewer versions than seats, or resting) looks for news."""
SETTLED_S = 10.0
"""How often whether every neighbour pair is settled is worked out again (every pair's
verdict: a millisecond or two a hundred versions) while the field stays the same."""


class Planner:
    """The jobs of a league (:meth:`jobs`) over its ``book`` and ``versions``; ``mm`` chooses
    the sets; ``say``: a line for the organiser (the league rests, or plays again)."""

    def __init__(self, config: LeagueConfig, book: Book, versions: Versions, mm: Matchmaker,
                 *, folder: LeagueFolder, mode: SandboxMode, remote: bool,
                 stop: threading.Event, say: Callable[[str], None] = lambda line: None) -> None:
        self.config, self.book, self.versions, self.mm = config, book, versions, mm
        self.folder, self.mode, self.remote, self.stop, self.say = \
            folder, mode, remote, stop, say
        self.running = 0
        self.held: dict[str, tuple[Path, ...]] = {}
        """The snapshot copies each match under way runs from."""
        self.resting: str | None = None
        """Why the league plays only placement sets now (``None``: it plays)."""
        self._settled: tuple[float, int, bool] = (float("-inf"), -1, False)
        """When :meth:`Book.settled` was last asked, of how many versions, and its answer."""

    def jobs(self, between: Callable[[], None]) -> Iterator[MatchJob | None]:
        """Every set's jobs, chosen as slots free up, until ``stop`` or the cap; ``None``
        while nothing can be chosen but matches are running (a finished one asks again).
        ``between``: called before each choice (news, the page)."""
        while True:
            between()
            if self.stop.is_set() or self.capped():
                return
            specs = self.unfinished() or self.next_set()
            if specs:
                for spec in in_play_order(specs):
                    self.running += 1
                    yield self.job(spec)
            elif self.running:
                yield None
            else:
                self.stop.wait(IDLE_S)

    def capped(self) -> bool:
        """Whether ``max_matches`` are finished or under way."""
        cap = self.config.max_matches
        return cap is not None and self.book.done + self.running >= cap

    def unfinished(self) -> list[MatchSpec]:
        """The missing seatings of a set an earlier run left under way, where its members
        play now."""
        playable = self.versions.playable
        for group, s in self.book.sets.items():
            if not s.queued and all(n in playable for n in s.group):
                s.queued = True
                return [self.book.spec(group, s.group, k)
                        for k in range(1, len(self.book.order) + 1) if k not in s.done]
        return []

    def rest(self) -> str | None:
        """Why only placement sets play now (the budget), or ``None``."""
        budget = self.config.budget
        if budget.daily is not None and self.book.day == time.strftime("%Y-%m-%d") \
                and self.book.today >= budget.daily:
            return (f"the day's budget of {budget.daily:,} matches is spent (budget.daily): "
                    f"the league rests until midnight; new versions are placed meanwhile")
        if budget.rest and self._all_settled():
            return (f"every neighbour pair of the leaderboard is settled (decided, or within "
                    f"{budget.margin:g} points a hand: budget.margin): the league rests "
                    f"until a new version comes")
        return None

    def _all_settled(self) -> bool:
        """:meth:`Book.settled`, asked again every :data:`SETTLED_S` or when the field
        changes."""
        at, field, answer = self._settled
        now = time.monotonic()
        if now - at < SETTLED_S and field == len(self.mm):
            return answer
        answer = self.book.settled(self.config.budget.margin)
        self._settled = (now, len(self.mm), answer)
        return answer

    def next_set(self) -> list[MatchSpec]:
        """The matchmaker's next set (placement only while the league rests)."""
        resting = self.rest() if not self.mm.placing() else None
        if resting != self.resting:
            self.resting = resting
            self.say(resting or "the league plays again")
        if resting is not None:
            return []
        chosen = self.mm.next_set()
        if chosen is None:
            return []
        book = self.book
        group = book.next_group
        book.next_group += 1
        book.sets[group] = Set(chosen, queued=True)
        versions = self.versions
        for name in chosen:
            if name not in versions.first and name in versions.seen:
                versions.first[name] = time.time() - versions.seen[name]
                versions.events.append({"event": "first", "name": name,
                                        "seconds": round(versions.first[name], 3),
                                        "at": time.time()})
        return [book.spec(group, chosen, k) for k in range(1, len(book.order) + 1)]

    def job(self, spec: MatchSpec) -> MatchJob:
        """The job that plays ``spec`` (its versions' snapshots held while it runs)."""
        seats = tuple(self.book.names[i] for i in spec.seats)
        versions = self.versions
        self.held[spec.id] = versions.hold(seats)
        return match_job(self.config, spec, tuple(versions.playable[n] for n in seats),
                         self.mode, self.folder, snapshots=None if self.remote
                         else tuple(versions.digest.get(n) for n in seats))

    def finished(self, match_id: str) -> None:
        """A match ended (saved, or abandoned): its snapshots released."""
        self.running -= 1
        self.versions.release(self.held.pop(match_id, ()))

    def rated(self, names: list[str]) -> None:
        """A set was rated: its members' ratings told to the matchmaker."""
        rows = self.book.table.rows
        for name in names:
            row = rows.get(name)
            if row is not None:
                self.mm.update(name, row.rating.mu, row.rating.sigma)
