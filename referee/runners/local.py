"""Where matches run: threads of this process, or worker processes of this machine (a Dask
cluster is in :mod:`referee.runners.cluster`).

A :class:`Runner` is only *where*: it starts the matches it is given (``submit``), reports
what became of them (``wait``: :class:`Finished`, :class:`Failed`, :class:`Faulted`), and
abandons them on request (``cancel``). Which match may start, in what order results are saved
and what an error means is the tournament's policy (:func:`referee.tournament.run.run`).

A match in another process cannot watch a :class:`threading.Event`: each runner hands its
matches a :class:`CancelSignal` that crosses its own boundary (a byte of shared memory for
worker processes, the task's own state on a Dask worker), set by :meth:`Runner.cancel`.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import multiprocessing
import os
import queue
import select
import signal
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, Self, TypeVar

from referee.bots.bot import CancelSignal
from referee.bots.process import default_spawner
from referee.match.play import MatchAborted, Observer
from referee.records.record import FaultDict, current_umask

if TYPE_CHECKING:
    from referee.match.job import Done, MatchJob

__all__ = ["CancelSignal", "Failed", "Faulted", "Finished", "Placement", "ProcessRunner", "Runner",
           "RunnerError", "RunnerEvent", "ThreadRunner", "drain", "faulted", "local_runner"]


class RunnerError(RuntimeError):
    """Where matches run is gone (a worker process died, the cluster's scheduler went away):
    the tournament stops; finished matches are kept; the message is one line."""


@dataclass(frozen=True)
class Finished:
    """A match ended: its result line (its record is where the job wrote it; see
    :class:`~referee.match.job.Done`)."""

    job: MatchJob
    done: Done


@dataclass(frozen=True)
class Failed:
    """A match did not end: :class:`~referee.match.play.MatchAborted` (cancelled),
    :class:`~referee.bots.process.BotCommandError` (a bot cannot be started), :class:`RunnerError`,
    or any other error raised while playing it."""

    job: MatchJob
    error: BaseException


@dataclass(frozen=True)
class Faulted:
    """A bot faulted in a match that is still running (always before the match's
    :class:`Finished`)."""

    job: MatchJob
    fault: FaultDict
    name: str


RunnerEvent = Finished | Failed | Faulted
T = TypeVar("T")


@dataclass(frozen=True)
class Placement:
    """Where a runner's matches run, as facts (the tournament's header words them)."""

    cpus: tuple[int, ...] = ()
    """The CPUs its matches are pinned to, one match on each (empty: not pinned)."""
    hosts: int | None = None
    """A cluster's: the hosts of its workers (``None``: this machine)."""
    spread: bool = False
    """A cluster's: each seating of a set on another host where the cluster has enough."""
    client: str = ""
    """A cluster's: the uid its Dask client process runs as."""


class Runner(Protocol):
    """Where matches run: the one seam between the tournament and the machines. A runner
    subclasses it to inherit the defaults of the optional abilities (``remote``,
    :attr:`placement`, :attr:`by_set`, :meth:`submit_set`), which only a cluster changes."""

    remote: bool = False
    """Whether its bots are spawned on other machines (the tournament then leaves the sandbox
    mode, the pre-flight and the sealed snapshots to them)."""

    @property
    def placement(self) -> Placement:
        """Where its matches run (for the tournament's header)."""
        return Placement()

    @property
    def by_set(self) -> bool:
        """Whether whole duplicate sets go as one unit each (:meth:`submit_set`), their
        seatings played one after another where it runs; false: one match at a time."""
        return False

    def start(self) -> None:
        """Gets ready to play, without waiting: worker processes start here, in the
        background, so that they are up by the first match (the tournament calls it before its
        own preparation: the sandbox check, the sealed snapshots, the pre-flight). Default:
        nothing to do."""
        return None

    def submit_set(self, jobs: list[MatchJob]) -> None:
        """Plays the seatings of one duplicate set, in order, as one unit holding one slot
        (only called where :attr:`by_set` is true); each ends with its own :class:`Finished`
        or :class:`Failed`."""
        raise TypeError(f"{type(self).__name__} plays one match at a time (by_set is false)")

    def slots(self) -> int:
        """How many matches it can play at once now (at least 1): the tournament keeps that
        many submitted."""
        ...

    def submit(self, job: MatchJob) -> None:
        """Starts playing ``job`` (or queues it); what becomes of it comes from :meth:`wait`."""
        ...

    def wait(self, timeout: float) -> list[RunnerEvent]:
        """What happened since the last call, waiting up to ``timeout`` seconds for something
        when nothing has yet. Every submitted job ends with one :class:`Finished` or
        :class:`Failed`, its :class:`Faulted` events before it."""
        ...

    def cancel(self) -> None:
        """Abandons every submitted job: queued ones never start, running ones stop at their
        next turn and their bots are stopped; each is reported :class:`Failed` with
        :class:`~referee.match.play.MatchAborted` (or :class:`Finished`, if it ended meanwhile)."""
        ...

    def close(self) -> None:
        """Releases the runner's threads, processes or connections (after :meth:`cancel` if
        jobs are still running)."""
        ...

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def drain(inbox: queue.Queue[T] | queue.SimpleQueue[T], timeout: float) -> list[T]:
    """Everything in ``inbox``, waiting up to ``timeout`` seconds for a first item."""
    try:
        out = [inbox.get(timeout=max(0.0, timeout))]
    except queue.Empty:
        return []
    with contextlib.suppress(queue.Empty):
        while True:
            out.append(inbox.get_nowait())
    return out


