"""One bot uid allocator per host, shared by every referee and worker process on it.

A bot runs as a host uid of its own (the kernel counts some resources per uid, across
namespaces), *leased*: an exclusive ``flock`` on a lock file named after it, in a folder only the
allocating user can write, held until the bot has stopped and no process of its uid is left
(escaped children are killed on release; one that will not die within :data:`CLEAR_S` keeps the
uid quarantined). A uid some live process runs as is never leased; the kernel drops the lock of
a killed referee. Why: docs/security.md, "What stops it" and "A referee that is not root".

>>> lease = allocate(range(64000, 65000))  # doctest: +SKIP
>>> lease.uid  # doctest: +SKIP
64417
>>> lease.release()  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import secrets
import signal
import stat
import threading
import time
from collections.abc import Sequence
from pathlib import Path


class UidsExhausted(OSError):
    """Every uid of the range is held by a live bot on this host."""


def lock_dir() -> Path:
    """The folder of the lock files: ``/run/ct-referee/uids`` for root, else
    ``/tmp/ct-referee-<uid>/uids``; made ``0700``, and refused if someone else owns it or may
    write it (a folder planted by another user would let it hold or drop locks: it can only
    make the referee refuse, never share a uid).

    Not ``$XDG_RUNTIME_DIR``: every process of the user must find the same folder, and that
    variable is unset under cron or ``runuser``, and its folder goes at the last logout while
    bots may still run. ``/tmp`` is sticky: no other user can remove or rename the folder.

    :raises OSError: if it cannot be made or is not the user's own.
    """
    uid = os.geteuid()
    base = Path("/run/ct-referee") if uid == 0 else Path(f"/tmp/ct-referee-{uid}")
    folder = base / "uids"
    for path in (base, folder):
        with contextlib.suppress(FileExistsError):
            path.mkdir(mode=0o700)
        st = os.lstat(path)
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != uid or st.st_mode & 0o022:
            raise OSError(f"{str(path)!r} is not a folder of uid {uid} that only it can write")
    return folder


CLEAR_S = 2.0
"""How long :meth:`Lease.release` waits for the last processes of a uid to die."""


def _status(pid: str) -> tuple[str, set[int]] | None:
    """A process's state letter and its real, effective, saved and file-system uids (as this
    process's user namespace sees them), or ``None`` if it is gone."""
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            text = f.read().decode("ascii", errors="replace")
    except OSError:
        return None
    state, uids = "", set()
    for line in text.splitlines():
        if line.startswith("State:"):
            state = line.split()[1] if len(line.split()) > 1 else ""
        elif line.startswith("Uid:"):
            uids = {int(x) for x in line.split()[1:] if x.isdigit()}
    return state, uids


