"""The Dask client of a cluster run, in a process of its own (``python -m
referee.runners.dask_client``), started by :class:`~referee.runners.cluster.ClusterRunner`.

Dask's client unpickles whatever a worker sends back (a result, a task's exception), and no
setting of ``distributed`` stops it; a worker that crafts a pickle runs code in the client's
process. So the client is not in the coordinator's process (which holds the deal secret and
the output folder): it is here, started as a uid of its own (:func:`confined_command`) that
can read neither, and it hands the coordinator only JSON lines (one per finished task, each at
most :data:`LIMIT` bytes), which the coordinator parses with its bounded reader and checks by
replay before anything counts.

The coordinator writes to this process's stdin (it trusts itself): each message an 8-byte
length and a pickle (:func:`send`). Messages: ``("init", settings)`` first, then
``("submit", key, whole_set, jobs, workers, loose)``, ``("cancel", keys)``, ``("close",)``.
This process writes to its stdout: ``{"ready": {...}}`` or ``{"fatal": "..."}`` once,
``{"workers": {address: match_units}}`` when the cluster changes, and for each task ``{"key":
..., "worker": <the scheduler's word of which worker ran it, or null>, "outcome": {...}}`` (a
set's task: ``"outcomes": [...]``), each outcome ``{"report": {...}}`` or ``{"error": {"kind":
..., "message": ...}}``.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import pickle
import queue
import struct
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import IO, Any

LIMIT = 96 << 20
"""The most bytes of one line this process sends (a record is at most 64 MiB, its logs the
rest)."""
_HEADER = struct.Struct(">Q")
CAPACITY_S = 1.0
"""How often the cluster's workers are asked of the scheduler."""


def send(stream: IO[bytes], message: tuple[Any, ...]) -> None:
    """Writes ``message`` for this process to read (the coordinator's side)."""
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def _receive(stream: IO[bytes]) -> tuple[Any, ...] | None:
    head = stream.read(_HEADER.size)
    if len(head) < _HEADER.size:
        return None
    (size,) = _HEADER.unpack(head)
    data = stream.read(size)
    if len(data) < size:
        return None
    message = pickle.loads(data)  # the coordinator's own bytes
    return message if isinstance(message, tuple) else None


def _one_line(err: BaseException) -> str:
    try:
        text = " ".join(str(err).split()) or type(err).__name__
    except Exception:  # a worker's exception whose str() fails
        text = type(err).__name__
    return text[:300]


def error_of(err: BaseException) -> dict[str, str]:
    """What the coordinator is told of a task's exception (its kind and one line)."""
    from distributed import KilledWorker

    from referee.bots.process import BotCommandError
    from referee.match.play import MatchAborted

    if isinstance(err, KilledWorker):
        return {"kind": "killed", "message": _one_line(err)}
    if isinstance(err, MatchAborted):
        return {"kind": "aborted", "message": _one_line(err)}
    if isinstance(err, BotCommandError):
        return {"kind": "bot_command", "message": _one_line(err)}
    return {"kind": "error", "message": f"{type(err).__name__}: {_one_line(err)}"}


def encode(outcome: Any) -> dict[str, Any]:
    """One seating's outcome as JSON-able data (a worker's report, or what went wrong)."""
    from referee.runners.worker import WorkerReport

    if isinstance(outcome, BaseException):
        return {"error": error_of(outcome)}
    if not isinstance(outcome, WorkerReport):
        return {"error": {"kind": "error",
                          "message": f"its worker sent back a {type(outcome).__name__:.60}, "
                                     f"not a report"}}
    logs = {str(name): base64.b64encode(data).decode("ascii")
            for name, data in dict(outcome.logs).items()}
    return {"report": {"record": outcome.record, "logs": logs,
                       "sandbox": str(outcome.sandbox.value),
                       "line": outcome.line,
                       "written": None if outcome.written is None else str(outcome.written)}}


