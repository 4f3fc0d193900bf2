"""Which files were opened in a set of folders: fanotify, as any user may use it (Linux 5.13+).

A referee that is not root evicts the pages of the files its bots can see between the seatings
of a set (:class:`referee.bots.hygiene.Eviction`); the files are many (120,000 under ``/usr``
here, a second or more to open them all), the ones a seating opened few. :class:`Opened` marks
every folder (``FAN_MARK_INODE``, ``FAN_OPEN`` and ``FAN_CLOSE_NOWRITE`` of its children,
events naming the folder by
its file handle and the file by name: ``FAN_REPORT_DFID_NAME``, all an unprivileged listener
may ask), and a thread gathers the names as they come: whoever opened them, in whatever
namespace, through whatever mount of the folder. A page is cached only by a read through an
open file (``read``, ``mmap``, ``execve``, whose opens are events too), so the files opened
or closed since the last :meth:`Opened.take` are all whose pages can have changed (a file
opened before a take and read after it is named again at its close, at the latest when its
process ends: a bot cannot hold a file open across an eviction to keep its pages); the watching
process's own opens (its evictions') are left out. Where the kernel's
queue overflowed, or an event names a folder it does not know, :meth:`take` says so
(``None``): the caller then evicts everything.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import select
import struct
import threading
from collections.abc import Iterable

__all__ = ["Opened"]

FAN_CLOEXEC, FAN_NONBLOCK = 0x1, 0x2
FAN_REPORT_DFID_NAME = 0x400 | 0x800  # FAN_REPORT_DIR_FID | FAN_REPORT_NAME
FAN_MARK_ADD = 0x1
FAN_OPEN = 0x20
FAN_CLOSE_NOWRITE = 0x10
FAN_Q_OVERFLOW = 0x4000
FAN_EVENT_ON_CHILD = 0x08000000
FAN_EVENT_INFO_TYPE_DFID_NAME = 2
AT_FDCWD = -100
_HANDLE_MAX = 128
_META = struct.Struct("IBBHQii")  # event_len, vers, reserved, metadata_len, mask, fd, pid
_INFO = struct.Struct("BBH")  # info_type, pad, len
_FSID_HANDLE = struct.Struct("iiIi")  # fsid val[0], val[1], handle_bytes, handle_type


class _FileHandle(ctypes.Structure):
    _fields_ = [("handle_bytes", ctypes.c_uint), ("handle_type", ctypes.c_int),
                ("f_handle", ctypes.c_ubyte * _HANDLE_MAX)]


_libc: ctypes.CDLL | None = None


def _lib() -> ctypes.CDLL:
    global _libc
    if _libc is None:
        lib = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        lib.fanotify_init.argtypes = [ctypes.c_uint, ctypes.c_uint]
        lib.fanotify_mark.argtypes = [ctypes.c_int, ctypes.c_uint, ctypes.c_uint64,
                                      ctypes.c_int, ctypes.c_char_p]
        lib.name_to_handle_at.argtypes = [ctypes.c_int, ctypes.c_char_p,
                                          ctypes.POINTER(_FileHandle),
                                          ctypes.POINTER(ctypes.c_int), ctypes.c_int]
        _libc = lib
    return _libc


def _fail(what: str) -> OSError:
    err = ctypes.get_errno()
    return OSError(err, f"{what}: {os.strerror(err)}")


Key = tuple[int, bytes]
"""A folder as an event names it: its file system's id and its file handle (type, bytes)."""


def _key(path: str) -> Key:
    """``path``'s :data:`Key`, as the kernel will name it."""
    handle, mount = _FileHandle(), ctypes.c_int()
    handle.handle_bytes = _HANDLE_MAX
    if _lib().name_to_handle_at(AT_FDCWD, os.fsencode(path), ctypes.byref(handle),
                                ctypes.byref(mount), 0) != 0:
        raise _fail(f"name_to_handle_at {path!r}")
    fsid = os.statvfs(path).f_fsid & 0xFFFFFFFFFFFFFFFF
    return fsid, struct.pack("i", handle.handle_type) + bytes(
        handle.f_handle[:handle.handle_bytes])


