"""The coordinator's end of the confined Dask client (:mod:`referee.runners.dask_client`).

:class:`ClientProcess` starts the client as a uid of its own, which can read neither the deal
secret nor the output folder (a root coordinator: a uid of the per-host allocator's range, no
other process runs as; one that is not root: one of its subordinate uids, in a user namespace
bwrap joins, as a bot's sandbox does), and reads what it sends: JSON lines of at most
:data:`~referee.runners.dask_client.LIMIT` bytes, parsed by the bounded reader of records
(:func:`~referee.records.record.load_json`). Nothing the client sends is unpickled here.
"""

from __future__ import annotations

import contextlib
import os
import queue
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any

import referee
from referee.bots.policy import BOT_UIDS, SANDBOX_UID
from referee.bots.probing import subordinate_ids
from referee.bots.subids import SubIds, user_namespace
from referee.bots.uids import Lease, allocate, namespace_inode
from referee.records.record import RecordError, load_json
from referee.runners.dask_client import LIMIT, send
from referee.runners.local import drain

__all__ = ["ClientProcess", "ConfinementError"]

START_S = 60.0
"""How long the client may take to start (Python, Dask) beyond its connect timeout."""


class ConfinementError(OSError):
    """The client cannot be started; the message is one line."""


def _blocked(path: str) -> str | None:
    """The highest folder above ``path`` (itself included) that other users cannot enter."""
    parts = Path(path).parts
    for i in range(2, len(parts) + 1):
        folder = str(Path(*parts[:i]))
        with contextlib.suppress(OSError):
            if os.path.isdir(folder) and not os.stat(folder).st_mode & 0o001:
                return folder
    return None


def _python_binds() -> list[str]:
    """bwrap's options that let another uid run this Python: each folder it needs (the
    interpreter's, its prefixes, ``sys.path``) that sits below a folder other users cannot
    enter (``/root``, a 0700 home) is bound alone on a tmpfs in that folder's place, so nothing
    else of it is seen."""
    package = os.path.dirname(os.path.realpath(referee.__file__))  # an editable install's
    needed = {os.path.dirname(os.path.realpath(sys.executable)), sys.prefix, sys.base_prefix,
              package, *(os.path.realpath(p) for p in sys.path if p and os.path.isdir(p))}
    hidden: dict[str, list[str]] = {}
    out: list[str] = []
    made: set[str] = set()
    for path in sorted(needed):
        if path == "/tmp" or path.startswith("/tmp/"):  # the client's /tmp is empty: shown
            for parent in reversed(Path(path).parents):  # alone (a checkout in a mktemp
                if str(parent) not in ("/", "/tmp") and str(parent) not in made:  # folder,
                    made.add(str(parent))  # its folders made traversable: bwrap makes 0700)
                    out += ["--perms", "0755", "--dir", str(parent)]
            out += ["--ro-bind", path, path]
            continue
        top = _blocked(path)
        if top is not None:
            hidden.setdefault(top, []).append(path)
    for top, paths in sorted(hidden.items()):
        out += ["--perms", "0755", "--tmpfs", top]
        for path in paths:
            if path != top:
                out += ["--ro-bind", path, path]
    return out


def _bwrap(bwrap: str, uid: int | None, inner: list[str], argv: list[str]) -> list[str]:
    """bwrap around ``argv``: the whole file system read-only but ``/tmp`` (empty) and the
    folders other users cannot enter (:func:`_python_binds`), the network shared, then setpriv
    to ``uid`` without capabilities (``None``: the uid stays)."""
    if uid is None:
        return [bwrap, *inner, "--unshare-ipc", "--unshare-pid", "--unshare-uts",
                "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
                "--perms", "1777", "--tmpfs", "/tmp", *_python_binds(), "--die-with-parent",
                "--new-session", "--", *argv]
    setpriv = shutil.which("setpriv") or "setpriv"
    return [bwrap, *inner, "--unshare-ipc", "--unshare-pid", "--unshare-uts",
            "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
            "--perms", "1777", "--tmpfs", "/tmp",
            *_python_binds(), "--die-with-parent", "--new-session", "--",
            setpriv, f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--inh-caps=-all",
            "--ambient-caps=-all", "--bounding-set=-all", "--no-new-privs", "--", *argv]


