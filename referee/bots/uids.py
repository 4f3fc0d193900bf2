"""One bot uid allocator per host, shared by every referee and worker process on it.

A root referee runs each bot as a host uid of its own (:data:`referee.bots.sandbox.BOT_UIDS`):
the kernel counts some resources per uid across namespaces, so two live bots on one uid could
signal to each other. Drawing uids per process (each from its own offset) let two processes
hand out the same uid at once; here a uid is *leased*: an exclusive ``flock`` on a lock file
named after it, in a folder only the allocating user can write (``/run/ct-referee/uids`` for
root, else the user's runtime folder), held until the bot has stopped. The kernel drops the
lock when its holder dies, so a killed referee leaks nothing.

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
    ``$XDG_RUNTIME_DIR/ct-referee/uids`` (or ``/tmp/ct-referee-<uid>/uids``); made ``0700``,
    and refused if someone else owns it (a planted folder would let another user hold locks).

    :raises OSError: if it cannot be made or is not the user's own.
    """
    uid = os.geteuid()
    if uid == 0:
        base = Path("/run/ct-referee")
    elif os.environ.get("XDG_RUNTIME_DIR"):
        base = Path(os.environ["XDG_RUNTIME_DIR"]) / "ct-referee"
    else:
        base = Path(f"/tmp/ct-referee-{uid}")
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
        fd = os.open(folder / f"{uid}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        except BaseException:
            os.close(fd)
            raise
        return Lease(uid, fd)
    raise UidsExhausted(f"all {len(uids)} bot uids are held by live bots on this host")
