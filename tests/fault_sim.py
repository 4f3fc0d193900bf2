"""A simulated dispatcher for :class:`referee.tournament.admission.FaultLimit`, shared by
tests/test_fault_limit.py and bench/fault_limit.py: no processes, simulated time.

It keeps ``slots`` matches running out of the plan (``None``: wait), ends the one whose
simulated time is up first and feeds its faults to the limit, as ``play_jobs`` does: the next
match starts before the one that ended is saved, and again once it is (what waited on it).
Durations drawn from an exponential law make the next to end a uniform pick of those running.

:class:`Rescan` is the plan as it was before it kept track of what changed (every held set
decided again each time it is asked): the reference the plan must match answer for answer, and
the bench's figure before."""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from referee.match.job import MatchSpec
from referee.tournament import admission
from referee.tournament.admission import FaultLimit
from referee.tournament.audit import cut_sets

Item = tuple[MatchSpec, dict[int, str]]
Faults = Callable[[MatchSpec, dict[int, str]], list[dict[str, Any]]]
"""A match's faults, given who was benched in it (called once a match, as it ends)."""


@dataclass
class Run:
    makespan: float = 0.0
    idle: float = 0.0
    """Slot time idle while matches were left to start, a share of all slot time."""
    matches: int = 0
    cpu_ns: int = 0
    """This thread's CPU time in the limit's calls (the plan's answers and ``finished``)."""
    log: list[tuple[str, list[int]] | None] = field(default_factory=list)
    """The plan's answers in order: a match's id and who was benched, or ``None`` (wait)."""


def dispatch(limit: FaultLimit, todo: Iterator[Item | None], slots: int,
             lasts: Callable[[MatchSpec], float], faults: Faults) -> Run:
    """Plays every match ``todo`` gives (``limit.plan(...)``), ``slots`` at once, each lasting
    ``lasts(spec)`` (drawn as it starts)."""
    run = Run()
    running: list[tuple[float, int, MatchSpec, dict[int, str]]] = []
    now, ended = 0.0, False

    def top_up() -> None:
        nonlocal ended
        while not ended and len(running) < slots:
            t0 = time.thread_time_ns()
            try:
                item = next(todo)
            except StopIteration:
                ended = True
                return
            finally:
                run.cpu_ns += time.thread_time_ns() - t0
            run.log.append(None if item is None else (item[0].id, sorted(item[1])))
            if item is None:
                return
            run.matches += 1
            heapq.heappush(running, (now + lasts(item[0]), run.matches, *item))

    top_up()
    while running:
        end, _, spec, benched = heapq.heappop(running)
        if not ended:
            run.idle += (slots - len(running) - 1) * (end - now)
        now = end
        top_up()
        found = faults(spec, benched)
        t0 = time.thread_time_ns()
        limit.finished(spec, found)
        run.cpu_ns += time.thread_time_ns() - t0
        top_up()
    assert ended, "the schedule waits on no running match"
    run.makespan = now
    run.idle /= (now * slots) or 1
    return run


class Rescan(FaultLimit):
    """The plan deciding every held set again each time it is asked (as before it kept track
    of what changed)."""

    def plan(self, specs: Iterable[MatchSpec]) -> Iterator[Item | None]:
        sets = cut_sets(specs)
        held: list[list[MatchSpec]] = []
        ended = False
        while True:
            moved = False
            ahead = [0] * len(self.names)
            k = 0
            while k < len(held):
                benched = self._decide(held[k][0], ahead.__getitem__)
                if benched is None:
                    for i in held[k][0].seats:
                        ahead[i] += len(held[k])
                    k += 1
                    continue
                moved = True
                for spec in held.pop(k):
                    yield spec, self._admit(spec, benched)
            if not ended and len(held) < admission.LOOKAHEAD:
                members = next(sets, None)
                if members is None:
                    ended = True
                    continue
                benched = self._decide(members[0], ahead.__getitem__)
                if benched is None:
                    held.append(members)
                else:
                    for spec in members:
                        yield spec, self._admit(spec, benched)
                continue
            if ended and not held:
                return
            if not moved:
                yield None