def _spawn(argv: list[str], env: dict[str, str]) -> tuple[subprocess.Popen[bytes],
                                                          Lease | None, str]:
    """The client process, with the lease of its uid and what confines it (for the header)."""
    pipes: dict[str, Any] = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE,
                             "stderr": subprocess.DEVNULL, "cwd": "/", "env": env,
                             "start_new_session": True}
    bwrap = shutil.which("bwrap")
    if os.geteuid() == 0 and bwrap is not None:
        lease = allocate(BOT_UIDS)
        try:
            proc = subprocess.Popen(_bwrap(bwrap, lease.uid, [], argv), **pipes)
        except BaseException:
            lease.release()
            raise
        return proc, lease, f"uid {lease.uid}"
    ids = subordinate_ids()
    if os.geteuid() != 0 and isinstance(ids, SubIds) and bwrap is not None:
        lease = allocate(ids.uids)
        try:
            fd = user_namespace(lease.uid, ids.gid(lease.uid), SANDBOX_UID)
        except OSError:
            lease.release()
        else:
            lease.namespace = namespace_inode(f"/proc/self/fd/{fd}")
            inner = ["--userns", str(fd), "--cap-drop", "ALL",
                     *(a for c in ("SETUID", "SETGID", "SETPCAP")
                       for a in ("--cap-add", f"CAP_{c}")), "--uid", "0", "--gid", "0"]
            try:
                proc = subprocess.Popen(_bwrap(bwrap, SANDBOX_UID, inner, argv),
                                        pass_fds=(fd,), **pipes)
            except BaseException:
                lease.release()
                raise
            finally:
                os.close(fd)
            return proc, lease, f"subordinate uid {lease.uid}"
    if bwrap is not None and os.geteuid() != 0:  # the organiser's uid, in a user namespace
        why = ids if isinstance(ids, str) else "its user namespace cannot be made"
        with contextlib.suppress(OSError):
            return (subprocess.Popen(_bwrap(bwrap, None, ["--unshare-user"], argv), **pipes),
                    None, f"the organiser's own uid, /tmp hidden and the rest read-only "
                          f"(no subordinate uid: {why.split(':')[0]})")
    return subprocess.Popen(argv, **pipes), None, "the organiser's own uid (no bwrap)"


class ClientProcess:
    """One confined Dask client; :meth:`messages` are what it sent, parsed."""

    def __init__(self, settings: dict[str, Any], timeout: float) -> None:
        self.settings = settings
        self._inbox: queue.Queue[dict[str, Any]] = queue.Queue()
        self.workers: Any = None
        """The client's latest word of the cluster's workers (``{address: match units}``)."""
        self.looks = 0
        """How many times it has said it."""
        env = {k: v for k, v in os.environ.items()
               if k.startswith(("DASK_", "PATH", "LANG", "LC_", "PYTHON", "VIRTUAL_ENV"))}
        env["HOME"] = "/nonexistent"
        path = [p for p in sys.path if p and os.path.isdir(p)]
        env["PYTHONPATH"] = os.pathsep.join(path)
        try:
            self.proc, self._lease, self.confinement = _spawn(
                [sys.executable, "-m", "referee.runners.dask_client"], env)
        except OSError as err:
            raise ConfinementError(f"cannot start the Dask client process: {err}") from None
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._stdin: IO[bytes] = self.proc.stdin
        threading.Thread(target=self._read, args=(self.proc.stdout,), daemon=True).start()
        self.ready = self._start(settings, timeout + START_S)

    def _start(self, settings: dict[str, Any], timeout: float) -> dict[str, Any]:
        if not self.send(("init", settings)):
            raise ConfinementError("the Dask client process ended at its start")
        deadline = time.monotonic() + timeout
        while True:
            try:
                message = self._inbox.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                self.close()
                raise ConfinementError("the Dask client process did not start in time") \
                    from None
            if "fatal" in message:
                self.close()
                raise ConfinementError(str(message["fatal"])[:1000])
            if "ready" in message:
                ready = message["ready"]
                return ready if isinstance(ready, dict) else {}
            if "broken" in message or "eof" in message:
                self.close()
                raise ConfinementError(f"the Dask client process ended at its start: "
                                       f"{message.get('broken', 'no word')}")

    def _read(self, stream: IO[bytes]) -> None:
        """Puts each line the client sends, parsed, in the inbox; ``{"broken": why}`` (and the
        client killed) for one that is too long or not JSON, ``{"eof": True}`` at its end."""
        while True:
            try:
                line = stream.readline(LIMIT + 1)
            except (OSError, ValueError):
                line = b""
            if not line:
                self._inbox.put({"eof": True})
                return
            if not line.endswith(b"\n"):
                self._broken(f"a line of more than {LIMIT >> 20} MiB" if len(line) > LIMIT
                             else "a line cut short")
                return
            try:
                message = load_json(line, source="the Dask client's line", limit=LIMIT)
            except RecordError as err:
                self._broken(str(err))
                return
            if not isinstance(message, dict):
                self._broken("a line that is not a JSON object")
                return
            if list(message) == ["workers"]:  # the latest word is kept, not queued
                self.workers = message["workers"]
                self.looks += 1
                continue
            self._inbox.put(message)

    def _broken(self, why: str) -> None:
        with contextlib.suppress(OSError):
            self.proc.kill()
        self._inbox.put({"broken": why})

    def send(self, message: tuple[Any, ...]) -> bool:
        """Writes ``message`` to the client; ``False`` if it is gone."""
        try:
            send(self._stdin, message)
        except (OSError, ValueError):
            return False
        return True

    def messages(self, timeout: float) -> list[dict[str, Any]]:
        """What the client sent, waiting up to ``timeout`` seconds for a first message."""
        return drain(self._inbox, timeout)

    def close(self) -> None:
        """Asks the client to close, kills it past a few seconds, gives its uid back."""
        self.send(("close",))
        with contextlib.suppress(OSError, ValueError):
            self._stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(OSError):
                os.killpg(self.proc.pid, 9)
            self.proc.wait()
        if self._lease is not None:
            self._lease.release()
            self._lease = None
