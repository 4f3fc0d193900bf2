"""Submission folders as the watcher sees them, without trusting them: their names
(:func:`name_problem`, :func:`shown`), their fingerprints (:func:`fingerprint`: a walk through
folder descriptors, each folder opened from its parent's without following a symlink, that
stops at the caps), and the mount points among them (:func:`mount_points`, from the mount
table: a folder that is or holds another file system is refused without looking inside it, so
a stalled network or FUSE file system never blocks a look).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import stat
import time
from collections.abc import Iterable
from pathlib import Path

from referee.bots.snapshot import ENTRIES_PER_MB, MAX_DEPTH
from referee.protocol.escape import escape_controls
from referee.tournament.common import NAME_RE

__all__ = ["MAX_NAME", "RACY_NS", "Changed", "Stats", "fingerprint", "mount_points",
           "name_problem", "open_folder", "recent", "shown", "stat_key", "unchanged"]

VERSIONED = re.compile(r".*\.v[0-9]+")
"""A folder name the league's version names could take (``alice.v2``): refused."""
MAX_NAME = 64
"""The longest folder name (an author's name on the page and in its files' names)."""
PATH_MAX = os.pathconf("/", "PC_PATH_MAX")
RACY_NS = 2_000_000_000
"""A folder or file changed this recently (by its timestamps) is walked again at the next poll
rather than trusted by its ``stat``: a change within the file system's timestamp granularity
leaves them as they were."""
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
MOUNTINFO = Path("/proc/self/mountinfo")

Stats = list[tuple[str, tuple[int, ...]]]
"""Every entry's path and :func:`stat_key`, the folder's first: what :func:`unchanged`
compares at the next look."""


def shown(author: str, limit: int = 80) -> str:
    r"""A folder's name as the log and the page show it: bytes that are not UTF-8 as ``\xff``,
    control characters as escapes (:func:`~referee.protocol.escape.escape_controls`), cut to
    about ``limit`` characters.

    >>> shown("bad\udcff\x1b[2J"), shown("a" * 100, limit=8)
    ('bad\\xff\\x1b[2J', 'aaaaaaaa... (100 characters)')
    """
    text = author.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    cut = escape_controls(text[:limit])
    return cut if len(text) <= limit else f"{cut}... ({len(author)} characters)"


def name_problem(author: str, output: Path) -> str | None:
    """Why a submission folder's name cannot be an author's (one line), or ``None``: only
    letters, digits, ``-``, ``_`` and ``.``, not starting with ``-`` (an option, to a command
    that meets it) nor ending as a version's name, at most :data:`MAX_NAME` characters, and
    short enough for the longest path the league makes of it under ``output``."""
    if not NAME_RE.fullmatch(author):
        try:
            author.encode("utf-8")
        except UnicodeEncodeError:
            return "its folder's name is not valid UTF-8"
        return "its folder's name may only hold letters, digits, '-', '_' and '.'"
    if author.startswith("-"):
        return "its folder's name may not start with '-' (it would read as an option)"
    if VERSIONED.fullmatch(author):
        return "its folder's name may not end in .v<number> (the league names versions so)"
    if len(author) > MAX_NAME:
        return f"its folder's name is longer than {MAX_NAME} characters"
    longest = output / "logs" / f"r1-g{'0' * 12}-s99" / f"99-{author}.v999999.stderr"
    if len(os.fsencode(longest)) >= PATH_MAX - 64:
        return "its folder's name makes the paths of its logs too long under the output folder"
    return None


class Changed(Exception):
    """The folder changed while it was walked (an entry gone, a folder become a file or a
    link)."""


def stat_key(st: os.stat_result) -> tuple[int, ...]:
    """What tells a change of an entry by its ``stat``: its kind and mode, inode, device,
    size, and modification and change times."""
    return st.st_mode, st.st_ino, st.st_dev, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def unchanged(stats: Stats) -> bool:
    """Whether every entry :func:`fingerprint` saw is as it saw it (one ``lstat`` each; a
    folder whose entries changed has another modification time)."""
    lstat = os.lstat
    try:
        for path, key in stats:
            st = lstat(path)
            if (st.st_mode, st.st_ino, st.st_dev, st.st_size, st.st_mtime_ns,
                    st.st_ctime_ns) != key:
                return False
    except OSError:
        return False
    return True


def recent(stats: Stats) -> bool:
    """Whether an entry changed within :data:`RACY_NS` of now (its ``stat`` not to be trusted
    yet)."""
    now, racy = time.time_ns(), RACY_NS
    return any(now - max(key[4], key[5]) < racy for _, key in stats)