def processes_of(uid: int) -> list[int]:
    """Pids of the live (not zombie) processes that run as ``uid``. Cheap: one ``stat`` of
    each ``/proc/<pid>`` folder, which the kernel shows owned by the process's effective uid
    (even for a non-dumpable process: ``ps`` relies on it), and the ``status`` of those only
    (state, and the uid again on a pid that may have been reused)."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if os.stat(f"/proc/{entry}").st_uid != uid:
                continue
        except OSError:
            continue
        got = _status(entry)
        if got is not None and got[0] not in ("Z", "X") and uid in got[1]:
            out.append(int(entry))
    return out


def namespace_inode(link: str) -> int | None:
    """The inode of the user namespace ``link`` names (``/proc/<pid>/ns/user``, or
    ``/proc/self/fd/<n>`` of a namespace file descriptor); ``None``: gone, not ours to see, or
    not a user namespace."""
    try:
        target = os.readlink(link)
    except OSError:
        return None
    inode = target[len("user:["):-1]
    return int(inode) if target.startswith("user:[") and inode.isdigit() else None


def _kill(pid: int, uid: int, namespace: int | None) -> None:
    """SIGKILL ``pid`` if it still runs as ``uid`` (and, if given, in the user namespace
    ``namespace``): through a pidfd, checked after it was opened, so a pid reused meanwhile is
    never signalled."""
    try:
        pidfd = os.pidfd_open(pid)
    except OSError:
        return
    try:
        got = _status(str(pid))
        if got is not None and uid in got[1] and \
                (namespace is None or namespace_inode(f"/proc/{pid}/ns/user") == namespace):
            with contextlib.suppress(OSError):
                signal.pidfd_send_signal(pidfd, signal.SIGKILL)
    finally:
        os.close(pidfd)


def clear(uid: int, wait_s: float, namespace: int | None = None) -> list[int]:
    """Kill every live process of ``uid`` (a bot's escaped children: a double fork, a new
    session) and wait, up to ``wait_s``, until none is left; returns the pids still there
    (empty: the uid is free). With ``namespace`` (the bot's user namespace), a process of the
    uid elsewhere (the organiser's own use of a subordinate uid) is waited for, never killed."""
    deadline = time.monotonic() + wait_s
    delay = 0.002
    while True:
        left = processes_of(uid)
        if not left or time.monotonic() >= deadline:
            return left
        for pid in left:
            _kill(pid, uid, namespace)
        time.sleep(delay)
        delay = min(delay * 2, 0.05)


class Lease:
    """A uid held for one bot, until :meth:`release` (idempotent)."""

    def __init__(self, uid: int, fd: int | None) -> None:
        self.uid = uid
        self._fd = fd
        self._lock = threading.Lock()
        self.namespace: int | None = None
        """The inode of the user namespace the bot runs in, where the referee made it (mode
        ``subuid``): only processes of the uid in it are killed on release. ``None``: the uid
        is the referee's alone (a root referee's), any process of it is killed."""
        self.quarantined: tuple[int, ...] = ()
        """The processes of the uid that would not die when it was released: the uid stays
        held (until this process exits), so no other bot gets it while they live."""

    def release(self, wait_s: float | None = None, *, emptied: bool = False) -> tuple[int, ...]:
        """Give the uid back once no process of it is left: kills what is (a bot's escaped
        children) and waits up to ``wait_s`` (default :data:`CLEAR_S`) for them to die. Past
        that, the uid is quarantined instead (see :attr:`quarantined`), and the pids are
        returned. ``emptied``: the bot's cgroup, which held every process of it, was emptied
        (nothing to look for)."""
        with self._lock:
            fd, self._fd = self._fd, None
        if fd is None:
            return ()
        left = [] if emptied else \
            clear(self.uid, CLEAR_S if wait_s is None else wait_s, self.namespace)
        if left:
            self.quarantined = tuple(left)
            _QUARANTINE.append(fd)  # held: the flock lasts as long as this process
            return self.quarantined
        with contextlib.suppress(OSError):
            os.close(fd)  # closing drops the flock
        return ()

    @property
    def held(self) -> bool:
        """Whether the uid is still held (quarantined included)."""
        return self._fd is not None or bool(self.quarantined)


_QUARANTINE: list[int] = []
"""The lock files of quarantined uids, never closed."""


def allocate(uids: Sequence[int], folder: Path | None = None) -> Lease:
    """Lease a uid of ``uids`` that no live bot on this host holds and no live process runs
    as, starting at a random one.

    :raises UidsExhausted: if every one is held.
    :raises OSError: if the lock folder cannot be used (see :func:`lock_dir`).
    """
    folder = folder or lock_dir()
    start = secrets.randbelow(len(uids))
    for i in range(len(uids)):
        uid = uids[(start + i) % len(uids)]
        path = folder / f"{uid}.lock"
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            if os.fstat(fd).st_ino != os.stat(path).st_ino:  # removed meanwhile: not the lock
                raise BlockingIOError
        except (BlockingIOError, FileNotFoundError):
            os.close(fd)
            continue
        except BaseException:
            os.close(fd)
            raise
        if processes_of(uid):  # not held, yet in use (a referee gone before its bots' children)
            os.close(fd)
            continue
        return Lease(uid, fd)
    raise UidsExhausted(f"all {len(uids)} bot uids are held by live bots on this host")
