"""What a Dask worker runs for :class:`~referee.runners.cluster.ClusterRunner`: one match
(:func:`play_on_worker`) or a duplicate set's seatings (:func:`play_set_on_worker`), each
resolving the sandbox on the worker and reporting back a :class:`WorkerReport` (the record and
logs, or, on a shared output folder, the result line and the file it wrote). Imported by the
workers and by the confined Dask client (:mod:`referee.runners.dask_client`), never trusted by
the coordinator: see ``docs/cluster.md``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from referee.bots.limits import SandboxMode
from referee.bots.process import BotCommandError, resolve_sandbox
from referee.match.play import MatchAborted
from referee.records.record import RecordDict

if TYPE_CHECKING:
    from referee.match.job import MatchJob

__all__ = ["RESOURCE", "WorkerReport", "play_on_worker", "play_set_on_worker", "quiet_dask",
           "scheduler_info", "shares_output"]

RESOURCE = "match"
"""The Dask worker resource a match needs one unit of."""


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


def scheduler_info(client: Any) -> dict[str, Any]:
    """The scheduler's identity and **every** worker: some releases of distributed list only
    5 workers unless asked for all (``n_workers=-1``); older ones know no such argument."""
    try:
        return dict(client.scheduler_info(n_workers=-1))
    except TypeError:
        return dict(client.scheduler_info())


def quiet_dask() -> None:
    """Silences Dask's own logging in this process: a lost connection is reported once, as
    one line, by the tournament, not as Dask's tracebacks."""
    names = [n for n in logging.root.manager.loggerDict if n.split(".")[0] == "distributed"]
    for name in ["distributed", *names]:
        logging.getLogger(name).setLevel(logging.CRITICAL + 1)