def faulted(job: MatchJob, line: dict[str, Any]) -> list[Faulted]:
    """The :class:`Faulted` events of a finished match, from its result line: how faults
    travel from another process or machine (inside the result, never on a channel of their
    own that the result could overtake)."""
    return [Faulted(job, fault, line["players"][fault["seat"]]) for fault in line["faults"]]


class _Relay(Observer):
    """Hands each fault of one match to ``report`` as it happens (a match in this process)."""

    def __init__(self, match_id: str, report: Callable[[str, FaultDict, str], None]) -> None:
        self.match_id, self.report = match_id, report

    def fault(self, fault: FaultDict, name: str) -> None:
        self.report(self.match_id, fault, name)


class _Settable(Protocol):
    """A cancel signal this process can raise: a ``threading`` event or a :class:`SharedFlag`."""

    def set(self) -> None: ...
    def is_set(self) -> bool: ...


class _PoolRunner(Runner):
    """What the thread and process runners share: a pool of ``concurrency`` workers, and one
    queue of events filled by the futures' callbacks (each match's faults before its end)."""

    faults_in_result = False
    """Whether a finished match's faults come inside its result (another process) rather than
    as they happen (this process: relayed before the match's future is done)."""

    def __init__(self, concurrency: int, cancel: _Settable) -> None:
        self.concurrency = max(1, concurrency)
        self._cancel = cancel
        """Set by :meth:`cancel`: the running matches see it and abandon."""
        self._executor: Executor | None = None
        """The pool, made on the first match (or by :meth:`ProcessRunner.start`)."""
        self._events: queue.SimpleQueue[RunnerEvent] = queue.SimpleQueue()
        self._jobs: dict[str, MatchJob] = {}
        self._futures: dict[Future[Done], MatchJob] = {}
        self._lock = threading.Lock()

    def slots(self) -> int:
        """See :meth:`Runner.slots`: the concurrency."""
        return self.concurrency

    def _track(self, job: MatchJob, future: Future[Done]) -> None:
        with self._lock:
            self._jobs[job.spec.id] = job
            self._futures[future] = job
        future.add_done_callback(self._done)

    def _done(self, future: Future[Done]) -> None:
        with self._lock:
            job = self._futures.pop(future)
            self._jobs.pop(job.spec.id, None)
        event = self._outcome(future, job)
        if isinstance(event, Finished) and self.faults_in_result:
            for fault in faulted(job, event.done.line):
                self._events.put(fault)
        self._events.put(event)  # a callback never raises: each job ends with one event

    @staticmethod
    def _outcome(future: Future[Done], job: MatchJob) -> Finished | Failed:
        if future.cancelled():
            return Failed(job, MatchAborted(f"match {job.spec.id} stopped"))
        error = future.exception()
        if error is None:
            return Finished(job, future.result())
        if isinstance(error, BrokenProcessPool):
            return Failed(job, RunnerError(
                f"a referee worker process died while match {job.spec.id} was played"))
        return Failed(job, error)

    def _fault(self, match_id: str, fault: FaultDict, name: str) -> None:
        with self._lock:
            job = self._jobs.get(match_id)
        if job is not None:
            self._events.put(Faulted(job, fault, name))

    def wait(self, timeout: float) -> list[RunnerEvent]:
        """See :meth:`Runner.wait`."""
        return drain(self._events, timeout)

    def cancel(self) -> None:
        """See :meth:`Runner.cancel`."""
        self._cancel.set()
        with self._lock:
            futures = list(self._futures)
        for future in futures:
            future.cancel()  # a queued job: its callback reports it aborted

    def close(self) -> None:
        """See :meth:`Runner.close`."""
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)
            self._executor = None


