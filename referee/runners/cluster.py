"""Matches on a Dask cluster: :class:`ClusterRunner`, the :class:`~referee.runners.local.Runner`
whose matches are tasks on the workers of a ``distributed`` scheduler (``dask scheduler`` and
``dask worker``, started by the organiser: see ``docs/cluster.md``).

Each match is one task, keyed by its match id (:func:`task_key`), needing one unit of the
``match`` resource (``dask worker ... --resources match=N``: a worker never plays more than N
matches at once). The task (:func:`play_on_worker`) resolves the sandbox on the worker, plays
the match with the job's limits, and returns the record with the bots' stderr: the
coordinator alone writes records, logs, the journal and the standings. A worker that dies
mid-match has its task played again on another (Dask reschedules it; the coordinator takes the
first record of each match id), so execution is at least once and saving exactly once.

Requires the ``distributed`` package (``pip install 'ct-referee[distributed]'``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from referee.bots.process import BotCommandError, resolve_sandbox
from referee.match.play import MatchAborted
from referee.records.record import RecordDict
from referee.runners.local import Failed, Faulted, Finished, RunnerError, RunnerEvent

if TYPE_CHECKING:
    from distributed import Client, Future

    from referee.match.job import MatchJob

__all__ = ["CONNECT_TIMEOUT_S", "RESOURCE", "ClusterError", "ClusterRunner", "Played",
           "play_on_worker", "task_key"]

RESOURCE = "match"
"""The Dask worker resource a match needs one unit of."""
CONNECT_TIMEOUT_S = 10.0
"""How long to try to reach the scheduler (and to wait for a first worker)."""
SLOTS_REFRESH_S = 1.0
"""How often the cluster's capacity is asked of the scheduler."""


RETRIES = 3
"""How many times a match stopped by its worker closing (not by the coordinator) is played
again before the tournament stops (a worker that dies outright is Dask's to reschedule)."""


class ClusterError(RunnerError):
    """The cluster cannot be used, or went away; the message is one line."""


@dataclass(frozen=True)
class Played:
    """What a worker sends back: the record, each bot's stderr (file name to bytes), the
    sandbox the worker used and its address."""

    record: RecordDict
    logs: dict[str, bytes]
    sandbox: str
    worker: str


@dataclass(frozen=True)
class Requeued:
    """A match submitted again (its worker closed mid-match)."""

    job: MatchJob


def task_key(job: MatchJob) -> str:
    """The task's key: the tournament, the match id and the id the bots are told (so two
    tournaments, or two deal secrets, never share a key; the same match always has the same)."""
    return f"ct-{job.tournament}-{job.spec.id}-{job.spec.bot_id}"


class _TaskSignal:
    """The cancel signal of a match played as a Dask task: set once the task is no longer
    wanted (cancelled by the coordinator, or released when the scheduler went away) or the
    worker is closing. Read from the worker's own state: no network round trip."""

    def __init__(self) -> None:
        from distributed import get_worker
        from distributed.core import Status

        self._worker = get_worker()
        self._key = self._worker.get_current_task()
        self._live = (Status.running, Status.paused)

    def is_set(self) -> bool:
        if self._worker.status not in self._live:
            return True
        task = self._worker.state.tasks.get(self._key)
        return task is None or task.state not in ("executing", "long-running")


def play_on_worker(job: MatchJob) -> Played:
    """The task: plays ``job`` on this worker and returns its record and logs.

    ``job.sandbox`` is the configured mode, resolved here (a worker without bubblewrap runs
    ``auto`` unsandboxed and says so; ``bwrap`` is an error naming the worker).

    :raises referee.bots.process.BotCommandError: if a bot cannot be started here, or the sandbox
        asked for does not work here.
    :raises referee.match.play.MatchAborted: if the task was cancelled.
    """
    from distributed import get_worker

    address = get_worker().address
    try:
        sandbox = resolve_sandbox(job.sandbox, warn=False)
    except BotCommandError as err:
        raise BotCommandError(f"on worker {address}: {err}") from None
    with tempfile.TemporaryDirectory(prefix="ct-match-") as tmp:
        here = dataclasses.replace(job, sandbox=sandbox, logs_dir=Path(tmp))
        try:
            record = here.play(_TaskSignal())
        except BotCommandError as err:
            raise BotCommandError(f"on worker {address}: {err}") from None
        logs = {p.name: p.read_bytes() for p in sorted(Path(tmp).iterdir()) if p.is_file()}
    return Played(record, logs, sandbox, address)


