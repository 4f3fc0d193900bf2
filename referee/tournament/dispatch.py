"""Dispatch: the tournament's policy over where matches run (:func:`play_jobs`).

A :class:`~referee.runners.local.Runner` is only *where*; this module decides which match may
start (never two that play the same deals at once), keeps the runner's slots full from a ready
queue keyed by deals (no scan of the waiting matches),
hands finished matches back in schedule order within what finished together, and says what an
error means.
"""

from __future__ import annotations

import contextlib
import heapq
import signal
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator

from referee.bots.process import BotCommandError
from referee.match.job import Done, MatchJob
from referee.match.play import MatchAborted
from referee.records.record import FaultDict
from referee.runners.local import CancelSignal, Failed, Faulted, Finished, Runner, RunnerError

__all__ = ["DoneCallback", "FaultCallback", "ReadyQueue", "TournamentError", "play_jobs",
           "stop_on_sigint"]

WAIT_S = 0.25
"""How long :func:`play_jobs` waits for an event before it looks at ``stop`` again."""


class TournamentError(RuntimeError):
    """A tournament that cannot go on (a bot command that cannot be started at all, or where
    matches run is gone: :class:`~referee.runners.local.RunnerError`)."""


DoneCallback = Callable[[MatchJob, Done], None]
FaultCallback = Callable[[MatchJob, FaultDict, str], None]
BatchCallback = Callable[[], None]
"""Called by :func:`play_jobs` as matches end and bots fault, and after each batch of finished
matches was handed to ``on_done`` (before any later match is saved: the journal syncs there)."""


class ReadyQueue:
    """The matches to start, taken lazily from ``jobs`` (schedule order, but for sets the fault
    limit holds back while later ones go ahead: a set's seatings together), never two of the same
    :attr:`~referee.match.job.MatchSpec.deals_key` at once: a match whose deals are in play
    waits in its key's queue, and the key becomes ready again (ordered by its first waiting
    match's place in the schedule) when the match in play ends. Every step is O(log n).

    ``jobs`` may yield ``None``: nothing later may start before a match ends (who sits in it
    depends on earlier results, :class:`~referee.tournament.admission.FaultLimit`); the queue
    asks again at its next :meth:`take` and says so meanwhile (:attr:`held`)."""

    def __init__(self, jobs: Iterable[MatchJob | None]) -> None:
        self._todo: Iterator[MatchJob | None] = iter(jobs)
        self.held = False
        """Whether ``jobs`` last said that nothing may start yet (rather than ended)."""
        self._ahead: MatchJob | None = None  # taken from ``_todo`` to look at, not yet handed
        self._waiting: dict[tuple[int, int], deque[MatchJob]] = {}
        self._ready: list[tuple[int, tuple[int, int]]] = []  # (schedule index, deals key)
        self._busy: set[tuple[int, int]] = set()

    def take(self) -> MatchJob | None:
        """The next match that may start (its deals now in play), or ``None``."""
        while self._ready:
            _, key = heapq.heappop(self._ready)
            queue = self._waiting.get(key)
            if not queue or key in self._busy:  # taken with its set meanwhile
                continue
            waited = queue.popleft()
            if not queue:
                del self._waiting[key]
            self._busy.add(key)
            return waited
        while (job := self._pull()) is not None:
            key = job.spec.deals_key
            if key in self._busy:
                self._waiting.setdefault(key, deque()).append(job)
                continue
            self._busy.add(key)
            return job
        return None

    def take_set(self) -> list[MatchJob]:
        """The next match that may start and every other match of its set still to play (a
        set's seatings follow each other in the schedule), all at once: ``[]`` if none may."""
        first = self.take()
        if first is None:
            return []
        key = first.spec.deals_key
        jobs = [first, *self._waiting.pop(key, ())]
        while (job := self._pull()) is not None:
            if job.spec.deals_key != key:
                self._ahead = job
                break
            jobs.append(job)
        return jobs

    def _pull(self) -> MatchJob | None:
        job, self._ahead = self._ahead, None
        if job is not None:
            return job
        try:
            job = next(self._todo)
        except StopIteration:
            job, self.held = None, False
        else:
            self.held = job is None
        return job

    def release(self, job: MatchJob) -> None:
        """``job`` ended: its deals are free for the next match that plays them."""
        key = job.spec.deals_key
        self._busy.discard(key)
        queue = self._waiting.get(key)
        if queue:
            heapq.heappush(self._ready, (queue[0].spec.index, key))