def allowed_cpus() -> list[int]:
    """The CPUs this thread may run on (its affinity: the machine's, or a container's share)."""
    return sorted(os.sched_getaffinity(0))


def _pinned(cpus: list[int] | None, count: int) -> Placement:
    """The placement of ``count`` matches at once pinned to ``cpus`` in turn (``None``: not
    pinned)."""
    return Placement(() if cpus is None else
                     tuple(sorted({cpus[k % len(cpus)] for k in range(count)})))


class ThreadRunner(_PoolRunner):
    """Plays ``concurrency`` matches at once in threads of this process: the referee mostly
    waits on the bots' pipes (the bots are processes), but every match's referee loop shares
    this process's interpreter (the GIL), so a second thread adds little. Faults are reported
    as they happen.

    ``affinity`` (concurrency 1 only: every thread's bots are forked by one spawner thread):
    the match's thread and its bots run on one CPU, the last this process may use, as
    :class:`ProcessRunner` pins each worker; given back when the runner closes."""

    def __init__(self, concurrency: int = 1, *, affinity: bool = False) -> None:
        if affinity and concurrency > 1:
            raise ValueError("a ThreadRunner pins its matches at concurrency 1 only")
        self._stop = threading.Event()
        super().__init__(concurrency, self._stop)
        self._cpu = allowed_cpus()[-1] if affinity else None
        self._pinned = False  # the default spawner, until close

    @property
    def placement(self) -> Placement:
        """See :attr:`Runner.placement`."""
        return _pinned(None if self._cpu is None else [self._cpu], 1)

    def submit(self, job: MatchJob) -> None:
        """See :meth:`Runner.submit`."""
        if self._executor is None:
            pin = None
            if self._cpu is not None:
                default_spawner().pin({self._cpu})
                self._pinned = True
                pin = functools.partial(os.sched_setaffinity, 0, {self._cpu})
            self._executor = ThreadPoolExecutor(self.concurrency, thread_name_prefix="match",
                                                initializer=pin)
        relay = _Relay(job.spec.id, self._fault)
        self._track(job, self._executor.submit(job.run, self._stop, relay))

    def close(self) -> None:
        """See :meth:`Runner.close`: the bots forked later may use every CPU again."""
        super().close()
        if self._pinned:
            default_spawner().release()
            self._pinned = False


# -- worker processes --------------------------------------------------------------------------

PR_SET_PDEATHSIG = 1
"""Linux's prctl option: the signal a process gets when its parent ends."""
class SharedFlag:
    """A cancel signal that crosses process boundaries without a lock: one byte of shared
    memory, set by the coordinator and read by every match at each turn. A ``multiprocessing``
    event takes a process-shared lock at every look: two worker processes looking some 300
    times a match each contend for it, and one preempted while holding it stalls the other."""

    def __init__(self, context: Any) -> None:
        self._byte = context.RawValue("b", 0)

    def set(self) -> None:
        self._byte.value = 1

    def is_set(self) -> bool:
        return bool(self._byte.value)


_worker_stop: SharedFlag | None = None


