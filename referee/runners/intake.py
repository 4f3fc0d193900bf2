"""What a Dask worker sends back, taken in by :class:`~referee.runners.cluster.ClusterRunner`
without trusting it: the client's JSON decoded (:func:`decode_report`), the record replayed with
the coordinator's deals and saved, or refused as the worker's fault (:func:`accept`), and each
worker's faults (:class:`FaultBook`). Nothing here unpickles what a worker made: see
``docs/cluster.md``.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from referee.bots.limits import SandboxMode
from referee.match.job import Done
from referee.protocol.escape import escape_controls
from referee.records.record import MAX_BYTES, RecordError, gunzip, write_atomic
from referee.runners.local import Finished, RunnerError
from referee.runners.worker import WorkerReport

if TYPE_CHECKING:
    from referee.match.job import MatchJob

__all__ = ["FAULTS_FILE", "FAULT_LIMIT", "MATCH_FAULTS", "ClusterError", "FaultBook",
           "RefusedResult", "accept", "bad_log", "decode_report", "one_line", "refused", "sweep",
           "worker_name", "write_logs"]


class ClusterError(RunnerError):
    """The cluster cannot be used, or went away; the message is one line."""


FAULTS_FILE = "cluster-faults.json"
"""In the output folder: each worker whose results were refused, with its faults."""
FAULT_LIMIT = 3
"""The faults (results refused, garbage, errors) past which a worker is sent no more matches."""
MATCH_FAULTS = 5
"""How many faulty results one match may come back with before the tournament stops."""


class FaultBook:
    """Each worker's faults: results the coordinator refused (a replay disagreed, garbage, an
    error no honest worker sends). A worker with :data:`FAULT_LIMIT` of them is no longer used;
    :meth:`summary` is what the report page says of them, written to ``file`` at each fault
    (``cluster-faults.json`` in the output folder), where given; ``warn`` is told of each."""

    def __init__(self, file: Path | None = None,
                 warn: Callable[[str], None] | None = None) -> None:
        self.faults: dict[str, list[dict[str, str]]] = {}
        self.excluded: set[str] = set()
        self.file, self.warn = file, warn
        self.avoid: dict[str, set[str]] = {}
        """Match id: the workers that sent it a faulty result (never sent it again)."""
        self.of_match: dict[str, int] = {}
        """Match id: the faulty results it came back with."""

    def add(self, worker: str, match: str, why: str) -> bool:
        """Notes a fault; ``True`` when it puts the worker past the limit (now excluded)."""
        self.faults.setdefault(worker, []).append({"match": match, "why": why})
        if len(self.faults[worker]) >= FAULT_LIMIT and worker not in self.excluded:
            self.excluded.add(worker)
            return True
        return False

    def note(self, worker: str, match: str, why: str, *, first: bool) -> int:
        """A faulty result of ``worker`` for ``match``: in the book, its file and the warnings
        where ``first`` (one fault a task: a set's seatings come back from one report), and
        ``worker`` avoided for the match; the faulty results the match came back with."""
        excluded = self.add(worker, match, why) if first else False
        if first and self.file is not None:
            with contextlib.suppress(OSError):
                write_atomic(self.file, json.dumps(self.summary(), indent=1) + "\n")
        self.avoid.setdefault(match, set()).add(worker)
        if self.warn is not None and first:
            self.warn(f"worker {worker}: match {match}: {why}; not counted, played again "
                      f"elsewhere")
            if excluded:
                self.warn(f"worker {worker}: {FAULT_LIMIT} faults: no longer sent matches")
        self.of_match[match] = self.of_match.get(match, 0) + 1
        return self.of_match[match]

    def summary(self) -> dict[str, Any]:
        """What ``cluster-faults.json`` holds."""
        return {"workers": {w: {"faults": f, "excluded": w in self.excluded}
                            for w, f in sorted(self.faults.items())}}


def worker_name(value: Any) -> str:
    """The client's word of a worker's address, as one short printable line."""
    return escape_controls(str(value)[:120]) if isinstance(value, str) and value else \
        "an unknown worker"


def decode_report(data: Any) -> WorkerReport | str:
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


def bad_log(played: WorkerReport) -> str | None:
    """Why the logs of ``played`` cannot be written beside the match's (a name that is not a
    plain file name), or ``None``."""
    for name in played.logs:
        if name in ("", ".", "..") or name != Path(name).name:
            return f"it sent a log named {name!r}"
    return None


def write_logs(job: MatchJob, played: WorkerReport) -> None:
    """Writes the bots' stderr a worker sent back to the match's ``logs_dir``."""
    if job.logs_dir is not None and played.logs:
        job.logs_dir.mkdir(parents=True, exist_ok=True)
        for name, data in played.logs.items():
            (job.logs_dir / name).write_bytes(data)


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


def accept(job: MatchJob, played: WorkerReport, moved_into: set[Path]) -> Finished | str:
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
            moved_into.add(written.parent)
        except OSError as err:
            return f"the record it wrote cannot be moved: {one_line(err)}"
        return Finished(job, Done(played.line))
    if played.record is None:  # neither written on the shared folder nor sent
        return "it sent back no record"
    why = job.refusal(played.record, played.line)
    if why is not None:
        return why
    return Finished(job, job.finish(played.record))



def sweep(moved_into: set[Path]) -> None:
    """Removes the attempts' files of matches already saved from the folders records were
    moved into: an attempt whose result never came back (its worker closed: Dask drops a
    closing worker's results and plays its task again elsewhere) leaves its record under
    its own name. Done when no task is out (a round's end, the run's): one look at each
    folder, and no attempt still running of this runner is touched."""
    for folder in moved_into:
        with contextlib.suppress(OSError), os.scandir(folder) as entries:
            for entry in entries:
                name = entry.name
                if name.startswith(".") and name.endswith(".tmp") \
                        and (folder / name[1:].rsplit(".", 2)[0]).is_file():
                    Path(entry.path).unlink(missing_ok=True)
    moved_into.clear()



def one_line(err: BaseException) -> str:
    text = " ".join(str(err).split()) or type(err).__name__
    return text[:300]
