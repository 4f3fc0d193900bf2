"""The bots' runtimes, and the snapshots of their folders, kept in memory: a private folder of
the referee's in ``/dev/shm`` (tmpfs), shown read-only to the bots.

On tmpfs a lookup of a name that does not exist leaves nothing behind (``simple_lookup`` marks
the negative dentry to be deleted at once) and a file's pages are always resident, so neither a
lookup nor a read by one bot changes how long the same lookup or read takes the next bot: the
caches a bot could mark on a disk's file system are not there to mark. Why and what is left:
docs/security.md, "What a bot sees".

:func:`base` is the referee's folder (``/dev/shm/ct-referee-UID``, ``0700``); a runtime is a
tree ``t-KEY`` in it (:func:`runtime_tree`), made once per content and kept
:data:`LINGER_S` after its last use (several runs and tournaments share it); :func:`scratch`
gives a run a folder of its own (its snapshots), removed when the run ends.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import pwd
import shutil
import stat
import tempfile
import time
from pathlib import Path

from referee.bots.runtime import Closure

SHM = Path("/dev/shm")
LINGER_S = 600.0
"""How long a runtime tree no run uses is kept (the next run starts at once)."""
PROC_FILES = {
    "loadavg": "0.00 0.00 0.00 1/1 1\n",
    "stat": "cpu  0 0 0 0 0 0 0 0 0 0\nintr 0\nctxt 0\nbtime 0\nprocesses 0\n"
            "procs_running 1\nprocs_blocked 0\nsoftirq 0\n",
    "vmstat": "nr_free_pages 0\n",
    "diskstats": "",
    "sched_debug": "",
    "timer_list": "",
    "kallsyms": "",
    "keys": "",
    "key-users": "",
    "slabinfo": "",
    "zoneinfo": "",
    "buddyinfo": "",
    "pagetypeinfo": "",
    "interrupts": "",
    "softirqs": "",
    "latency_stats": "",
    "locks": "",
    "swaps": "Filename\tType\tSize\tUsed\tPriority\n",
    "uptime": "0.00 0.00\n",
}
"""Host-wide counters in ``/proc`` that the sandbox shows as these fixed texts (a bot could
read another sandbox's activity in them)."""


def _own_folder(path: Path) -> bool:
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid() and \
        (st.st_mode & 0o777) == 0o700


_BASE: Path | None = None


def base() -> Path:
    """The referee's folder in memory: ``/dev/shm/ct-referee-UID`` (``0700``, its own), or,
    if someone else holds that name, a private folder made beside it.

    :raises OSError: when ``/dev/shm`` is missing or full.
    """
    global _BASE
    if _BASE is not None and _own_folder(_BASE):
        return _BASE
    path = SHM / f"ct-referee-{os.geteuid()}"
    with contextlib.suppress(FileExistsError):
        os.mkdir(path, 0o700)
    if not _own_folder(path):
        path = Path(tempfile.mkdtemp(prefix=f"ct-referee-{os.geteuid()}-", dir=SHM))
        os.chmod(path, 0o700)
    _BASE = path
    return path


def scratch(prefix: str = "r-") -> Path:
    """A new folder of a run's own in :func:`base` (the caller removes it)."""
    path = Path(tempfile.mkdtemp(prefix=prefix, dir=base()))
    os.chmod(path, 0o700)
    return path


class Tree:
    """A runtime tree in use: held (a shared lock) until :meth:`release`, so that no other
    run's clean-up removes it."""

    def __init__(self, path: Path, lock: int) -> None:
        self.path = path
        self._lock: int | None = lock

    def release(self) -> None:
        if self._lock is not None:
            os.close(self._lock)
            self._lock = None


def runtime_tree(closure: Closure, key: str | None = None) -> Tree:
    """The tree that holds ``closure``'s files at their host paths, made now unless another
    run made it already (``key``: the closure's, if worked out already); held until released
    (a shared lock on ``t-KEY.lock``, which
    :func:`collect` must take alone; one maker at a time holds ``t-KEY.build``).

    :raises OSError: when it cannot be made (``/dev/shm`` full).
    """
    key = key or closure.key()
    home = base()
    path = home / f"t-{key}"
    lock_path = home / f"t-{key}.lock"
    for _attempt in range(8):
        lock = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(lock, fcntl.LOCK_SH)
            if os.fstat(lock).st_ino != os.stat(lock_path).st_ino:
                os.close(lock)  # removed by a clean-up meanwhile: take the new one
                continue
            if not (path / ".done").exists():
                build = os.open(home / f"t-{key}.build", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC,
                                0o600)
                try:
                    fcntl.flock(build, fcntl.LOCK_EX)  # one maker at a time
                    if not (path / ".done").exists():
                        _remove(path)
                        _make(closure, path)
                        (path / ".done").touch()
                finally:
                    os.close(build)
            os.utime(lock_path)
        except BaseException:
            os.close(lock)
            raise
        collect()
        collect_gone()
        return Tree(path, lock)
    raise OSError(errno.EAGAIN, f"{path} keeps being removed")


def _make(closure: Closure, dest: Path) -> None:
    """The tree: each root's files under ``r<N>`` (:meth:`Closure.place`), so that a bot's
    mount table names no host path, only ``t-KEY/r<N>``."""
    os.mkdir(dest, 0o755)
    os.chmod(dest, 0o755)
    roots = closure.ordered_roots()
    folders = sorted({p for p in (closure.place(d) for d in (*closure.dirs, *roots)) if p},
                     key=len)
    for folder in folders:
        target = dest / folder
        with contextlib.suppress(FileExistsError):
            os.mkdir(target, 0o755)
        os.chmod(target, 0o755)
    for link, text in closure.links.items():
        where = closure.place(link)
        if where is not None:
            with contextlib.suppress(FileExistsError):
                os.symlink(text, dest / where)
    for path, st in closure.files.items():
        where = closure.place(path)
        if where is not None:
            _copy(path, str(dest / where), 0o755 if st.st_mode & 0o111 else 0o644)
    if "/etc" in roots:  # where the sandbox mounts its own users and groups
        etc = dest / f"r{roots.index('/etc')}"
        for name in ("passwd", "group"):
            with contextlib.suppress(FileExistsError):
                os.close(os.open(etc / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o444))
    for folder in folders:  # read-only from now on (the mount is read-only too)
        os.chmod(dest / folder, 0o555)


def _copy(src: str, dst: str, mode: int) -> None:
    """Copies the regular file ``src`` to ``dst`` (new, ``mode``), never following a symlink
    swapped in at ``src``; a file that vanished is left out."""
    try:
        fd = os.open(src, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError as err:
        if err.errno in (errno.ENOENT, errno.ELOOP, errno.EACCES):
            return
        raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return
        out = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, mode)
        try:
            os.fchmod(out, mode)
            while True:
                n = os.sendfile(out, fd, None, 1 << 24)
                if n == 0:
                    break
        finally:
            os.close(out)
    finally:
        os.close(fd)


def collect_gone(shm: Path = SHM) -> list[Path]:
    """(root) Removes the folders in memory of users that no longer exist (a user made for a
    run and deleted since): no referee of theirs can collect them any more."""
    if os.geteuid() != 0:
        return []
    removed = []
    for folder in shm.glob("ct-referee-*"):
        uid = folder.name.removeprefix("ct-referee-").split("-")[0]
        try:
            st = os.lstat(folder)
            pwd.getpwuid(st.st_uid)
        except KeyError:
            if uid.isdigit() and int(uid) == st.st_uid and stat.S_ISDIR(st.st_mode):
                shutil.rmtree(folder, ignore_errors=True)
                removed.append(folder)
        except OSError:
            continue
    return removed


def collect(*, linger_s: float = LINGER_S) -> list[Path]:
    """Removes the runtime trees no run holds that were last used over ``linger_s`` ago, and
    scratch folders whose run is gone; returns what it removed."""
    removed: list[Path] = []
    home = base()
    now = time.time()
    for lock_path in home.glob("t-*.lock"):
        tree = lock_path.with_suffix("")
        try:
            if now - os.stat(lock_path).st_mtime < linger_s:
                continue
            fd = os.open(lock_path, os.O_RDWR | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue  # in use
        try:
            with contextlib.suppress(OSError):
                os.unlink(lock_path)
            _remove(tree)
            removed.append(tree)
        finally:
            os.close(fd)
    return removed


def _remove(path: Path) -> None:
    """Removes a tree made read-only."""
    if not path.exists():
        return
    for top, dirs, _files in os.walk(path):
        for d in dirs:
            with contextlib.suppress(OSError):
                os.chmod(os.path.join(top, d), 0o700)
    with contextlib.suppress(OSError):
        os.chmod(path, 0o700)
    shutil.rmtree(path, ignore_errors=True)


def proc_files() -> Path:
    """A folder of the fixed texts :data:`PROC_FILES` (made once)."""
    path = base() / "proc"
    if not (path / ".done").exists():
        tmp = Path(tempfile.mkdtemp(dir=base()))
        for name, text in PROC_FILES.items():
            (tmp / name).write_text(text)
            os.chmod(tmp / name, 0o444)
        (tmp / ".done").touch()
        os.chmod(tmp, 0o755)
        try:
            os.rename(tmp, path)
        except OSError:
            shutil.rmtree(tmp, ignore_errors=True)
    return path