def _init_worker(stop: SharedFlag, umask: int, coordinator: int, cpus: list[int] | None,
                 counter: Any) -> None:
    """Runs first in each worker process: Ctrl-C (sent to the whole foreground process group)
    is the coordinator's to handle; the worker learns of it through ``stop``. The files it
    makes get the coordinator's umask when its pool was made (a fork server, started once, may
    hold an older one). It ends with the ``coordinator`` process. With ``cpus`` (affinity),
    the k-th worker to start (``counter``, shared) and every bot it forks run on
    ``cpus[k % len(cpus)]`` only."""
    global _worker_stop
    os.umask(umask)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})  # blocked since its start
    if cpus:  # before any thread: each inherits it
        with counter.get_lock():
            k = counter.value
            counter.value += 1
        cpu = {cpus[k % len(cpus)]}
        with contextlib.suppress(OSError):  # the CPU was taken away meanwhile: unpinned
            os.sched_setaffinity(0, cpu)
            default_spawner().pin(cpu)  # the thread that forks the bots
    _die_with_parent()
    _die_with(coordinator)
    _worker_stop = stop


WATCH_POLL_S = 0.5
"""How often a worker looks for its coordinator where the system cannot say when it ends."""


def _die_with(pid: int) -> None:
    """Kills this process (SIGKILL) once the process ``pid`` ends, from a watching thread. A
    worker forked by a fork server is the server's child, not the coordinator's: the parent
    death signal watches the server, which lives as long as any worker holds its pipe; so the
    worker watches the coordinator itself (a pidfd; else a look every :data:`WATCH_POLL_S`)."""
    if pid == os.getppid():
        return  # the parent death signal does it
    try:
        fd: int | None = os.pidfd_open(pid)
    except ProcessLookupError:
        os.kill(os.getpid(), signal.SIGKILL)  # already gone
        return
    except (OSError, AttributeError):
        fd = None

    def watch() -> None:
        if fd is not None:
            select.select([fd], [], [])  # readable once the process has ended
        else:
            while _alive(pid):
                time.sleep(WATCH_POLL_S)
        os.kill(os.getpid(), signal.SIGKILL)

    threading.Thread(target=watch, name="coordinator", daemon=True).start()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@contextlib.contextmanager
def _sigint_blocked() -> Iterator[None]:
    """Holds Ctrl-C back in this thread while inside (a process started meanwhile, a fork
    server included, inherits the blocked signal: see :meth:`ProcessRunner._start`); delivered
    on the way out."""
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _die_with_parent() -> None:
    """On Linux, asks for SIGKILL when the parent is gone: a ``spawn`` ed worker's parent is
    the coordinator, killed outright it leaves no worker playing on (the bots then read the
    end of their input); a fork server's worker watches the coordinator itself
    (:func:`_die_with`)."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def _ready() -> int:
    """A worker's first task (:meth:`ProcessRunner.start`): nothing, once it is up."""
    return os.getpid()


def _play_in_worker(job: MatchJob) -> Done:
    """Plays one match in a worker process; the record is written here (the worker shares the
    output folder), only the result line goes back, its faults inside it."""
    return job.run(_worker_stop)


PRELOAD = ["__main__", "referee.runners.local", "referee.match.job"]
"""What the fork server imports once (the program's main module, as a spawned worker would,
and the match's modules), so that each worker forked from it starts with them."""


def default_start_method() -> str:
    """``forkserver`` where there is one (Linux, macOS): a server process imports the referee
    once and each worker is a fork of it, ready in milliseconds, where a ``spawn`` ed worker
    starts a new interpreter that imports everything again (about 0.2 s of a core each, the
    program's main module included); else ``spawn``. Never a plain ``fork`` of the
    coordinator, whose threads a child could inherit mid-lock."""
    return "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"