class Opened:
    """The files opened in ``folders`` (every folder below each, walked now, and the files
    among them) since the last :meth:`take`, gathered by a thread of its own until
    :meth:`close`.

    :raises OSError: where fanotify cannot be used (an old kernel, a seccomp filter, the
        user's marks or groups used up): the caller evicts everything instead.
    """

    def __init__(self, folders: Iterable[str], files: Iterable[str] = ()) -> None:
        lib = _lib()
        self._fd = lib.fanotify_init(FAN_CLOEXEC | FAN_NONBLOCK | FAN_REPORT_DFID_NAME,
                                     os.O_RDONLY | os.O_CLOEXEC)
        if self._fd < 0:
            raise _fail("fanotify_init")
        self._folders: dict[Key, str] = {}
        self._opened: set[str] = set()
        self._lost = self._failed = False
        self._lock = threading.Lock()
        self._stop_r, self._stop_w = os.pipe2(os.O_CLOEXEC)
        self.marks = 0
        try:
            for folder in folders:
                self._mark(folder, folder)
            for path in files:
                self._mark(path, os.path.dirname(path))
        except BaseException:  # the fanotify fd and the pipe closed whatever went wrong
            self.close()
            raise
        self._thread = threading.Thread(target=self._gather, name="opened", daemon=True)
        self._thread.start()

    def _mark(self, path: str, folder: str) -> None:
        """Marks ``path`` (a folder: its children's opens; a file: its own) and learns the
        key of ``folder``, which the events name."""
        # the close too: a file opened before an eviction and read after it (held open, or
        # mapped) is closed, at the latest, when its process ends: named then
        mask = FAN_OPEN | FAN_CLOSE_NOWRITE | (FAN_EVENT_ON_CHILD if path == folder else 0)
        if _lib().fanotify_mark(self._fd, FAN_MARK_ADD, mask, AT_FDCWD,
                                os.fsencode(path)) != 0:
            raise _fail(f"fanotify_mark {path!r}")
        self.marks += 1
        self._folders.setdefault(_key(folder), folder)

    def take(self) -> set[str] | None:
        """The paths opened since the last call (and forgets them), every event the kernel
        has queued by now read first (the opens of a process that has ended are all there);
        ``None`` if some may be missing (the kernel's queue overflowed, an event named an
        unknown folder, the watch failed)."""
        with self._lock:
            self._drain()
            opened, lost = self._opened, self._lost or self._failed
            self._opened, self._lost = set(), False
        return None if lost else opened

    def _drain(self) -> None:
        """Reads and adds every event queued (holding the lock)."""
        if self._failed:
            return
        try:
            while True:
                try:
                    data = os.read(self._fd, 1 << 16)
                except BlockingIOError:
                    return
                if not data:
                    return
                self._read(data)
        except OSError:
            self._failed = True

    def _gather(self) -> None:
        """Drains the queue as events come (the kernel holds 16,384, then drops them)."""
        poll = select.poll()
        poll.register(self._fd, select.POLLIN)
        poll.register(self._stop_r, select.POLLIN)
        while not self._failed:
            ready = {fd for fd, _ in poll.poll()}
            if self._stop_r in ready:
                return
            with self._lock:
                self._drain()

    def _read(self, data: bytes) -> None:
        """Adds the events in ``data`` (whole events, as ``read`` returns them; holding the
        lock)."""
        if self._lost:  # every file is evicted at the next take: a bot flooding the queue
            return      # with opens costs the coordinator no parsing meanwhile
        found: list[str] = []
        lost = False
        me = os.getpid()
        at = 0
        while at + _META.size <= len(data):
            length, _, _, meta, mask, fd, pid = _META.unpack_from(data, at)
            if length < _META.size:
                lost = True
                break
            if fd >= 0:  # never with FAN_REPORT_DFID_NAME, but never leaked either
                os.close(fd)
            if mask & FAN_Q_OVERFLOW:
                lost = True
            if pid == me:  # the referee's own opens (an eviction's): an unprivileged listener
                at += length  # is told its own pid, 0 for every other process's
                continue
            info, end = at + meta, at + length
            while info + _INFO.size <= end:
                kind, _, size = _INFO.unpack_from(data, info)
                if size < _INFO.size:
                    break
                if kind == FAN_EVENT_INFO_TYPE_DFID_NAME and \
                        info + _INFO.size + _FSID_HANDLE.size <= end:
                    lo, hi, count, htype = _FSID_HANDLE.unpack_from(data, info + _INFO.size)
                    start = info + _INFO.size + _FSID_HANDLE.size
                    handle = struct.pack("i", htype) + data[start:start + count]
                    name = data[start + count:info + size].split(b"\0", 1)[0]
                    # the file system's id as statvfs gives it: val[0] low, val[1] high (here
                    # /usr's 0x48b6bb23ec19b4de, val[0] negative as an int, not sign-extended)
                    fsid = (lo & 0xFFFFFFFF) | (hi & 0xFFFFFFFF) << 32
                    folder = self._folders.get((fsid, handle))
                    if folder is None or name in (b"", b"."):  # unknown: evict everything
                        lost = True
                    else:
                        found.append(os.path.join(folder, os.fsdecode(name)))
                info += size
            at = end
        self._opened.update(found)
        self._lost = self._lost or lost

    def close(self) -> None:
        """Stops the thread and the watch."""
        if self._stop_w >= 0:
            os.write(self._stop_w, b"x")
            thread = getattr(self, "_thread", None)
            if thread is not None:
                thread.join()
            for fd in (self._fd, self._stop_r, self._stop_w):
                os.close(fd)
            self._stop_w = -1