class ClusterRunner:
    """Plays matches as tasks on the workers of the Dask scheduler at ``address``
    (``tcp://host:8786``), keeping twice the cluster's ``match`` capacity submitted.

    ``sandbox`` (the configured mode: ``auto``, ``bwrap``, ``none``) replaces each job's, to be
    resolved on the worker that plays it; ``warn`` is told once per worker that runs ``auto``
    without bubblewrap. Connecting happens here, so an unreachable scheduler is an error before
    any match starts.

    :raises ClusterError: if the scheduler cannot be reached within ``timeout`` seconds, has no
        worker by then, or none of its workers offers the ``match`` resource.
    """

    remote = True
    """Its bots are spawned on other machines: the tournament leaves the sandbox mode to them."""

    def __init__(self, address: str, *, sandbox: str | None = None,
                 warn: Callable[[str], None] | None = None,
                 timeout: float = CONNECT_TIMEOUT_S, quiet: bool = True) -> None:
        try:
            from distributed import Client
        except ImportError:
            raise ClusterError("--scheduler needs the distributed package: pip install "
                               "'ct-referee[distributed]'") from None
        if quiet:
            _quiet_dask()
        self.address = address
        self.sandbox = sandbox
        self.warn = warn
        self._futures: dict[Future, MatchJob] = {}
        self._warned: set[str] = set()
        self._slots = (0.0, 1)
        self._aborted: list[RunnerEvent] = []
        self._attempts: dict[str, int] = {}
        try:
            self.client: Client = Client(address, timeout=timeout, set_as_default=False)
        except Exception as err:
            raise ClusterError(f"cannot reach the Dask scheduler {address!r}: "
                               f"{_one_line(err)}") from None
        try:
            self._check(timeout)
        except BaseException:
            self.close()
            raise

    def _check(self, timeout: float) -> None:
        try:
            self.client.wait_for_workers(1, timeout=timeout)
        except Exception:
            raise ClusterError(f"the Dask scheduler {self.address!r} has no worker (start "
                               f"some: dask worker {self.address} --resources "
                               f"{RESOURCE}=N)") from None
        if self._capacity() == 0:
            raise ClusterError(f"no worker of the Dask scheduler {self.address!r} offers the "
                               f"{RESOURCE!r} resource (start them with: dask worker "
                               f"{self.address} --nthreads N --resources {RESOURCE}=N)")

    def _capacity(self) -> int:
        workers = self.client.scheduler_info()["workers"].values()
        return int(sum(w.get("resources", {}).get(RESOURCE, 0) for w in workers))

    def slots(self) -> int:
        """See :meth:`Runner.slots`: twice the workers' ``match`` resources (asked at most
        every :data:`SLOTS_REFRESH_S`), so each worker has its next match queued."""
        at, slots = self._slots
        if time.monotonic() - at > SLOTS_REFRESH_S:
            with contextlib.suppress(Exception):  # a lost scheduler shows up in wait()
                slots = max(1, 2 * self._capacity())
            self._slots = (time.monotonic(), slots)
        return slots

    def submit(self, job: MatchJob) -> None:
        """See :meth:`Runner.submit`."""
        if self.sandbox is not None:
            job = dataclasses.replace(job, sandbox=self.sandbox)
        self._submit(job, task_key(job))

    def _submit(self, job: MatchJob, key: str) -> None:
        future = self.client.submit(play_on_worker, job, key=key, pure=False,
                                    resources={RESOURCE: 1})
        self._futures[future] = job

    def wait(self, timeout: float) -> list[RunnerEvent]:
        """See :meth:`Runner.wait`. Writes each finished match's logs to its ``logs_dir``; the
        faults of a match are reported when its record comes back, just before it."""
        from distributed import wait

        events, self._aborted = self._aborted, []
        if not self._futures:
            return events
        lost = False
        if not events:
            try:
                with self.client.as_current():
                    wait(list(self._futures), timeout=timeout, return_when="FIRST_COMPLETED")
            except TimeoutError:
                pass
            except Exception:  # cancelled futures (a lost scheduler) and a broken client
                lost = self.client.status not in ("running", "connecting")
        for future in [f for f in self._futures if lost or f.done()]:
            job = self._futures.pop(future)
            event = self._outcome(future, job, lost)
            if isinstance(event, Requeued):
                continue
            if isinstance(event, Finished):  # its faults, as they were recorded
                line = event.done.line
                events += [Faulted(job, fault, line["players"][fault["seat"]])
                           for fault in line["faults"]]
            events.append(event)
        return events

    def _outcome(self, future: Future, job: MatchJob,
                 lost: bool = False) -> RunnerEvent | Requeued:
        from distributed import KilledWorker

        if lost or future.status == "cancelled":  # not by us: cancel() forgets its futures first
            return Failed(job, ClusterError(f"lost the Dask scheduler {self.address!r} while "
                                            f"match {job.spec.id} was played"))
        try:
            played: Played = future.result()
        except KilledWorker:
            return Failed(job, ClusterError(
                f"match {job.spec.id} was lost with every Dask worker that tried it (the "
                f"scheduler's distributed.scheduler.allowed-failures)"))
        except MatchAborted:  # its worker closed mid-match (not our cancel): play it again
            return self._again(job)
        except BotCommandError as err:
            return Failed(job, err)
        except Exception as err:
            return Failed(job, ClusterError(f"match {job.spec.id} failed on a Dask worker: "
                                            f"{type(err).__name__}: {_one_line(err)}"))
        if job.logs_dir is not None:
            job.logs_dir.mkdir(parents=True, exist_ok=True)
            for name, data in played.logs.items():
                (job.logs_dir / Path(name).name).write_bytes(data)
        if played.sandbox == "none" and self.sandbox == "auto" and self.warn is not None \
                and played.worker not in self._warned:
            self._warned.add(played.worker)
            self.warn(f"worker {played.worker} has no working bubblewrap (bwrap): its bots "
                      f"run without a sandbox")
        return Finished(job, job.finish(played.record))

    def _again(self, job: MatchJob) -> RunnerEvent | Requeued:
        attempt = self._attempts.get(job.spec.id, 0) + 1
        if attempt > RETRIES:
            return Failed(job, ClusterError(f"match {job.spec.id} was stopped by {attempt} "
                                            f"closing Dask workers in a row"))
        self._attempts[job.spec.id] = attempt
        self._submit(job, f"{task_key(job)}-again{attempt}")
        return Requeued(job)

    def cancel(self) -> None:
        """See :meth:`Runner.cancel`: cancels every task (running ones stop at their next
        turn, when their worker sees the task is no longer wanted)."""
        futures, self._futures = self._futures, {}
        with contextlib.suppress(Exception):
            self.client.cancel(list(futures), force=True)
        self._aborted += [Failed(job, MatchAborted(f"match {job.spec.id} stopped"))
                          for job in futures.values()]

    def close(self) -> None:
        """See :meth:`Runner.close`."""
        with contextlib.suppress(Exception):
            self.client.close(timeout=5)

    def __enter__(self) -> ClusterRunner:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _quiet_dask() -> None:
    """Silences Dask's own logging in this process: a lost connection is reported once, as
    one line, by the tournament, not as Dask's tracebacks."""
    names = [n for n in logging.root.manager.loggerDict if n.split(".")[0] == "distributed"]
    for name in ["distributed", *names]:
        logging.getLogger(name).setLevel(logging.CRITICAL + 1)


def _one_line(err: BaseException) -> str:
    text = " ".join(str(err).split()) or type(err).__name__
    return text[:300]