class ProcessRunner(_PoolRunner):
    """Plays ``concurrency`` matches at once, each in one of ``concurrency`` worker processes
    of this machine (started by :meth:`start`, or on the first match; they end with this
    process, even when it is killed outright): the referee's own work is spread over the
    cores. The cancel signal is a :class:`SharedFlag`; a match's faults come back inside
    its result line, just before its :class:`Finished`.

    Until every worker process is up (a fork server's first start imports the referee: a
    tenth of a second on an idle machine, seconds on a loaded one), one match at a time is
    played in a thread of this process instead (``bridge``), so the first matches do not wait
    for the workers: :attr:`bridged` counts them."""

    faults_in_result = True

    def __init__(self, concurrency: int = 2, *, start_method: str | None = None,
                 affinity: bool = False, bridge: bool = True) -> None:
        method = start_method or default_start_method()
        self._context = multiprocessing.get_context(method)
        if method == "forkserver":
            self._context.set_forkserver_preload(PRELOAD)
        self._stop = SharedFlag(self._context)
        super().__init__(concurrency, self._stop)
        self._starting = threading.Lock()
        self._starter: threading.Thread | None = None
        self._cpus = allowed_cpus() if affinity else None
        self._up: list[Future[int]] = []
        """Each worker's first task: all done once every worker is up."""
        self._bridge: ThreadPoolExecutor | None = ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="bridge") if bridge else None
        self._bridged: Future[Done] | None = None
        self.bridged = 0
        """Matches played in this process while the workers started."""
        self._waiting: list[tuple[MatchJob, Future[Done]]] = []
        """Matches submitted while the worker processes were being started (the fork
        server's imports): handed to the pool, in order, once it is made (:meth:`_hand_over`)
        instead of holding the submitter until then."""
        self._waiting_lock = threading.Lock()
        self._handed: list[Future[Done]] = []
        """The pool's futures of the matches that waited (their stand-ins are tracked)."""
        self._pool_coming = False
        """Whether :meth:`start`'s thread is making the pool (it has neither made it nor
        failed yet)."""

    @property
    def placement(self) -> Placement:
        """See :attr:`Runner.placement`."""
        return _pinned(self._cpus, self.concurrency)

    def start(self) -> None:
        """See :meth:`Runner.start`: every worker process starts now, from a thread of its
        own (the fork server's first start waits for its imports)."""
        with self._starting:
            if self._starter is not None or self._executor is not None:
                return
            self._pool_coming = True
            self._starter = threading.Thread(target=self._start_aside, name="workers",
                                             daemon=True)
            self._starter.start()

    def _start(self) -> Executor:
        with self._starting:
            if self._executor is None:
                pool = ProcessPoolExecutor(self.concurrency, mp_context=self._context,
                                           initializer=_init_worker,
                                           initargs=(self._stop, current_umask(), os.getpid(),
                                                     self._cpus, self._context.Value("i", 0)
                                                     if self._cpus else None))
                # Every process of the pool starts here, Ctrl-C held back (:func:`_sigint_blocked`).
                # A ``spawn`` ed worker inherits the blocked signal through its exec. A fork
                # server's worker is forked by the server, not by this thread, and gets the
                # server's mask: the server itself starts here on the first pool (it is shared
                # by every later pool of this process, and restarted here if it died), so it
                # runs with Ctrl-C blocked and every worker it forks is born with it blocked. A
                # Ctrl-C then waits, pending, until :func:`_init_worker` ignores it; without
                # this, one that comes between a worker's fork and its initializer (the server
                # gives it Python's handler back) ends the worker with a KeyboardInterrupt: the
                # pool is broken.
                with _sigint_blocked():  # one process each, all at once
                    self._up = [pool.submit(_ready) for _ in range(self.concurrency)]
                with self._waiting_lock:
                    self._executor, self._pool_coming = pool, False
                    self._hand_over(pool)
            return self._executor

    def _start_aside(self) -> None:
        """:meth:`_start` on :meth:`start`'s thread: where it fails, the matches that waited
        for the pool fail with its error (a later submit tries again, and raises it)."""
        try:
            self._start()
        except Exception as err:
            with self._waiting_lock:
                waiting, self._waiting, self._pool_coming = self._waiting, [], False
            for _, stand_in in waiting:
                if stand_in.set_running_or_notify_cancel():
                    stand_in.set_exception(RunnerError(
                        f"the referee's worker processes could not start: {err}"))

    def _hand_over(self, pool: Executor) -> None:
        """Submits the matches that waited for the pool, each through its stand-in future
        (one cancelled meanwhile is left out: its callback reported it aborted)."""
        waiting, self._waiting = self._waiting, []
        for job, stand_in in waiting:
            if not stand_in.set_running_or_notify_cancel():
                continue
            try:
                real = pool.submit(_play_in_worker, job)
            except Exception as err:  # a broken pool, one shut down: this match's outcome
                stand_in.set_exception(err)
                continue
            self._handed.append(real)  # cancel() takes it off the pool's queue too
            real.add_done_callback(functools.partial(_settle, stand_in, job.spec.id))

    def _wait_for_pool(self, job: MatchJob) -> bool:
        """Queues ``job`` for the pool if the worker processes are still being started
        (:meth:`start`'s thread is making the pool); whether it did."""
        with self._waiting_lock:
            if not self._pool_coming:
                return False
            stand_in: Future[Done] = Future()
            self._waiting.append((job, stand_in))
        self._track(job, stand_in)
        return True

    def cancel(self) -> None:
        """See :meth:`Runner.cancel`: the matches handed to the pool after waiting for it are
        taken off its queue too (their stand-ins are running, so cancelling them does not)."""
        super().cancel()
        with self._waiting_lock:
            handed = list(self._handed)
        for future in handed:
            future.cancel()

    def close(self) -> None:
        """See :meth:`Runner.close`: after a start under way (:meth:`start`) has made the
        pool, so that no pool is made once closed."""
        if self._starter is not None:
            self._starter.join()
        if self._bridge is not None:
            self._bridge.shutdown(wait=True, cancel_futures=True)
            self._bridge = None
        super().close()

    def _play_here(self, job: MatchJob) -> Done:
        """Plays ``job`` on the bridge's thread; with affinity, it and its bots on the last
        CPU, as a worker's would be on one."""
        if not self._cpus:
            return job.run(self._stop)
        cpu = {self._cpus[-1]}
        os.sched_setaffinity(0, cpu)  # 0: this thread, the bridge's own
        spawner = default_spawner()  # its thread on the process's CPUs, whoever starts it
        spawner.pin(cpu)
        try:
            return job.run(self._stop)
        finally:
            spawner.release()

    def _bridging(self) -> bool:
        """Whether the next match plays in this process: the workers are not all up yet, and
        no other match plays here."""
        if self._bridge is None or (self._bridged is not None and not self._bridged.done()):
            return False
        up = self._up
        return self._executor is None or not up or not all(f.done() for f in up)

    def slots(self) -> int:
        """See :meth:`Runner.slots`: twice the concurrency, so that each worker process has
        its next match at hand when one ends (no round trip through this process between
        two matches)."""
        return 2 * self.concurrency

    def submit(self, job: MatchJob) -> None:
        """See :meth:`Runner.submit`."""
        if self._bridging():
            assert self._bridge is not None
            self.bridged += 1  # its faults come inside its result, as a worker's
            self._bridged = self._bridge.submit(self._play_here, job)
            self._track(job, self._bridged)
            return
        if self._wait_for_pool(job):
            return
        pool = self._start()
        future: Future[Done]
        try:  # no process starts here: :meth:`_start` started them all
            future = pool.submit(_play_in_worker, job)
        except BrokenProcessPool:
            future = Future()
            future.set_exception(BrokenProcessPool("broken"))
        self._track(job, future)


