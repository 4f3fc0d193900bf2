"""Cache hygiene: what one seating's bots left in the kernel's caches is gone before the next
seating of its duplicate set starts.

Every sandbox on a machine shares one kernel, and the kernel's caches remember what its
processes looked at: a ``stat`` of a made-up name leaves a negative dentry, a read of a cold
page of a system file leaves it cached. A bot reads such marks back by timing a second look
(a cached lookup or page answers many times faster), so a bot in the first-played seating of a
set could leave its cards there for itself in a later one, which plays the same deals
(``docs/security.md``, *Between the seatings of a set*). Writing ``3`` to
``/proc/sys/vm/drop_caches`` frees every unused dentry and inode (``2``) and every clean,
unmapped page of the page cache (``1``): the marks of processes that have ended are gone
(a page some live process maps stays, whoever read it first). Only root may write it.

A referee that is not root cannot drop them, but it may evict the pages of any file it can open
for reading (``posix_fadvise(POSIX_FADV_DONTNEED)``, which the bots' seccomp filter refuses them):
:class:`Eviction` walks the folders every sandbox shows read-only (the system folders, ``/etc``'s
entries, the runtimes and the referee package, ``shared`` data) once, and before each later
seating evicts the pages of every file in them opened since the last eviction (a fanotify watch
tells which; every file where it cannot); a bot's own files are a fresh copy each match
(:func:`referee.bots.snapshot.match_copy`), new inodes with no pages. What it cannot reach: the
negative dentries of made-up names (``stat``, timed) and the blocks of folders read (the block
device's cache), which only a drop frees (``docs/security.md``, *Between the seatings of a
set*, with what each costs and leaves).

:class:`Hygiene` batches the drops: a drop serves every seating whose predecessors in its set
ended before it, so a later seating starts after at most one, and a run of them after one.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from referee.bots.opened import Opened

__all__ = ["DROP_CACHES", "EVERYTHING", "Eviction", "Hygiene", "Tree", "can_drop", "can_evict",
           "drop_caches", "evict_pages", "walk"]

DROP_CACHES = Path("/proc/sys/vm/drop_caches")
"""The kernel's switch: ``1`` frees the clean page cache, ``2`` the unused dentries and inodes
(slab objects), ``3`` both."""

EVERYTHING = 3
"""What a drop frees: dentries, inodes and the clean page cache."""


def can_drop(path: Path = DROP_CACHES) -> bool:
    """Whether this process may drop the kernel's caches: root, with ``/proc/sys`` writable (a
    container may mount it read-only)."""
    return os.geteuid() == 0 and os.access(path, os.W_OK)


def drop_caches(level: int = EVERYTHING, path: Path = DROP_CACHES) -> float:
    """Drops the kernel's caches (``level`` as :data:`DROP_CACHES` reads it): no ``sync``
    first, since no bot can write a file another bot reads (a dirty page stays; it is no
    mark). The seconds it took.

    :raises OSError: if the kernel refuses (not root, ``/proc/sys`` read-only)."""
    began = time.monotonic()
    with open(path, "w") as f:
        f.write(f"{level}\n")
    return time.monotonic() - began


def can_evict() -> bool:
    """Whether this Python can evict a file's pages (``posix_fadvise``: Linux, any user)."""
    return hasattr(os, "posix_fadvise")


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


@dataclass
class Tree:
    """What :func:`walk` found: every folder, and every regular file as (folder, names)."""

    folders: list[str] = field(default_factory=list)
    files: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)

    @property
    def count(self) -> int:
        """Regular files."""
        return sum(len(names) for _, names in self.files)


def walk(paths: Iterable[Path]) -> Tree:
    """Every folder and regular file in ``paths`` (folders, or files: ``/etc``'s entries) and
    below, resolved, symlinks not followed, none twice (``/lib`` is ``/usr/lib`` on a merged
    system), a file system mounted below included."""
    tree = Tree()
    real = sorted({os.path.realpath(p) for p in paths if os.path.exists(p)})
    tops: list[str] = []
    for path in real:
        if not any(path == t or path.startswith(t.rstrip("/") + "/") for t in tops):
            tops.append(path)
    loose: dict[str, list[str]] = {}
    stack: list[str] = []
    for top in reversed(tops):
        if os.path.isdir(top):
            stack.append(top)
        elif os.path.isfile(top):
            loose.setdefault(os.path.dirname(top), []).append(os.path.basename(top))
    tree.files += [(folder, tuple(names)) for folder, names in loose.items()]
    while stack:
        here = stack.pop()
        try:
            it = os.scandir(here)
        except OSError:
            continue
        tree.folders.append(here)
        names: list[str] = []
        below: list[str] = []
        with it:
            for entry in it:
                try:
                    if entry.is_dir(follow_symlinks=False):
                        below.append(entry.path)
                    elif entry.is_file(follow_symlinks=False):
                        names.append(entry.name)
                except OSError:
                    continue
        if names:
            tree.files.append((here, tuple(names)))
        stack += sorted(below, reverse=True)
    return tree


def evict_pages(files: Iterable[tuple[str, tuple[str, ...]]]) -> int:
    """Evicts the clean, unmapped page-cache pages of ``files`` ((folder, names) pairs, as
    :attr:`Tree.files` holds them), each opened read-only through its folder's descriptor
    (no path walked twice) and advised ``POSIX_FADV_DONTNEED``; a file that cannot be opened
    (another user's private one, gone since) is passed over: no bot can read it either. How
    many were advised."""
    done = 0
    advise, dontneed, open_, close = os.posix_fadvise, os.POSIX_FADV_DONTNEED, os.open, os.close
    for folder, names in files:
        try:
            dfd = open_(folder, _DIR_FLAGS)
        except OSError:
            continue
        try:
            for name in names:
                try:
                    fd = open_(name, _FILE_FLAGS, dir_fd=dfd)
                except OSError:
                    continue
                try:
                    advise(fd, 0, 0, dontneed)
                    done += 1
                except OSError:
                    pass
                finally:
                    close(fd)
        finally:
            close(dfd)
    return done