def play_jobs(runner: Runner, jobs: Iterable[MatchJob | None], on_done: DoneCallback,
              stop: CancelSignal, on_fault: FaultCallback | None = None,
              on_batch: BatchCallback | None = None) -> None:
    """The tournament's policy over where matches run: plays ``jobs`` through ``runner``
    (a whole duplicate set at a time, through its ``submit_set``, where its ``by_set`` says so),
    keeping :meth:`~referee.runners.local.Runner.slots` of them submitted but never two with the
    same :attr:`~referee.match.job.MatchSpec.deals_key` at once (they play the same deals: their
    bots could learn the deals from each other's games as they are played), and calls
    ``on_done`` with each finished match, in schedule order within what finished together,
    then ``on_batch``, and ``on_fault`` as bots fault, from the calling thread. Once ``stop`` is
    set no new job starts and the runner is cancelled: abandoned matches are not reported.
    ``jobs`` yields ``None`` while the next match must wait for earlier ones to be saved
    (:class:`ReadyQueue`): slots are filled again once they are.

    :raises TournamentError: if a bot command cannot be started, or where matches run is gone
        (after cancelling the rest; every match that finished all the same is reported first).
    """
    _Dispatch(runner, ReadyQueue(jobs), stop).play(on_done, on_fault, on_batch)


class _Dispatch:
    """One call of :func:`play_jobs`: what runs, by task, and the first error."""

    def __init__(self, runner: Runner, ready: ReadyQueue, stop: CancelSignal) -> None:
        self.runner, self.ready, self.stop = runner, ready, stop
        self.running: dict[str, MatchJob] = {}
        self.unit: dict[str, str] = {}  # match id: the id of the first match of its task
        self.left: dict[str, int] = {}  # per task: its matches still running (holds a slot)
        self.error: BaseException | None = None
        self.cancelled = False

    def cancel(self) -> None:
        """No new job starts; the runner abandons the running ones."""
        if not self.cancelled:
            self.cancelled = True
            self.runner.cancel()

    def top_up(self) -> None:
        """Submits ready jobs (or sets) while the runner has free slots."""
        runner, ready = self.runner, self.ready
        while not self.cancelled and len(self.left) < runner.slots():
            by_set = runner.by_set
            batch = ready.take_set() if by_set else [job for job in [ready.take()] if job]
            if not batch:
                return
            for job in batch:
                self.running[job.spec.id] = job
                self.unit[job.spec.id] = batch[0].spec.id
            self.left[batch[0].spec.id] = len(batch)
            if by_set:
                runner.submit_set(batch)
            else:
                runner.submit(batch[0])

    def _ended(self, job: MatchJob) -> None:
        self.ready.release(job)
        first = self.unit.pop(job.spec.id)
        self.left[first] -= 1
        if not self.left[first]:
            del self.left[first]

    def finished(self, on_fault: FaultCallback | None) -> list[Finished | Failed]:
        """The matches that ended since the last call, in schedule order (faults reported as
        they come)."""
        finished: list[Finished | Failed] = []
        for event in self.runner.wait(WAIT_S):
            if isinstance(event, Faulted):
                if on_fault is not None and event.job.spec.id in self.running:
                    on_fault(event.job, event.fault, event.name)
            elif self.running.pop(event.job.spec.id, None) is not None:
                finished.append(event)
                self._ended(event.job)
        finished.sort(key=lambda event: event.job.spec.index)
        return finished

    def play(self, on_done: DoneCallback, on_fault: FaultCallback | None,
             on_batch: BatchCallback | None) -> None:
        """See :func:`play_jobs`."""
        try:
            self.top_up()
            while self.running:
                if self.stop.is_set():
                    self.cancel()
                finished = self.finished(on_fault)
                self.top_up()  # the next matches start before the finished ones are saved
                for event in finished:
                    if isinstance(event, Finished):
                        on_done(event.job, event.done)  # every finished match is kept
                    elif not isinstance(event.error, MatchAborted):
                        self.error = self.error or event.error
                        self.cancel()
                if finished and on_batch is not None:
                    on_batch()
                if finished and self.ready.held:
                    self.top_up()  # what waited on the matches just saved may start now
        except BaseException:
            self.cancel()
            raise
        if self.ready.held and not self.cancelled:  # waits on nothing: a bug, never a hang
            raise RuntimeError("the schedule waits for a match that is not running")
        if isinstance(self.error, BotCommandError | RunnerError):
            raise TournamentError(str(self.error)) from None
        if self.error is not None:
            raise self.error


@contextlib.contextmanager
def stop_on_sigint(stop: threading.Event) -> Iterator[None]:
    """While inside, Ctrl-C sets ``stop`` instead of raising :class:`KeyboardInterrupt`:
    matches end cleanly at their next turn (within one answer's time limit), or within
    :data:`referee.bots.bot.STOP_POLL_S` while their bots are starting, and the journal is never cut
    mid-line. Does nothing outside the main thread."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: object) -> None:
        stop.set()

    old = signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)


