"""Matches on a Dask cluster: :class:`ClusterRunner`, the :class:`~referee.runners.local.Runner`
whose matches are tasks on the workers of a ``distributed`` scheduler (``dask scheduler`` and
``dask worker``, started by the organiser: see ``docs/cluster.md``).

Each match is one task, keyed by its match id (:func:`task_key`), needing one unit of the
``match`` resource (``dask worker ... --resources match=N``: a worker never plays more than N
matches at once). The task (:func:`play_on_worker`) resolves the sandbox on the worker, plays
the match with the job's limits, and reports back (:class:`WorkerReport`): a worker that
shares the output folder writes the record (under a name of its attempt, which the coordinator
renames) and the logs there and sends the result line; one that does not sends the record with
the bots' stderr, which the coordinator writes. The coordinator alone writes the journal and
the standings. A worker that dies
mid-match has its task played again on another (Dask reschedules it; the coordinator takes the
first record of each match id), so execution is at least once and saving exactly once.

Requires the ``distributed`` package (``pip install 'ct-referee[distributed]'``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import logging
import os
import stat
import tempfile
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from referee.bots.limits import SandboxMode
from referee.bots.process import BotCommandError, resolve_sandbox
from referee.match.job import Done
from referee.match.play import MatchAborted
from referee.protocol.escape import escape_controls
from referee.records.record import MAX_BYTES, RecordDict, RecordError, gunzip
from referee.runners.local import (
    Failed,
    Finished,
    Runner,
    RunnerError,
    RunnerEvent,
    faulted,
)

if TYPE_CHECKING:
    from distributed import Client, Future

    from referee.match.job import MatchJob

__all__ = ["CA_FILE", "CA_KEY_FILE", "CONNECT_TIMEOUT_S", "RESOURCE", "SCHEDULER_CERT",
           "WORKER_CERT", "ClusterError", "ClusterRunner", "RefusedResult", "WorkerReport",
           "plain_tcp_warning", "play_on_worker", "read_scheduler_file", "security", "task_key"]

RESOURCE = "match"
"""The Dask worker resource a match needs one unit of."""
CONNECT_TIMEOUT_S = 10.0
"""How long to try to reach the scheduler (and to wait for a first worker)."""
SLOTS_REFRESH_S = 1.0
"""How often the cluster's capacity is asked of the scheduler."""


CA_FILE = "ca.pem"
"""In a ``--tls`` folder (``ct-referee cluster-certs``): the authority every machine of the
cluster checks the others' certificates by."""
CA_KEY_FILE = "ca-key.pem"
"""Its key: issues certificates; it stays on the machine that made the folder."""
SCHEDULER_CERT = "scheduler.pem"
"""The scheduler's and the coordinator's certificate, with its key."""
WORKER_CERT = "worker.pem"
"""The workers' certificate, with its key."""


def security(folder: Path) -> Any:
    """The coordinator's Dask :class:`~distributed.security.Security` from a ``--tls`` folder:
    its certificate (:data:`SCHEDULER_CERT`) checked by the cluster, the cluster's checked by
    the folder's authority (:data:`CA_FILE`), and no connection without TLS.

    :raises ClusterError: for a folder without those files.
    """
    from distributed.security import Security

    for name in (CA_FILE, SCHEDULER_CERT):
        if not (folder / name).is_file():
            raise ClusterError(f"--tls {folder}: no {name} in it (make the certificates with: "
                               f"ct-referee cluster-certs {folder})")
    ca, cert = str(folder / CA_FILE), str(folder / SCHEDULER_CERT)
    return Security(tls_ca_file=ca, tls_client_cert=cert, tls_client_key=cert,
                    require_encryption=True)


SPREAD_KEYS = 10_000
"""Duplicate sets whose hosts :class:`ClusterRunner` remembers (to spread their seatings)."""
RETRIES = 3
"""How many times a match stopped by its worker closing (not by the coordinator) is played
again before the tournament stops (a worker that dies outright is Dask's to reschedule)."""


class ClusterError(RunnerError):
    """The cluster cannot be used, or went away; the message is one line."""


@dataclass(frozen=True)
class WorkerReport:
    """What a worker sends back: the record, each bot's stderr (file name to bytes), the
    sandbox the worker used and its address; where the worker shares the output folder
    (:attr:`~referee.match.job.MatchJob.shared`), the result line and the temporary file it
    wrote the record to instead (the logs are written in place)."""

    record: RecordDict | None
    logs: dict[str, bytes]
    sandbox: SandboxMode
    worker: str
    line: dict[str, Any] | None = None
    written: Path | None = None