def _settle(stand_in: Future[Done], match_id: str, real: Future[Done]) -> None:
    """Gives ``stand_in`` (running) the outcome of ``real``: its result, its error, or, if
    it was cancelled (:meth:`ProcessRunner.cancel`, the pool shut down), the match stopped."""
    if real.cancelled():
        stand_in.set_exception(MatchAborted(f"match {match_id} stopped"))
        return
    error = real.exception()
    if error is None:
        stand_in.set_result(real.result())
    else:
        stand_in.set_exception(error)


def auto_affinity(concurrency: int, *, fair: bool) -> bool:
    """``affinity: auto`` for ``concurrency`` matches at once: pinned where they take every CPU
    this process may use, as many on each (the concurrency a multiple of the CPUs: at 3 on 2
    CPUs, two matches would share one CPU while the third had one to itself), and sharing a
    CPU is ``fair`` (bots not on move at the least CPU weight, or trusted bots)."""
    cpus = len(allowed_cpus())
    return fair and concurrency >= cpus and concurrency % cpus == 0


def local_runner(concurrency: int, *, affinity: bool) -> ThreadRunner | ProcessRunner:
    """The runner for ``concurrency`` matches at once on this machine: this process for one,
    worker processes for more; ``affinity``: each match's referee and bots on one CPU."""
    if concurrency <= 1:
        return ThreadRunner(1, affinity=affinity)
    return ProcessRunner(concurrency, affinity=affinity)

