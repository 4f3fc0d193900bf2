"""One bot uid allocator per host, shared by every referee and worker process on it.

A root referee runs each bot as a host uid of its own (:data:`referee.bots.sandbox.BOT_UIDS`):
the kernel counts some resources per uid across namespaces, so two live bots on one uid could
signal to each other. Drawing uids per process (each from its own offset) let two processes
hand out the same uid at once; here a uid is *leased*: an exclusive ``flock`` on a lock file
named after it, in a folder only the allocating user can write (``/run/ct-referee/uids`` for
root, else ``/tmp/ct-referee-<uid>/uids``), held until the bot has stopped. The kernel drops
the lock when its holder dies, so a killed referee leaks nothing. A referee that is not root
leases its subordinate uids (:mod:`referee.bots.subids`) the same way.

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
import stat
import threading
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


class Lease:
    """A uid held for one bot, until :meth:`release` (idempotent)."""

    def __init__(self, uid: int, fd: int | None) -> None:
        self.uid = uid
        self._fd = fd
        self._lock = threading.Lock()

    def release(self) -> None:
        """Give the uid back."""
        with self._lock:
            fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)  # closing drops the flock

    @property
    def held(self) -> bool:
        """Whether the uid is still held."""
        return self._fd is not None


def allocate(uids: Sequence[int], folder: Path | None = None) -> Lease:
    """Lease a uid of ``uids`` that no live bot on this host holds, starting at a random one.

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
        return Lease(uid, fd)
    raise UidsExhausted(f"all {len(uids)} bot uids are held by live bots on this host")
