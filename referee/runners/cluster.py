"""Matches on a Dask cluster: :class:`ClusterRunner`, the :class:`~referee.runners.local.Runner`
whose matches are tasks (:func:`task_key`, one unit of the ``match`` resource each) on the
workers of a ``distributed`` scheduler the organiser started. The workers run
:mod:`referee.runners.worker`; the Dask client runs in a process of its own, as a uid that can
read neither the deal secret nor the output folder (:mod:`referee.runners.confined`); what comes
back is taken in, replayed and saved or refused as the worker's fault, by
:mod:`referee.runners.intake`. Execution is at least once, saving exactly once. Why, and how to
set a cluster up: ``docs/cluster.md``.

Requires the ``distributed`` package (``pip install 'ct-referee[distributed]'``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.util
import json
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from referee.bots.limits import SandboxMode
from referee.bots.process import BotCommandError
from referee.match.play import MatchAborted
from referee.protocol.escape import escape_controls
from referee.runners.confined import ClientProcess, ConfinementError
from referee.runners.intake import (
    FAULT_LIMIT,
    FAULTS_FILE,
    MATCH_FAULTS,
    ClusterError,
    FaultBook,
    RefusedResult,
    accept,
    bad_log,
    decode_report,
    one_line,
    refused,
    sweep,
    worker_name,
    write_logs,
)
from referee.runners.local import Failed, Finished, Placement, Runner, RunnerEvent, faulted
from referee.runners.worker import RESOURCE, WorkerReport, play_on_worker, shares_output

if TYPE_CHECKING:
    from referee.match.job import MatchJob

__all__ = ["CA_FILE", "CA_KEY_FILE", "CONNECT_TIMEOUT_S", "FAULTS_FILE", "FAULT_LIMIT",
           "RESOURCE", "SCHEDULER_CERT", "WORKER_CERT", "ClusterError", "ClusterRunner",
           "RefusedResult", "WorkerReport", "plain_tcp_warning", "play_on_worker",
           "read_scheduler_file", "shares_output", "task_key"]

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


SPREAD_KEYS = 10_000
"""Duplicate sets whose hosts :class:`ClusterRunner` remembers (to spread their seatings)."""
RETRIES = 3
"""How many times a match stopped by its worker closing (not by the coordinator) is played
again before the tournament stops (a worker that dies outright is Dask's to reschedule)."""


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


def client_settings(address: str | None, *, scheduler_file: Path | None, tls: Path | None,
                    timeout: float) -> dict[str, Any]:
    """What the client process is handed to connect: the scheduler's address (from
    ``scheduler_file``, where given) and the id it must have, the ``--tls`` folder's
    certificates (``tls``: ``None`` where not given), ``timeout``.

    :raises ClusterError: for no address, a ``tls://`` address without ``tls`` or the reverse,
        or a ``--tls`` folder without its files.
    """
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
    return {"address": address, "timeout": timeout, "tls": certs, "expected": expected,
            "file": None if scheduler_file is None else str(scheduler_file)}


RESTARTS = 3
"""How many times a client process that ended is started again."""


class ClusterRunner(Runner):
    """Plays matches as tasks on the workers of the Dask scheduler at ``address``
    (``tcp://host:8786``), keeping twice the cluster's ``match`` capacity submitted. The Dask
    client is a process of its own (:class:`~referee.runners.confined.ClientProcess`): this
    process never unpickles what a worker made, and counts a result only once replayed.

    ``sandbox`` (the configured mode: ``auto``, ``bwrap``, ``none``) replaces each job's, to be
    resolved on the worker that plays it; ``warn`` is told once per worker that runs ``auto``
    without bubblewrap, and of each worker's fault; ``faults_file``: where the fault book is
    written at each fault (``cluster-faults.json`` in the output folder). ``spread``: each
    seating of a duplicate set on another host than the set's earlier ones, where the cluster
    has enough (the bots of one seating cannot leave the next one a note on the machine's
    disk). Connecting happens here, so an unreachable scheduler is an error before any match
    starts.

    :raises ClusterError: if the scheduler cannot be reached within ``timeout`` seconds, has no
        worker by then, or none of its workers offers the ``match`` resource.
    """

    remote = True
    """Its bots are spawned on other machines: the tournament leaves the sandbox mode to them."""

    def __init__(self, address: str | None = None, *, sandbox: SandboxMode | None = None,
                 warn: Callable[[str], None] | None = None,
                 timeout: float = CONNECT_TIMEOUT_S, scheduler_file: Path | None = None,
                 spread: bool = True, tls: Path | None = None,
                 faults_file: Path | None = None) -> None:
        self._settings = client_settings(address, scheduler_file=scheduler_file, tls=tls,
                                         timeout=timeout)
        self.address: str = self._settings["address"]
        self.authenticated = tls is not None
        """Whether every machine of the cluster proved itself with a certificate of the
        ``--tls`` folder's authority (a plain ``tcp://`` cluster admits any worker)."""
        self.sandbox, self.warn, self.spread = sandbox, warn, spread
        self._tasks: dict[str, _Task] = {}
        """Each task's match, or a duplicate set's seatings (:meth:`submit_set`), by key."""
        self._warned: set[str] = set()
        self._workers: dict[str, str] = {}  # address: host, at the last word of the client
        self._units: dict[str, int] = {}
        self._hosts: OrderedDict[tuple[int, int], set[str]] = OrderedDict()
        self._aborted: list[RunnerEvent] = []
        self._attempts: dict[str, int] = {}
        self._serial = self._restarts = 0
        self._counted = False  # a fault of the task being taken is in the book
        self.book = FaultBook(faults_file, warn)
        self._moved_into: set[Path] = set()
        """Folders a worker's record was moved into since the last :func:`sweep`."""
        self._timeout = timeout
        try:
            self.client = ClientProcess(self._settings, timeout)
        except ConfinementError as err:
            raise ClusterError(str(err)) from None
        self.confinement = self.client.confinement
        """The uid the Dask client runs as (for the header)."""
        self._looks = 0
        self._seen(self.client.ready.get("workers"))

    @property
    def placement(self) -> Placement:
        """See :attr:`Runner.placement`: the hosts at the client's last word."""
        return Placement(hosts=len(set(self._workers.values())), spread=self.spread,
                         client=self.confinement)

    def _seen(self, workers: Any) -> None:
        """The client's word of the cluster's workers (``{address: match units}``)."""
        if not isinstance(workers, dict):
            return
        now = {str(a): int(n) for a, n in workers.items()
               if isinstance(n, int) and not isinstance(n, bool) and n > 0}
        gone = sorted(set(self._workers) - set(now))
        if gone and self.warn is not None:
            self.warn(f"lost Dask worker{'s' if len(gone) > 1 else ''} "
                      f"{', '.join(worker_name(g) for g in gone)} ({len(now)} left): its "
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
        self._send(key, _Task(tuple(jobs), whole_set=True), [job.sealed() for job in jobs],
                   self._usable(set()), loose=False)

    def submit(self, job: MatchJob) -> None:
        """See :meth:`Runner.submit`."""
        job = self._configured(job)
        self._submit(job, task_key(job))

    def _submit(self, job: MatchJob, key: str) -> None:
        usable = self._usable(self.book.avoid.get(job.spec.id, set()))
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
            sweep(self._moved_into)
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
        worker = worker_name(message.get("worker"))
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
                                                 f"cannot be taken: {one_line(err)}"))
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
        played = decode_report(outcome.get("report"))
        if isinstance(played, str):
            return self._fault(job, worker, f"its report: {played}")
        played = dataclasses.replace(played, worker=worker)
        why = bad_log(played) if job.logs_dir is not None else None
        accepted = why or self._accept(job, played)
        if isinstance(accepted, str):
            return self._fault(job, worker, accepted)
        write_logs(job, played)
        self._played_on(job, worker)
        if played.sandbox is SandboxMode.NONE and self.sandbox is SandboxMode.AUTO \
                and self.warn is not None and worker not in self._warned:
            self._warned.add(worker)
            self.warn(f"worker {worker} has no working bubblewrap (bwrap): its bots run "
                      f"without a sandbox")
        return accepted

    def _accept(self, job: MatchJob, played: WorkerReport) -> Finished | str:
        """``played`` counted (its record replayed and saved), or why it is refused."""
        return accept(job, played, self._moved_into)

    def _fault(self, job: MatchJob, worker: str, why: str, *,
               bot: bool = False) -> RunnerEvent | Requeued:
        """A faulty result of ``worker``: noted in the book, and the match played again on
        another worker (the faulty one never again for it), unless it came back faulty
        :data:`MATCH_FAULTS` times or no worker is left for it."""
        faults = self.book.note(worker, job.spec.id, why, first=not self._counted)
        self._counted = True  # one fault a task: a set's seatings come back from one report
        usable = self._usable(self.book.avoid[job.spec.id]) or []
        if faults >= MATCH_FAULTS or not usable:
            left = (f"{faults} faulty results" if usable else
                    "no worker left to play it")
            error = BotCommandError(why) if bot else refused(job, worker, why)
            return Failed(job, type(error)(f"{error} ({left})"))
        self._submit(job, f"{task_key(job)}-fault{faults}")
        return Requeued(job, whole=False)

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


def _one_line_text(text: str) -> str:
    return escape_controls(" ".join(text.split())[:300])