@dataclass(frozen=True)
class _Task:
    """What one task plays: one match, or a duplicate set's seatings in order
    (:meth:`ClusterRunner.submit_set`)."""

    jobs: tuple[MatchJob, ...]
    whole_set: bool

    def index(self, i: int) -> int | None:
        """Where the ``i``-th job's outcome is in the task's result (``None``: the result)."""
        return i if self.whole_set else None


@dataclass(frozen=True)
class Requeued:
    """A match submitted again (its worker closed mid-match)."""

    job: MatchJob


def read_scheduler_file(path: Path) -> tuple[str, str | None]:
    """The address and id in a scheduler file (``dask scheduler --scheduler-file PATH``).

    :raises ClusterError: for a file that cannot be read or names no address.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        why = getattr(err, "strerror", None) or "not JSON"
        raise ClusterError(f"scheduler file {str(path)!r}: cannot read: {why}") from None
    address = data.get("address") if isinstance(data, dict) else None
    if not isinstance(address, str) or not address:
        raise ClusterError(f"scheduler file {str(path)!r}: no scheduler address in it (written "
                           f"by: dask scheduler --scheduler-file {path})")
    ident = data.get("id")
    return address, ident if isinstance(ident, str) else None


def plain_tcp_warning(address: str) -> str:
    """What ``tournament`` and ``league`` say of a cluster whose scheduler takes any worker
    (not :attr:`ClusterRunner.authenticated`)."""
    return (f"warning: the cluster at {address} is not authenticated (plain tcp): any program "
            f"that reaches its scheduler may join as a worker and is sent matches (their "
            f"results are checked before they count); use TLS: ct-referee cluster-certs DIR, "
            f"then --tls DIR (docs/cluster.md)")


def host_of(address: str) -> str:
    """The host of a worker address (``tcp://10.0.0.5:40211`` is ``10.0.0.5``)."""
    rest = address.split("://", 1)[-1]
    return rest.rsplit(":", 1)[0] if ":" in rest else rest


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


def play_on_worker(job: MatchJob) -> WorkerReport:
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
    if job.record_path is not None and shares_output(job):
        # a name of this attempt's own: the coordinator renames the first to finish
        written = job.record_path.with_name(f".{job.record_path.name}.{uuid.uuid4().hex}.tmp")
        here = dataclasses.replace(job, sandbox=sandbox, record_path=written)
        try:
            done = here.run(_TaskSignal())
        except BotCommandError as err:
            raise BotCommandError(f"on worker {address}: {err}") from None
        return WorkerReport(None, {}, sandbox, address, done.line, written)
    with tempfile.TemporaryDirectory(prefix="ct-match-") as tmp:
        here = dataclasses.replace(job, sandbox=sandbox, logs_dir=Path(tmp))
        try:
            record = here.play(_TaskSignal())
        except BotCommandError as err:
            raise BotCommandError(f"on worker {address}: {err}") from None
        logs = {p.name: p.read_bytes() for p in sorted(Path(tmp).iterdir()) if p.is_file()}
    return WorkerReport(record, logs, sandbox, address)


def shares_output(job: MatchJob) -> bool:
    """Whether this worker sees the coordinator's output folder (a shared file system): its
    :attr:`~referee.match.job.MatchJob.shared` file is there and holds the same text. Read
    once per worker and tournament once it is (:func:`_holds`), not once per match."""
    return job.shared is not None and _holds(*job.shared)


_SEEN: set[tuple[Path, str]] = set()
"""The shared files this worker found holding their text (a "no" is asked again: a file
system mounted late, or an attribute cache not yet fresh, would keep it for the run)."""


def _holds(path: Path, text: str) -> bool:
    """Whether the file at ``path`` holds ``text``, or the text whose SHA-256 digest ``text``
    is (``sha256:<hex>``: a :meth:`~referee.match.job.MatchJob.sealed` job's; the file is the
    deal secret's) (a yes kept: one read a worker)."""
    if (path, text) in _SEEN:
        return True
    try:
        found = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    if text.startswith("sha256:"):
        found = "sha256:" + hashlib.sha256(found.encode()).hexdigest()
    held = found == text
    if held:
        _SEEN.add((path, text))
    return held


def play_set_on_worker(jobs: list[MatchJob]) -> list[WorkerReport | BaseException]:
    """The task of a whole duplicate set: plays its seatings one after another on this worker
    (they must never run at once anyway) and returns what became of each, in order: its report,
    or the error that ended it (the seatings after a cancelled one are cancelled too)."""
    out: list[WorkerReport | BaseException] = []
    for job in jobs:
        if out and isinstance(out[-1], MatchAborted):
            out.append(MatchAborted(f"match {job.spec.id} stopped"))
            continue
        try:
            out.append(play_on_worker(job))
        except Exception as err:  # sent back as this seating's outcome
            out.append(err)
    return out


def _scheduler_info(client: Any) -> dict[str, Any]:
    """The scheduler's identity and **every** worker: some releases of distributed list only
    5 workers unless asked for all (``n_workers=-1``); older ones know no such argument."""
    try:
        return dict(client.scheduler_info(n_workers=-1))
    except TypeError:
        return dict(client.scheduler_info())


class _Result:
    """A finished future's result (or its exception), fetched from the worker the first time it
    is asked for: ``Future.result()`` fetches it again on every call."""

    def __init__(self, future: Future[Any]) -> None:
        self._future = future
        self._value: Any = None
        self._error: Exception | None = None
        self._fetched = False

    def get(self) -> Any:
        if not self._fetched:
            try:
                self._value = self._future.result()
            except Exception as err:  # raised again to every seating of a set
                self._error = err
            self._fetched = True
        if self._error is not None:
            raise self._error
        return self._value


def _unpack(outcome: WorkerReport | BaseException) -> WorkerReport:
    if isinstance(outcome, BaseException):
        raise outcome
    return outcome


class ClusterRunner(Runner):
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

    def __init__(self, address: str | None = None, *, sandbox: SandboxMode | None = None,
                 warn: Callable[[str], None] | None = None,
                 timeout: float = CONNECT_TIMEOUT_S, quiet: bool = True,
                 scheduler_file: Path | None = None, spread: bool = True,
                 tls: Path | None = None) -> None:
        try:
            from distributed import Client
        except ImportError:
            raise ClusterError("--scheduler needs the distributed package: pip install "
                               "'ct-referee[distributed]'") from None
        if quiet:
            _quiet_dask()
        expected: str | None = None
        if scheduler_file is not None:
            address, expected = read_scheduler_file(scheduler_file)
        if address is None:
            raise ClusterError("no Dask scheduler address (--scheduler) or file "
                               "(--scheduler-file)")
        secure = None
        if tls is not None:
            secure = security(tls)
            if not address.startswith("tls://"):
                raise ClusterError(f"--tls: the scheduler's address {address!r} is not tls:// "
                                   f"(start the scheduler with --protocol tls and the "
                                   f"certificates: docs/cluster.md)")
        elif address.startswith("tls://"):
            raise ClusterError(f"the scheduler {address!r} speaks TLS: give the folder of its "
                               f"certificates with --tls DIR (ct-referee cluster-certs DIR)")
        self.address = address
        self.authenticated = secure is not None
        """Whether every machine of the cluster proved itself with a certificate of the
        ``--tls`` folder's authority (a plain ``tcp://`` cluster admits any worker)."""
        self.sandbox = sandbox
        self.warn = warn
        self.spread = spread
        """Each seating of a duplicate set on another host than the set's earlier ones, where
        the cluster has enough (the bots of one seating cannot leave the next one a note on
        the machine's disk)."""
        self._futures: dict[Future[Any], _Task] = {}
        """Each task's match, or a duplicate set's seatings (:meth:`submit_set`)."""
        self._warned: set[str] = set()
        self._slots = (0.0, 1)
        self._workers: dict[str, str] = {}  # address: host, at the last look
        self._hosts: OrderedDict[tuple[int, int], set[str]] = OrderedDict()
        self._aborted: list[RunnerEvent] = []
        self._attempts: dict[str, int] = {}
        self._moved_into: set[Path] = set()
        """Folders a worker's record was moved into since the last :meth:`_sweep`."""
        try:
            self.client: Client = Client(address, timeout=timeout, set_as_default=False,
                                         security=secure)
        except Exception as err:
            raise ClusterError(f"cannot reach the Dask scheduler {address!r}: "
                               f"{_one_line(err)}") from None
        try:
            if expected is not None:
                self._check_identity(expected, scheduler_file)
            self._check(timeout)
        except BaseException:
            self.close()
            raise

    def _check_identity(self, expected: str, path: Path | None) -> None:
        """The scheduler that answers is the one that wrote the scheduler file: a stale file
        (its scheduler gone, its port since taken by another) would send every match, and the
        deal secret with it, to someone else's cluster."""
        try:
            found = _scheduler_info(self.client).get("id")
        except Exception as err:
            raise ClusterError(f"cannot ask the Dask scheduler {self.address!r} who it is: "
                               f"{_one_line(err)}") from None
        if found != expected:
            raise ClusterError(f"the Dask scheduler at {self.address!r} is not the one that "
                               f"wrote {str(path)!r} (it is {found!r}, the file names "
                               f"{expected!r}): the file is stale and another program has "
                               f"its port; start the scheduler again")

    @property
    def isolation(self) -> str:
        """What keeps a duplicate set's seatings apart, for the header."""
        hosts = len(set(self._workers.values()))
        where = (f"each on another host where the cluster has enough ({hosts} now)"
                 if self.spread else "on any worker")
        return f"the seatings of a set never at once, {where}"

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
        workers = _scheduler_info(self.client)["workers"]
        now = {address: host_of(address) for address, w in workers.items()
               if w.get("resources", {}).get(RESOURCE, 0)}
        gone = sorted(set(self._workers) - set(now))
        if gone and self.warn is not None:
            self.warn(f"lost Dask worker{'s' if len(gone) > 1 else ''} {', '.join(gone)} "
                      f"({len(now)} left): its matches are played again on the others")
        self._workers = now
        return int(sum(w.get("resources", {}).get(RESOURCE, 0) for w in workers.values()))

    def slots(self) -> int:
        """See :meth:`Runner.slots`: twice the workers' ``match`` resources (asked at most
        every :data:`SLOTS_REFRESH_S`), so each worker has its next match queued."""
        at, slots = self._slots
        if time.monotonic() - at > SLOTS_REFRESH_S:
            with contextlib.suppress(Exception):  # a lost scheduler shows up in wait()
                slots = max(1, 2 * self._capacity())
            self._slots = (time.monotonic(), slots)
        return slots

    @property
    def by_set(self) -> bool:
        """Whether whole duplicate sets go as one task each (:meth:`submit_set`): where the
        seatings cannot or need not be spread over hosts (one host, or ``spread`` off), a set
        is one task, not one per seating (6 times fewer at 3 seats), its seatings played one
        after another on one worker as they would be anyway."""
        return not self.spread or len(set(self._workers.values())) <= 1

    def submit_set(self, jobs: list[MatchJob]) -> None:
        """Plays the seatings of one duplicate set, in order, as one task; each ends with its
        own :class:`Finished` or :class:`Failed`, as if submitted one by one."""
        jobs = [self._configured(job) for job in jobs]
        self._submit_set(jobs, f"{task_key(jobs[0])}-set{len(jobs)}")

    def _configured(self, job: MatchJob) -> MatchJob:
        """``job`` with the configured sandbox mode (resolved on the worker), where set."""
        return job if self.sandbox is None else dataclasses.replace(job, sandbox=self.sandbox)

    def _submit_set(self, jobs: list[MatchJob], key: str) -> None:
        future = self.client.submit(play_set_on_worker, [job.sealed() for job in jobs], key=key,
                                    pure=False, resources={RESOURCE: 1})
        self._futures[future] = _Task(tuple(jobs), whole_set=True)

    def submit(self, job: MatchJob) -> None:
        """See :meth:`Runner.submit`."""
        job = self._configured(job)
        self._submit(job, task_key(job))

    def _submit(self, job: MatchJob, key: str) -> None:
        workers = None
        if self.spread:
            used = self._hosts.get(job.spec.deals_key, set())
            workers = [a for a, host in self._workers.items() if host not in used] or None
        future = self.client.submit(play_on_worker, job.sealed(), key=key, pure=False,
                                    resources={RESOURCE: 1}, workers=workers,
                                    allow_other_workers=workers is not None)
        self._futures[future] = _Task((job,), whole_set=False)

    def _played_on(self, job: MatchJob, worker: str) -> None:
        """Notes the host a seating of the set was played on."""
        hosts = self._hosts.setdefault(job.spec.deals_key, set())
        hosts.add(host_of(worker))
        self._hosts.move_to_end(job.spec.deals_key)
        while len(self._hosts) > SPREAD_KEYS:
            self._hosts.popitem(last=False)

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
            task = self._futures.pop(future)
            again: list[MatchJob] = []  # a set's seatings its closing worker stopped
            result = _Result(future)  # fetched once, not once per seating of a set
            for i, job in enumerate(task.jobs):
                try:
                    event = self._outcome(future, result, job, lost, task.index(i))
                    if isinstance(event, Requeued):
                        again.append(job)
                        continue
                    if isinstance(event, Finished):  # its faults, as they were recorded
                        events += faulted(job, event.done.line)
                except Exception as err:  # a report no honest worker sends, or a full disk
                    event = Failed(job, ClusterError(
                        f"match {job.spec.id}: its worker's report cannot be taken: "
                        f"{type(err).__name__}: {_one_line(err)}"))
                events.append(event)
            if task.whole_set and again:  # one after another again, never at once
                self._submit_set(again, f"{task_key(again[0])}-set{len(again)}-again"
                                        f"{self._attempts[again[0].spec.id]}")
        if not self._futures:
            self._sweep()
        return events

    def _sweep(self) -> None:
        """Removes the attempts' files of matches already saved from the folders records were
        moved into: an attempt whose result never came back (its worker closed: Dask drops a
        closing worker's results and plays its task again elsewhere) leaves its record under
        its own name. Done when no task is out (a round's end, the run's): one look at each
        folder, and no attempt still running of this runner is touched."""
        for folder in self._moved_into:
            with contextlib.suppress(OSError), os.scandir(folder) as entries:
                for entry in entries:
                    name = entry.name
                    if name.startswith(".") and name.endswith(".tmp") \
                            and (folder / name[1:].rsplit(".", 2)[0]).is_file():
                        Path(entry.path).unlink(missing_ok=True)
        self._moved_into.clear()

    def _outcome(self, future: Future[Any], result: _Result, job: MatchJob,
                 lost: bool = False, index: int | None = None) -> RunnerEvent | Requeued:
        """What became of ``job``: the task's, or the ``index``-th seating of a set's task."""
        from distributed import KilledWorker

        if lost or future.status == "cancelled":  # not by us: cancel() forgets its futures first
            return Failed(job, ClusterError(f"lost the Dask scheduler {self.address!r} while "
                                            f"match {job.spec.id} was played"))
        try:
            played: WorkerReport = result.get() if index is None else \
                _unpack(result.get()[index])
        except KilledWorker:
            return Failed(job, ClusterError(
                f"match {job.spec.id} was lost with every Dask worker that tried it (the "
                f"scheduler's distributed.scheduler.allowed-failures)"))
        except MatchAborted:  # its worker closed mid-match (not our cancel): play it again
            return self._again(job, submit=index is None)
        except BotCommandError as err:
            return Failed(job, err)
        except Exception as err:
            return Failed(job, ClusterError(f"match {job.spec.id} failed on a Dask worker: "
                                            f"{type(err).__name__}: {_one_line(err)}"))
        if not isinstance(played, WorkerReport):  # a worker's word is not to be trusted
            return Failed(job, ClusterError(f"match {job.spec.id}: its worker sent back a "
                                            f"{type(played).__name__}, not a report"))
        if job.logs_dir is not None and played.logs:
            job.logs_dir.mkdir(parents=True, exist_ok=True)
            for name, data in played.logs.items():
                if not isinstance(name, str) or name in ("", ".", "..") or \
                        name != Path(name).name or not isinstance(data, bytes):
                    return Failed(job, ClusterError(f"match {job.spec.id}: its worker sent "
                                                    f"a log named {name!r}"))
                (job.logs_dir / name).write_bytes(data)
        self._played_on(job, played.worker)
        if played.sandbox is SandboxMode.NONE and self.sandbox is SandboxMode.AUTO \
                and self.warn is not None \
                and played.worker not in self._warned:
            self._warned.add(played.worker)
            self.warn(f"worker {played.worker} has no working bubblewrap (bwrap): its bots "
                      f"run without a sandbox")
        if played.written is not None and played.line is not None \
                and job.record_path is not None:  # written (synced) on the shared folder
            written = played.written
            if not isinstance(written, Path) or written.parent != job.record_path.parent or not (
                    written.name.startswith(f".{job.record_path.name}.")
                    and written.name.endswith(".tmp")):  # a worker's word is not a path to move
                return Failed(job, ClusterError(f"match {job.spec.id}: its worker reported a "
                                                f"record at {str(written)!r}, not beside "
                                                f"{job.record_path.name}"))
            try:
                if not stat.S_ISREG(os.lstat(written).st_mode):  # a link to anywhere, say
                    return Failed(job, ClusterError(f"match {job.spec.id}: its worker reported "
                                                    f"a record at {str(written)!r}, which is "
                                                    f"not a plain file"))
                why = job.refusal(_read_record(written), played.line)
                if why is not None:
                    return Failed(job, refused(job, played.worker, why))
                os.replace(written, job.record_path)
                self._moved_into.add(written.parent)
            except OSError as err:
                return Failed(job, ClusterError(f"match {job.spec.id}: cannot move the record "
                                                f"its worker wrote: {_one_line(err)}"))
            return Finished(job, Done(played.line))
        if played.record is None:  # neither written on the shared folder nor sent
            return Failed(job, ClusterError(f"match {job.spec.id}: its worker sent back no "
                                            f"record"))
        why = job.refusal(played.record, played.line)
        if why is not None:
            return Failed(job, refused(job, played.worker, why))
        return Finished(job, job.finish(played.record))

    def _again(self, job: MatchJob, *, submit: bool = True) -> RunnerEvent | Requeued:
        """``job`` to be played again (by itself, or with the rest of its set by the caller:
        ``submit`` false), unless it was stopped :data:`RETRIES` times already."""
        attempt = self._attempts.get(job.spec.id, 0) + 1
        if attempt > RETRIES:
            return Failed(job, ClusterError(f"match {job.spec.id} was stopped by {attempt} "
                                            f"closing Dask workers in a row"))
        self._attempts[job.spec.id] = attempt
        if submit:
            self._submit(job, f"{task_key(job)}-again{attempt}")
        return Requeued(job)

    def cancel(self) -> None:
        """See :meth:`Runner.cancel`: cancels every task (running ones stop at their next
        turn, when their worker sees the task is no longer wanted)."""
        futures, self._futures = self._futures, {}
        with contextlib.suppress(Exception):
            self.client.cancel(list(futures), force=True)
        self._aborted += [Failed(job, MatchAborted(f"match {job.spec.id} stopped"))
                          for task in futures.values() for job in task.jobs]

    def close(self) -> None:
        """See :meth:`Runner.close`."""
        with contextlib.suppress(Exception):
            self.client.close(timeout=5)

    def __enter__(self) -> ClusterRunner:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class RefusedResult(ClusterError):
    """What a worker sent back for a match is not a play of that match under the rules with
    the coordinator's own deals (:meth:`~referee.match.job.MatchJob.refusal`): the match is not
    counted, and the tournament stops naming it and the worker."""


def refused(job: MatchJob, worker: Any, why: str) -> RefusedResult:
    """The one-line error of a refused result."""
    return RefusedResult(escape_controls(
        f"match {job.spec.id}: refused the result worker {worker!s:.80} sent back, not "
        f"counted: {why}"))


MAX_RECORD_BYTES = 64 << 20
"""The largest record file a worker may report (a record is well under a megabyte)."""


def _read_record(path: Path) -> Any:
    """The JSON in a record file a worker wrote, plain or compressed (opened without following a
    link, at most :data:`MAX_RECORD_BYTES`, decompressed to at most as much); a string saying
    what it is instead when it is not JSON."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as file:
        data = file.read(MAX_RECORD_BYTES + 1)
    if len(data) > MAX_RECORD_BYTES:
        return f"a file of more than {MAX_RECORD_BYTES >> 20} MiB"
    if data[:2] == b"\x1f\x8b":  # compressed (games/<id>.json.gz)
        try:
            data = gunzip(data)
        except RecordError:
            return f"compressed, damaged or more than {MAX_BYTES >> 20} MiB once decompressed"
    try:
        return json.loads(data)
    except ValueError:
        return "a file that is not JSON"


def _quiet_dask() -> None:
    """Silences Dask's own logging in this process: a lost connection is reported once, as
    one line, by the tournament, not as Dask's tracebacks."""
    names = [n for n in logging.root.manager.loggerDict if n.split(".")[0] == "distributed"]
    for name in ["distributed", *names]:
        logging.getLogger(name).setLevel(logging.CRITICAL + 1)


def _one_line(err: BaseException) -> str:
    text = " ".join(str(err).split()) or type(err).__name__
    return text[:300]