def _unescape(field: str) -> str:
    r"""A path of the mount table, its ``\040``-style escapes (space, tab, newline, ``\``)
    undone."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def mount_points(under: Path, table: Path | None = None) -> set[str]:
    """The names of the folders right under ``under`` (resolved) that are, or hold, a mount
    point, by the mount table: read, never looked into (a stalled file system answers no
    ``stat``). An unreadable table: none known."""
    prefix = os.fsencode(os.path.realpath(under)) + b"/"
    found: set[str] = set()
    try:
        lines = (table or MOUNTINFO).read_bytes().splitlines()
    except OSError:
        return found
    for line in lines:
        fields = line.split(b" ")
        if len(fields) < 5:
            continue
        point = os.fsencode(_unescape(os.fsdecode(fields[4])))
        if point.startswith(prefix):
            found.add(os.fsdecode(point[len(prefix):].split(b"/", 1)[0]))
    return found


def open_folder(parent: int, name: str) -> int:
    """A descriptor of the folder ``name`` in the folder ``parent`` (a descriptor), opened
    without following a symlink.

    :raises ValueError: it is a symlink or not a folder (one line).
    :raises Changed: it is gone.
    """
    try:
        return os.open(name, DIR_FLAGS, dir_fd=parent)
    except FileNotFoundError:
        raise Changed(name) from None
    except OSError as err:
        if err.errno in (errno.ELOOP, errno.ENOTDIR):
            raise ValueError("it is a symlink or a file, not a folder") from None
        raise


def fingerprint(folder: Path, *, cap_mb: int, stats: Stats | None = None,
                parent: int | None = None) -> str:
    """A digest of what ``folder`` holds as ``stat`` sees it (paths, kinds, sizes, modes,
    modification times, link targets), walked through folder descriptors: ``folder`` opened
    from ``parent`` (a descriptor of the folder it is in; default: opened here), each folder
    from its parent's, never through a symlink.

    :raises ValueError: past the caps (``cap_mb`` MiB of files, ``cap_mb * 8`` entries,
        :data:`MAX_DEPTH` folders deep), for a folder that is a symlink or not a folder, or
        one that holds another file system: one line saying which.
    :raises Changed: where an entry went or changed kind while it was walked.
    :raises OSError: where it cannot be read.

    ``stats``: filled with every entry's path and :func:`stat_key` (the folder's first).
    """
    with contextlib.ExitStack() as stack:
        if parent is None:
            parent = os.open(folder.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            stack.callback(os.close, parent)
        try:
            fd = open_folder(parent, folder.name)
            stack.callback(os.close, fd)
            return _Walk(str(folder), cap_mb, stats).run(fd)
        except (FileNotFoundError, NotADirectoryError) as err:
            raise Changed(str(err)) from None
        except OSError as err:
            if err.errno == errno.ENAMETOOLONG:
                raise ValueError("a path in it is longer than the system allows") from None
            if err.errno == errno.ELOOP:  # a folder in it became a link while walked
                raise Changed(str(err)) from None
            raise


class _Walk:
    """One fingerprint's walk (see :func:`fingerprint`): depth first, by name, at most
    :data:`MAX_DEPTH` descriptors open."""

    def __init__(self, root: str, cap_mb: int, stats: Stats | None) -> None:
        self.root, self.cap_mb, self.stats = root, cap_mb, stats
        self.most_entries, self.most_bytes = cap_mb * ENTRIES_PER_MB, cap_mb << 20
        self.digest = hashlib.sha256()
        self.entries = self.size = 0
        self.dev = -1

    def run(self, fd: int) -> str:
        st = os.fstat(fd)
        self.dev = st.st_dev
        if self.stats is not None:
            self.stats.append((self.root, stat_key(st)))
        self._folder(fd, "", 0)
        return self.digest.hexdigest()

    def _listed(self, fd: int) -> Iterable[os.DirEntry[str]]:
        with os.scandir(fd) as it:
            names = []
            for entry in it:
                self.entries += 1
                if self.entries > self.most_entries:
                    raise ValueError(f"it holds more than {self.most_entries} files, folders "
                                     f"and links (snapshot_mb {self.cap_mb} allows "
                                     f"{ENTRIES_PER_MB} a MiB)")
                names.append(entry)
        return sorted(names, key=lambda e: e.name)

    def _folder(self, fd: int, rel: str, depth: int) -> None:
        if depth > MAX_DEPTH:
            raise ValueError(f"it is more than {MAX_DEPTH} folders deep")
        for entry in self._listed(fd):
            est = entry.stat(follow_symlinks=False)
            here = f"{rel}/{entry.name}" if rel else entry.name
            if self.stats is not None:
                self.stats.append((f"{self.root}/{here}", stat_key(est)))
            extra = ""
            if stat.S_ISLNK(est.st_mode):
                with contextlib.suppress(OSError):
                    extra = os.readlink(entry.name, dir_fd=fd)
            elif stat.S_ISDIR(est.st_mode):
                if est.st_dev != self.dev:
                    raise ValueError(f"it holds another file system at {here!r} (a mount "
                                     f"point): copy the files the bot needs instead")
                sub = os.open(entry.name, DIR_FLAGS, dir_fd=fd)
                try:
                    self._folder(sub, here, depth + 1)
                finally:
                    os.close(sub)
            elif stat.S_ISREG(est.st_mode):
                self.size += est.st_size
                if self.size > self.most_bytes:
                    raise ValueError(f"it holds more than {self.cap_mb} MiB (snapshot_mb)")
            self.digest.update(f"{here}\0{est.st_mode}\0{est.st_size}\0{est.st_mtime_ns}\0"
                               f"{extra}\n".encode("utf-8", "surrogateescape"))