class Helper:
    """The client and its threads."""

    def __init__(self, out: IO[bytes]) -> None:
        self.out = out
        self.lock = threading.Lock()
        self.futures: dict[str, Any] = {}
        self.done: queue.Queue[Any] = queue.Queue()
        self.client: Any = None
        self.workers: dict[str, int] = {}
        self.closing = False

    def emit(self, message: dict[str, Any]) -> None:
        try:
            data = json.dumps(message, separators=(",", ":"), allow_nan=False).encode()
        except (TypeError, ValueError, RecursionError) as err:  # not JSON: a worker's garbage
            message = {"key": message.get("key"), "worker": message.get("worker"),
                       "outcome": {"error": {"kind": "error", "message":
                                             f"its result is not JSON data ({_one_line(err)})"}}}
            data = json.dumps(message, separators=(",", ":")).encode()
        if len(data) + 1 > LIMIT:
            message = {"key": message.get("key"), "worker": message.get("worker"),
                       "outcome": {"error": {"kind": "error", "message":
                                             f"its result is more than {LIMIT >> 20} MiB"}}}
            data = json.dumps(message, separators=(",", ":")).encode()
        with self.lock:
            self.out.write(data + b"\n")
            self.out.flush()

    def connect(self, settings: dict[str, Any]) -> None:
        from distributed import Client
        from distributed.security import Security

        from referee.runners.worker import RESOURCE, quiet_dask, scheduler_info

        quiet_dask()
        address, timeout = settings["address"], float(settings["timeout"])
        secure = None
        if settings.get("tls") is not None:
            folder = Path(tempfile.mkdtemp(prefix="ct-dask-tls-"))
            ca, cert = folder / "ca.pem", folder / "client.pem"
            ca.write_bytes(settings["tls"]["ca"])
            cert.write_bytes(settings["tls"]["cert"])
            secure = Security(  # type: ignore[no-untyped-call]
                tls_ca_file=str(ca), tls_client_cert=str(cert), tls_client_key=str(cert),
                require_encryption=True)
        try:
            self.client = Client(  # type: ignore[no-untyped-call]
                address, timeout=timeout, set_as_default=False, security=secure)
        except Exception as err:
            raise SystemExit(self.fatal(f"cannot reach the Dask scheduler {address!r}: "
                                        f"{_one_line(err)}")) from None
        expected = settings.get("expected")
        if expected is not None:
            try:
                found = scheduler_info(self.client).get("id")
            except Exception as err:
                raise SystemExit(self.fatal(f"cannot ask the Dask scheduler {address!r} who "
                                            f"it is: {_one_line(err)}")) from None
            if found != expected:
                raise SystemExit(self.fatal(
                    f"the Dask scheduler at {address!r} is not the one that wrote "
                    f"{settings.get('file')!r} (it is {found!r}, the file names "
                    f"{expected!r}): the file is stale and another program has its port; "
                    f"start the scheduler again"))
        try:
            self.client.wait_for_workers(1, timeout=timeout)
        except Exception:
            raise SystemExit(self.fatal(f"the Dask scheduler {address!r} has no worker (start "
                                        f"some: dask worker {address} --resources "
                                        f"{RESOURCE}=N)")) from None
        self.look()
        if not self.workers:
            raise SystemExit(self.fatal(
                f"no worker of the Dask scheduler {address!r} offers the {RESOURCE!r} "
                f"resource (start them with: dask worker {address} --nthreads N --resources "
                f"{RESOURCE}=N)"))
        self.emit({"ready": {"workers": self.workers}})

    def fatal(self, message: str) -> int:
        self.emit({"fatal": message})
        return 0

    def look(self) -> None:
        from referee.runners.worker import RESOURCE, scheduler_info

        workers = scheduler_info(self.client)["workers"]
        now = {str(a): int(w.get("resources", {}).get(RESOURCE, 0)) for a, w in workers.items()
               if w.get("resources", {}).get(RESOURCE, 0)}
        if now != self.workers:
            self.workers = now
            self.emit({"workers": now})

    def watch(self) -> None:
        """Tells the coordinator of the cluster's workers; ends the process when the scheduler
        is gone."""
        while not self.closing:
            time.sleep(CAPACITY_S)
            try:
                self.look()
            except Exception:
                if self.client.status not in ("running", "connecting") and not self.closing:
                    self.emit({"lost": "the Dask client lost its scheduler"})
                    os._exit(0)

    def submit(self, key: str, whole_set: bool, jobs: list[Any], workers: list[str] | None,
               loose: bool) -> None:
        from referee.runners.worker import RESOURCE, play_on_worker, play_set_on_worker

        if whole_set:
            future = self.client.submit(play_set_on_worker, jobs, key=key, pure=False,
                                        resources={RESOURCE: 1}, workers=workers,
                                        allow_other_workers=loose)
        else:
            future = self.client.submit(play_on_worker, jobs[0], key=key, pure=False,
                                        resources={RESOURCE: 1}, workers=workers,
                                        allow_other_workers=loose)
        self.futures[key] = (future, whole_set)
        future.add_done_callback(lambda f: self.done.put(key))

    def results(self) -> None:
        """Sends each finished task's outcome, as JSON, and forgets it."""
        while True:
            key = self.done.get()
            entry = self.futures.pop(key, None)
            if entry is None:
                continue
            future, whole_set = entry
            try:
                self.emit(self.outcome(key, future, whole_set))
            except Exception as err:  # never the end of the run: the match's fault
                self.emit({"key": key, "worker": None, "outcome": {"error": {
                    "kind": "error", "message": f"{type(err).__name__}: {_one_line(err)}"}}})
            with contextlib.suppress(Exception):
                future.release()

    def outcome(self, key: str, future: Any, whole_set: bool) -> dict[str, Any]:
        worker = self.who(future)
        status = future.status
        message: dict[str, Any] = {"key": key, "worker": worker}
        if status == "cancelled":
            message["outcome"] = {"error": {"kind": "cancelled", "message": "cancelled"}}
            return message
        if status == "error":
            try:
                err = future.exception()
                message["outcome"] = {"error": error_of(err)}
            except Exception as bad:
                message["outcome"] = {"error": {"kind": "error", "message":
                                                f"its error cannot be read: "
                                                f"{type(bad).__name__}: {_one_line(bad)}"}}
            return message
        try:
            value = future.result()
        except Exception as bad:
            message["outcome"] = {"error": {"kind": "error", "message":
                                            f"its result cannot be read: "
                                            f"{type(bad).__name__}: {_one_line(bad)}"}}
            return message
        if whole_set:
            if not isinstance(value, list):
                message["outcome"] = {"error": {"kind": "error", "message":
                                                f"its worker sent back a "
                                                f"{type(value).__name__:.60}, not a list"}}
                return message
            message["outcomes"] = [self.safe(v) for v in value]
        else:
            message["outcome"] = self.safe(value)
        return message

    def safe(self, value: Any) -> dict[str, Any]:
        try:
            return encode(value)
        except Exception as err:
            return {"error": {"kind": "error", "message": f"its report cannot be read: "
                                                          f"{type(err).__name__}: "
                                                          f"{_one_line(err)}"}}

    def who(self, future: Any) -> str | None:
        """The worker that ran ``future``, as the scheduler says (not as the worker does)."""
        with contextlib.suppress(Exception):
            holders = self.client.who_has([future]).get(future.key) or ()
            if holders:
                return str(holders[0])
        with contextlib.suppress(Exception):
            blamed = self.client.run_on_scheduler(_erred_on, future.key)
            if blamed:
                return str(blamed)
        return None

    def cancel(self, keys: list[str]) -> None:
        futures = [self.futures.pop(k)[0] for k in keys if k in self.futures]
        with contextlib.suppress(Exception):
            self.client.cancel(futures, force=True)


def _erred_on(key: str, dask_scheduler: Any = None) -> str | None:
    """Run on the scheduler: the worker a task erred on."""
    task = dask_scheduler.tasks.get(key) if dask_scheduler is not None else None
    erred = sorted(getattr(task, "erred_on", None) or ())
    return str(erred[0]) if erred else None


def main() -> int:
    """Reads the coordinator's messages from stdin until ``close`` or its end."""
    inbox, out = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing but this process's lines goes to the coordinator
    helper = Helper(out)
    first = _receive(inbox)
    if first is None or first[0] != "init":
        return 1
    helper.connect(first[1])
    threading.Thread(target=helper.watch, daemon=True).start()
    threading.Thread(target=helper.results, daemon=True).start()
    while True:
        message = _receive(inbox)
        if message is None or message[0] == "close":
            break
        if message[0] == "submit":
            helper.submit(*message[1:])
        elif message[0] == "cancel":
            helper.cancel(message[1])
    helper.closing = True
    with contextlib.suppress(Exception):
        helper.client.close(timeout=5)
    return 0


if __name__ == "__main__":
    sys.exit(main())