@dataclass
class Eviction:
    """The page cache of the files in ``folders`` (what the sandboxes show read-only)
    evicted at each call: what a referee that is not root does in place of a drop
    (:func:`drop_caches`); the dentries stay.

    It walks the folders, starts watching which of their files are opened
    (:class:`~referee.bots.opened.Opened`: fanotify, one mark a folder), then evicts every
    file: from then on a page of these files is cached only through an open the watch sees
    (or one of this process's, which no bot decides), so each call evicts only the files
    opened since the one before and leaves the cache as an eviction of every file would: a
    file a bot read and one it did not are alike cold (but for pages some live process maps,
    which no eviction frees). :meth:`prepare` does that in a thread of its own, and
    :meth:`ready`, before any bot starts, waits until the watch is in place (the eviction of
    every file may go on while play starts: what a bot reads before it passes is evicted by
    it, what it reads after is seen); without them the first call does it all. It evicts every
    file again when the watch may have missed an open (the kernel's queue overflowed) or
    there is none (an old kernel, the user's fanotify marks used up: :attr:`watching` says
    why). A file added to the folders after the walk, which only their owner can do, is
    left out."""

    folders: tuple[Path, ...]
    files: int = 0
    """Files advised at the last call."""
    full: int = 0
    """Evictions of every file (the first, and where the watch could not tell)."""
    tree: Tree | None = None
    watch: Opened | None = None
    watching: str = ""
    """Why there is no watch (empty: there is, or it is not set up yet)."""
    _thread: threading.Thread | None = None
    _marked: threading.Event = field(default_factory=threading.Event)
    _ready: bool = False

    def prepare(self) -> None:
        """Starts the walk, the watch and the eviction of every file in a thread."""
        if self._thread is None and self.tree is None:
            self._thread = threading.Thread(target=self._start, name="eviction", daemon=True)
            self._thread.start()

    def ready(self) -> None:
        """Waits until the watch is in place (call it before any bot starts)."""
        if self._thread is not None:
            self._marked.wait()
            self._ready = True

    def _start(self) -> None:
        try:
            tree = walk(self.folders)
            inside = set(tree.folders)
            try:
                self.watch = Opened(tree.folders, [os.path.join(folder, name) for folder, names
                                                   in tree.files if folder not in inside
                                                   for name in names])
            except Exception as err:  # no watch: every later call evicts every file
                self.watching = str(err) or type(err).__name__
            self.tree = tree
        finally:  # ready() never waits for ever, whatever the walk met
            self._marked.set()
        self.files = evict_pages(tree.files)
        self.full += 1

    def __call__(self) -> None:
        every = False
        if self._thread is not None:
            self._thread.join()
            self._thread = None
            every = not self._ready  # bots may have started before the watch
        if self.tree is None:
            self._start()
            return
        opened = self.watch.take() if self.watch is not None else None
        if opened is None or every:
            self.files = evict_pages(self.tree.files)
            self.full += 1
        else:
            self.files = evict_pages(_by_folder(opened))

    def close(self) -> None:
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self.watch is not None:
            self.watch.close()
            self.watch = None


def _by_folder(paths: Iterable[str]) -> list[tuple[str, tuple[str, ...]]]:
    folders: dict[str, list[str]] = {}
    for path in sorted(paths):
        folder, name = os.path.split(path)
        folders.setdefault(folder, []).append(name)
    return [(folder, tuple(names)) for folder, names in folders.items()]


@dataclass
class Hygiene:
    """When to drop the caches: :meth:`ended` as each match ends (its bots' processes gone),
    :meth:`before` as each match is about to start; ``before`` drops them (through ``drop``)
    when a match of the same set ended since the last drop. ``drop`` is ``None`` where the
    caches cannot be dropped (a referee that is not root, a remote runner): nothing is done,
    and :attr:`active` says so.

    >>> h = Hygiene(drop=lambda: None)
    >>> h.before("a"), h.ended("a"), h.before("b"), h.before("a"), h.before("a")
    (False, None, False, True, False)
    >>> h.ended("a"), h.ended("b"), h.before("b"), h.before("a"), h.drops
    (None, None, True, False, 2)
    """

    drop: Callable[[], object] | None
    drops: int = 0
    """How many drops it made."""
    seconds: float = 0.0
    """The time they took, all together."""
    _ended: set[object] = field(default_factory=set)
    """The sets (their deals keys) with a seating ended since the last drop."""
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def active(self) -> bool:
        """Whether it drops the caches between the seatings of a set."""
        return self.drop is not None

    def ended(self, key: object) -> None:
        """A match of the set ``key`` ended, its bots gone."""
        if self.drop is not None:
            with self._lock:
                self._ended.add(key)

    def before(self, key: object) -> bool:
        """A match of the set ``key`` is about to start: drops the caches if a match of that
        set ended since the last drop (one drop serves every set that waited on it). Whether
        it dropped them."""
        if self.drop is None:
            return False
        with self._lock:
            if key not in self._ended:
                return False
            began = time.monotonic()
            self.drop()
            self.seconds += time.monotonic() - began
            self.drops += 1
            self._ended.clear()
            return True
