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

The Dask client is not in this process: it runs in one of its own, as a uid that can read
neither the deal secret nor the output folder (:mod:`referee.runners.confined`,
:mod:`referee.runners.dask_client`), and sends each task's outcome as a JSON line; nothing a
worker made is unpickled here. A result that is not a play of its match (replayed with the
coordinator's deals) or cannot be read is that worker's fault (:class:`FaultBook`): the match
is played again on another worker, and a worker with :data:`FAULT_LIMIT` faults gets no more.

Requires the ``distributed`` package (``pip install 'ct-referee[distributed]'``).
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import hashlib
import importlib.util
import json
import logging
import os
import stat
import tempfile
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
from referee.records.record import MAX_BYTES, RecordDict, RecordError, gunzip, write_atomic
from referee.runners.confined import ClientProcess, ConfinementError
from referee.runners.local import (
    Failed,
    Finished,
    Runner,
    RunnerError,
    RunnerEvent,
    faulted,
)

if TYPE_CHECKING:
    from referee.match.job import MatchJob

__all__ = ["CA_FILE", "CA_KEY_FILE", "CONNECT_TIMEOUT_S", "RESOURCE", "SCHEDULER_CERT",
           "WORKER_CERT", "ClusterError", "ClusterRunner", "RefusedResult", "WorkerReport",
           "plain_tcp_warning", "play_on_worker", "read_scheduler_file", "security", "task_key"]

RESOURCE = "match"
"""The Dask worker resource a match needs one unit of."""
CONNECT_TIMEOUT_S = 10.0
"""How long to try to reach the scheduler (and to wait for a first worker)."""


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
    """A match submitted again (its worker closed mid-match, or sent a faulty result);
    ``whole``: with the rest of its set, by the caller."""

    job: MatchJob
    whole: bool = False


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


def _tls_settings(folder: Path) -> dict[str, bytes]:
    """The authority and the coordinator's certificate of a ``--tls`` folder, read here and
    handed to the client process (whose uid cannot read the folder).

    :raises ClusterError: for a folder without those files.
    """
    for name in (CA_FILE, SCHEDULER_CERT):
        if not (folder / name).is_file():
            raise ClusterError(f"--tls {folder}: no {name} in it (make the certificates with: "
                               f"ct-referee cluster-certs {folder})")
    try:
        return {"ca": (folder / CA_FILE).read_bytes(),
                "cert": (folder / SCHEDULER_CERT).read_bytes()}
    except OSError as err:
        raise ClusterError(f"--tls {folder}: cannot read: {err.strerror}") from None


FAULTS_FILE = "cluster-faults.json"
"""In the output folder: each worker whose results were refused, with its faults."""
FAULT_LIMIT = 3
"""The faults (results refused, garbage, errors) past which a worker is sent no more matches."""
MATCH_FAULTS = 5
"""How many faulty results one match may come back with before the tournament stops."""
RESTARTS = 3
"""How many times a client process that ended is started again."""


class FaultBook:
    """Each worker's faults: results the coordinator refused (a replay disagreed, garbage, an
    error no honest worker sends). A worker with :data:`FAULT_LIMIT` of them is no longer used;
    :meth:`summary` is what the report page says of them."""

    def __init__(self) -> None:
        self.faults: dict[str, list[dict[str, str]]] = {}
        self.excluded: set[str] = set()

    def add(self, worker: str, match: str, why: str) -> bool:
        """Notes a fault; ``True`` when it puts the worker past the limit (now excluded)."""
        self.faults.setdefault(worker, []).append({"match": match, "why": why})
        if len(self.faults[worker]) >= FAULT_LIMIT and worker not in self.excluded:
            self.excluded.add(worker)
            return True
        return False

    def summary(self) -> dict[str, Any]:
        """What ``cluster-faults.json`` holds."""
        return {"workers": {w: {"faults": f, "excluded": w in self.excluded}
                            for w, f in sorted(self.faults.items())}}


def _worker_name(value: Any) -> str:
    """The client's word of a worker's address, as one short printable line."""
    return escape_controls(str(value)[:120]) if isinstance(value, str) and value else \
        "an unknown worker"


def _report(data: Any) -> WorkerReport | str:
    """A report decoded from the client's JSON, or why it is not one."""
    if not isinstance(data, dict):
        return "not a report"
    logs = data.get("logs")
    if not isinstance(logs, dict) or not all(isinstance(v, str) for v in logs.values()):
        return "its logs are not a table of texts"
    try:
        decoded = {str(k): base64.b64decode(v, validate=True) for k, v in logs.items()}
        sandbox = SandboxMode(str(data.get("sandbox")))
    except (ValueError, TypeError):
        return "its logs or sandbox cannot be read"
    line, written = data.get("line"), data.get("written")
    if (line is not None and not isinstance(line, dict)) or \
            (written is not None and not isinstance(written, str)):
        return "its result line or record path is not one"
    return WorkerReport(data.get("record"), decoded, sandbox, "", line,
                        None if written is None else Path(written))


class ClusterRunner(Runner):
    """Plays matches as tasks on the workers of the Dask scheduler at ``address``
    (``tcp://host:8786``), keeping twice the cluster's ``match`` capacity submitted. The Dask
    client is a process of its own (:class:`~referee.runners.confined.ClientProcess`): this
    process never unpickles what a worker made, and counts a result only once replayed.

    ``sandbox`` (the configured mode: ``auto``, ``bwrap``, ``none``) replaces each job's, to be
    resolved on the worker that plays it; ``warn`` is told once per worker that runs ``auto``
    without bubblewrap, and of each worker's fault. Connecting happens here, so an unreachable
    scheduler is an error before any match starts.

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
        del quiet  # the client's process is quiet
        if importlib.util.find_spec("distributed") is None:
            raise ClusterError("--scheduler needs the distributed package: pip install "
                               "'ct-referee[distributed]'")
        expected: str | None = None
        if scheduler_file is not None:
            address, expected = read_scheduler_file(scheduler_file)
        if address is None:
            raise ClusterError("no Dask scheduler address (--scheduler) or file "
                               "(--scheduler-file)")
        certs = None
        if tls is not None:
            certs = _tls_settings(tls)
            if not address.startswith("tls://"):
                raise ClusterError(f"--tls: the scheduler's address {address!r} is not tls:// "
                                   f"(start the scheduler with --protocol tls and the "
                                   f"certificates: docs/cluster.md)")
        elif address.startswith("tls://"):
            raise ClusterError(f"the scheduler {address!r} speaks TLS: give the folder of its "
                               f"certificates with --tls DIR (ct-referee cluster-certs DIR)")
        self.address = address
        self.authenticated = certs is not None
        """Whether every machine of the cluster proved itself with a certificate of the
        ``--tls`` folder's authority (a plain ``tcp://`` cluster admits any worker)."""
        self.sandbox = sandbox
        self.warn = warn
        self.spread = spread
        """Each seating of a duplicate set on another host than the set's earlier ones, where
        the cluster has enough (the bots of one seating cannot leave the next one a note on
        the machine's disk)."""
        self._tasks: dict[str, _Task] = {}
        """Each task's match, or a duplicate set's seatings (:meth:`submit_set`), by key."""
        self._warned: set[str] = set()
        self._workers: dict[str, str] = {}  # address: host, at the last word of the client
        self._units: dict[str, int] = {}
        self._hosts: OrderedDict[tuple[int, int], set[str]] = OrderedDict()
        self._aborted: list[RunnerEvent] = []
        self._attempts: dict[str, int] = {}
        self._avoid: dict[str, set[str]] = {}  # match id: workers that sent it a faulty result
        self._serial = 0
        self._counted = False  # a fault of the task being taken is in the book
        self._faulty: dict[str, int] = {}  # match id: faulty results it came back with
        self._restarts = 0
        self.book = FaultBook()
        self.faults_file: Path | None = None
        """Where the fault book is written (``cluster-faults.json`` in the output folder) at
        each fault, where set."""
        self._moved_into: set[Path] = set()
        """Folders a worker's record was moved into since the last :meth:`_sweep`."""
        self._timeout = timeout
        self._settings = {"address": address, "timeout": timeout, "tls": certs,
                          "expected": expected,
                          "file": None if scheduler_file is None else str(scheduler_file)}
        try:
            self.client = ClientProcess(self._settings, timeout)
        except ConfinementError as err:
            raise ClusterError(str(err)) from None
        self.confinement = self.client.confinement
        """The uid the Dask client runs as (for the header)."""
        self._looks = 0
        self._seen(self.client.ready.get("workers"))

    @property
    def isolation(self) -> str:
        """What keeps a duplicate set's seatings apart, for the header."""
        hosts = len(set(self._workers.values()))
        where = (f"each on another host where the cluster has enough ({hosts} now)"
                 if self.spread else "on any worker")
        return (f"the seatings of a set never at once, {where}, and the Dask client in a "
                f"process of its own, as {self.confinement}")

    def _seen(self, workers: Any) -> None:
        """The client's word of the cluster's workers (``{address: match units}``)."""
        if not isinstance(workers, dict):
            return
        now = {str(a): int(n) for a, n in workers.items()
               if isinstance(n, int) and not isinstance(n, bool) and n > 0}
        gone = sorted(set(self._workers) - set(now))
        if gone and self.warn is not None:
            self.warn(f"lost Dask worker{'s' if len(gone) > 1 else ''} "
                      f"{', '.join(_worker_name(g) for g in gone)} ({len(now)} left): its "
                      f"matches are played again on the others")
        self._workers = {a: host_of(a) for a in now}
        self._units = now

    def _look(self) -> None:
        """Takes the client's latest word of the workers, where it said something new."""
        if self.client.looks != self._looks:
            self._looks = self.client.looks
            self._seen(self.client.workers)

    def slots(self) -> int:
        """See :meth:`Runner.slots`: twice the usable workers' ``match`` resources, so each
        worker has its next match queued."""
        self._look()
        units = sum(n for a, n in self._units.items() if a not in self.book.excluded)
        return max(1, 2 * units)

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

    def _usable(self, avoid: set[str]) -> list[str] | None:
        """The workers a task may go to (``None``: any), leaving out the excluded and
        ``avoid``."""
        if not self.book.excluded and not avoid:
            return None
        return [a for a in self._workers if a not in self.book.excluded and a not in avoid]

    def _submit_set(self, jobs: list[MatchJob], key: str) -> None:
        workers = self._usable(set())
        self._send(key, _Task(tuple(jobs), whole_set=True), [job.sealed() for job in jobs],
                   workers, loose=False)

    def submit(self, job: MatchJob) -> None:
        """See :meth:`Runner.submit`."""
        job = self._configured(job)
        self._submit(job, task_key(job))

    def _submit(self, job: MatchJob, key: str) -> None:
        usable = self._usable(self._avoid.get(job.spec.id, set()))
        workers, loose = usable, False
        if self.spread:
            used = self._hosts.get(job.spec.deals_key, set())
            pool = usable if usable is not None else list(self._workers)
            fresh = [a for a in pool if self._workers.get(a) not in used]
            if fresh:
                workers, loose = fresh, usable is None
        self._send(key, _Task((job,), whole_set=False), [job.sealed()], workers or None, loose)

    def _send(self, key: str, task: _Task, sealed: list[MatchJob], workers: list[str] | None,
              loose: bool) -> None:
        self._serial += 1
        key = f"{key}-{self._serial}"  # a key of this attempt's own (a restarted client too)
        self._tasks[key] = task
        self.client.send(("submit", key, task.whole_set, sealed, workers,
                          loose and workers is not None))

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
        events, self._aborted = self._aborted, []
        if not self._tasks:
            return events
        for message in self.client.messages(0.0 if events else timeout):
            if "key" in message:
                events += self._finished(message)
            elif "lost" in message or "eof" in message or "broken" in message:
                events += self._restart(str(message.get("lost") or message.get("broken")
                                            or "it ended"))
        self._look()
        if not self._tasks:
            self._sweep()
        return events

    def _restart(self, why: str) -> list[RunnerEvent]:
        """The client process ended: started again (its tasks sent again), at most
        :data:`RESTARTS` times; past that, or with the scheduler gone, every match out fails."""
        tasks, self._tasks = self._tasks, {}
        self.client.close()
        self._restarts += 1
        if self._restarts <= RESTARTS and "lost its scheduler" not in why:
            with contextlib.suppress(ConfinementError):
                self.client = ClientProcess(self._settings, self._timeout)
                if self.warn is not None:
                    self.warn(f"the Dask client process ended ({_one_line_text(why)}): "
                              f"started again, its {len(tasks)} tasks sent again")
                self._looks = 0
                self._seen(self.client.ready.get("workers"))
                for key, task in tasks.items():
                    base = key.rsplit("-", 1)[0]
                    self._send(base, task, [job.sealed() for job in task.jobs],
                               self._usable(set()), loose=False)
                return []
        return [Failed(job, ClusterError(f"lost the Dask scheduler {self.address!r} while "
                                         f"match {job.spec.id} was played"))
                for task in tasks.values() for job in task.jobs]

    def _finished(self, message: dict[str, Any]) -> list[RunnerEvent]:
        task = self._tasks.pop(str(message.get("key")), None)
        if task is None:
            return []
        worker = _worker_name(message.get("worker"))
        outcomes = message.get("outcomes")
        if task.whole_set and isinstance(outcomes, list) and len(outcomes) == len(task.jobs):
            each = list(outcomes)
        else:
            each = [message.get("outcome")] * len(task.jobs)
        events: list[RunnerEvent] = []
        again: list[MatchJob] = []  # a set's seatings its closing worker stopped
        self._counted = False
        for job, outcome in zip(task.jobs, each, strict=True):
            try:
                event = self._outcome(job, outcome, worker, submit=not task.whole_set)
                if isinstance(event, Requeued):
                    again += [job] if event.whole else []
                    continue
                if isinstance(event, Finished):  # its faults, as they were recorded
                    events += faulted(job, event.done.line)
            except OSError as err:  # a full disk
                event = Failed(job, ClusterError(f"match {job.spec.id}: its worker's report "
                                                 f"cannot be taken: {_one_line(err)}"))
            events.append(event)
        if again:  # one after another again, never at once
            self._submit_set(again, f"{task_key(again[0])}-set{len(again)}-again")
        return events

    def _outcome(self, job: MatchJob, outcome: Any, worker: str,
                 submit: bool) -> RunnerEvent | Requeued:
        """What became of ``job`` from what the client said of its task."""
        if not isinstance(outcome, dict):
            return self._fault(job, worker, "its result is not an outcome")
        error = outcome.get("error")
        if isinstance(error, dict):
            kind, text = error.get("kind"), escape_controls(str(error.get("message"))[:300])
            if kind == "cancelled":  # not by us: cancel() forgets its tasks first
                return Failed(job, ClusterError(f"lost the Dask scheduler {self.address!r} "
                                                f"while match {job.spec.id} was played"))
            if kind == "killed":
                return Failed(job, ClusterError(
                    f"match {job.spec.id} was lost with every Dask worker that tried it (the "
                    f"scheduler's distributed.scheduler.allowed-failures)"))
            if kind == "aborted":  # its worker closed mid-match (not our cancel)
                return self._again(job, submit=submit)
            return self._fault(job, worker, f"{text}" if kind == "bot_command"
                               else f"failed on it: {text}", bot=kind == "bot_command")
        played = _report(outcome.get("report"))
        if isinstance(played, str):
            return self._fault(job, worker, f"its report: {played}")
        played = dataclasses.replace(played, worker=worker)
        if job.logs_dir is not None and played.logs:
            for name in played.logs:
                if name in ("", ".", "..") or name != Path(name).name:
                    return self._fault(job, worker, f"it sent a log named {name!r}")
        accepted = self._accept(job, played)
        if isinstance(accepted, str):
            return self._fault(job, worker, accepted)
        if job.logs_dir is not None and played.logs:
            job.logs_dir.mkdir(parents=True, exist_ok=True)
            for name, data in played.logs.items():
                (job.logs_dir / name).write_bytes(data)
        self._played_on(job, worker)
        if played.sandbox is SandboxMode.NONE and self.sandbox is SandboxMode.AUTO \
                and self.warn is not None and worker not in self._warned:
            self._warned.add(worker)
            self.warn(f"worker {worker} has no working bubblewrap (bwrap): its bots run "
                      f"without a sandbox")
        return accepted

    def _accept(self, job: MatchJob, played: WorkerReport) -> Finished | str:
        """``played`` counted (its record replayed and saved), or why it is refused."""
        if played.written is not None and played.line is not None \
                and job.record_path is not None:  # written (synced) on the shared folder
            written = played.written
            if written.parent != job.record_path.parent or not (
                    written.name.startswith(f".{job.record_path.name}.")
                    and written.name.endswith(".tmp")):  # a worker's word is not a path to move
                return (f"it reported a record at {escape_controls(str(written))!r}, not "
                        f"beside {job.record_path.name}")
            try:
                if not stat.S_ISREG(os.lstat(written).st_mode):  # a link to anywhere, say
                    return (f"it reported a record at {escape_controls(str(written))!r}, "
                            f"which is not a plain file")
                why = job.refusal(_read_record(written), played.line)
                if why is not None:
                    return why
                os.replace(written, job.record_path)
                self._moved_into.add(written.parent)
            except OSError as err:
                return f"the record it wrote cannot be moved: {_one_line(err)}"
            return Finished(job, Done(played.line))
        if played.record is None:  # neither written on the shared folder nor sent
            return "it sent back no record"
        why = job.refusal(played.record, played.line)
        if why is not None:
            return why
        return Finished(job, job.finish(played.record))

    def _fault(self, job: MatchJob, worker: str, why: str, *,
               bot: bool = False) -> RunnerEvent | Requeued:
        """A faulty result of ``worker``: noted in the book, and the match played again on
        another worker (the faulty one never again for it), unless it came back faulty
        :data:`MATCH_FAULTS` times or no worker is left for it."""
        match = job.spec.id
        excluded, first = False, not self._counted
        if first:  # one fault a task: a set's seatings come back from one report
            self._counted = True
            excluded = self.book.add(worker, match, why)
        if first and self.faults_file is not None:
            with contextlib.suppress(OSError):
                write_atomic(self.faults_file, json.dumps(self.book.summary(), indent=1) + "\n")
        avoid = self._avoid.setdefault(match, set())
        avoid.add(worker)
        if self.warn is not None and first:
            self.warn(f"worker {worker}: match {match}: {why}; not counted, played again "
                      f"elsewhere")
            if excluded:
                self.warn(f"worker {worker}: {FAULT_LIMIT} faults: no longer sent matches")
        faults = self._faulty[match] = self._faulty.get(match, 0) + 1
        usable = self._usable(avoid) or []
        if faults >= MATCH_FAULTS or not usable:
            left = (f"{faults} faulty results" if usable else
                    "no worker left to play it")
            error = BotCommandError(why) if bot else refused(job, worker, why)
            return Failed(job, type(error)(f"{error} ({left})"))
        self._submit(job, f"{task_key(job)}-fault{faults}")
        return Requeued(job, whole=False)

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
        return Requeued(job, whole=not submit)

    def cancel(self) -> None:
        """See :meth:`Runner.cancel`: cancels every task (running ones stop at their next
        turn, when their worker sees the task is no longer wanted)."""
        tasks, self._tasks = self._tasks, {}
        self.client.send(("cancel", list(tasks)))
        self._aborted += [Failed(job, MatchAborted(f"match {job.spec.id} stopped"))
                          for task in tasks.values() for job in task.jobs]

    def close(self) -> None:
        """See :meth:`Runner.close`."""
        with contextlib.suppress(Exception):
            self.client.close()

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


def _one_line_text(text: str) -> str:
    return escape_controls(" ".join(text.split())[:300])
