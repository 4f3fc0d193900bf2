"""Sealed entrants: an entrant is one folder, played from a private snapshot of it.

Before a tournament plays, :func:`entrant_folder` works out the one folder an entrant's command
lives in and refuses a command that names any path outside it (another entrant, ``/``,
``/proc``, ``/tmp``, a home, a symlink leading out), unless the path is in a system folder, in
the organiser's ``shared`` list, or is the runtime that runs the bot. :func:`take_snapshot` then
copies the folder once into a private store (a folder only the referee can open) and hashes the
copy, never the folder: every match runs from that copy, so a file changed (even through a
shared writable mapping, which moves no date) or a symlink swapped after it changes nothing,
and every match runs the same code (:attr:`Snapshot.digest` names it). The store lives in memory
(:mod:`referee.bots.image`): every match shows the one copy read-only, and a tmpfs keeps no
cache a bot could mark for its next seating.

>>> folder = entrant_folder(["python3", "bot.py"], Path("bots/mine"))  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import pwd
import shutil
import stat
import tempfile
import time
import uuid
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from referee.bots import image
from referee.bots.expiring import expiring
from referee.bots.policy import SYSTEM_DIRS, SandboxError
from referee.bots.resolve import Binds, bot_binds, within

FORBIDDEN = ("/", "/proc", "/sys", "/dev", "/run", "/tmp", "/var", "/var/tmp", "/home",
             "/root", "/etc", "/boot", "/mnt", "/media", "/opt", "/srv", "/usr", "/usr/local",
             "/var/lib")
"""Folders that are never an entrant's folder, a runtime or shared data as a whole."""
PATH_MAX = 4096
"""The longest path the kernel takes, its final NUL included."""
MAX_DEPTH = 64
"""The deepest folder an entrant's folder may hold (the copy walks it recursively)."""
DEFAULT_CAP_MB = 512
"""The largest entrant folder snapshotted unless the configuration says otherwise."""
ENTRIES_PER_MB = 64
"""Files, folders and links a folder may hold per MiB of its cap (32,768 at the default
512 MiB; a bot with its own venv and numpy holds about 2,000): each is an inode in memory while
the tournament runs."""

def _real(path: Path | str) -> Path:
    return Path(os.path.realpath(path))


HOST_TTL_S = 60.0
"""How long the host's lookups (:func:`homes`, :func:`system_folders`) are kept: they were made
once or twice per entrant (the password database alone: 24 of the 38 s a 10,000-entrant
tournament took to start)."""


@expiring(HOST_TTL_S)
def homes() -> frozenset[Path]:
    """Every user's home folder (from the password database), resolved."""
    found = {_real(p.pw_dir) for p in pwd.getpwall() if p.pw_dir and p.pw_dir != "/"}
    with contextlib.suppress(KeyError):
        found.add(_real(os.path.expanduser("~")))
    return frozenset(found)


@expiring(HOST_TTL_S)
def system_folders() -> tuple[Path, ...]:
    """The system folders (:data:`~referee.bots.policy.SYSTEM_DIRS`) there are, resolved."""
    return tuple(_real(d) for d in SYSTEM_DIRS if os.path.isdir(d))


def forbidden(path: Path) -> str | None:
    """Why ``path`` (resolved) may not be shown to a bot as a whole (``None``: it may)."""
    if str(path) in FORBIDDEN:
        return "a system folder"
    if path in homes():
        return "a home folder"
    return None


def named_paths(argv: Sequence[str], workdir: Path) -> list[tuple[str, Path]]:
    """The paths a command names that exist (argument as written, absolute path, symlinks
    kept): its program when it has a slash, its arguments, ``FILE:FUNCTION`` files and the
    values of ``--option=VALUE`` options."""
    words: list[str] = [argv[0]] if "/" in argv[0] else []
    for arg in argv[1:]:
        if arg.startswith("-"):
            if "=" in arg:
                words.append(arg.partition("=")[2])
            continue
        words.append(arg)
    words += [w.rpartition(":")[0] for w in words if ":" in w]
    found: list[tuple[str, Path]] = []
    for word in words:
        if not word:
            continue
        path = Path(os.path.abspath(Path(workdir, word)))
        if os.path.lexists(path) and all(path != p for _, p in found):
            found.append((word, path))
    return found


def _inside(path: Path, folders: Sequence[Path]) -> bool:
    return any(within(path, f) for f in folders)


def entrant_folder(argv: Sequence[str], workdir: Path, *, shared: Sequence[Path] = (),
                   given: bool = True) -> Path:
    """The one folder an entrant lives in (resolved): ``workdir`` when it was ``given`` and
    the first file its command names lies inside it (or it names none), else that file's
    folder. Every other path the
    command names must lie inside that folder, a system folder or a ``shared`` path, or be the
    runtime that runs the bot (its program, found outside the folder).

    :raises SandboxError: naming the path and the fix, in one line.
    """
    workdir = Path(os.path.abspath(workdir))
    named = named_paths(argv, workdir)
    shared_real = [_real(s) for s in shared]
    program = named[0][1] if named and named[0][0] == argv[0] else None
    real_workdir = _real(workdir)
    own = [(w, p) for w, p in named if p != program or _inside(_real(p), [real_workdir])]
    first = _real(own[0][1]) if own else real_workdir
    if first == real_workdir or (given and within(first, real_workdir)):
        folder = real_workdir
    else:
        folder = first if first.is_dir() else first.parent
    why = forbidden(folder)
    if why:
        raise SandboxError(f"the entrant's folder {str(folder)!r} is {why}: give the entrant "
                           f"a folder of its own holding its files (workdir: that folder)")
    allowed = [folder, *shared_real, *system_folders()]
    for word, path in named:
        real = _real(path)
        if _inside(real, allowed) or path == program:
            continue  # a program outside the folder: a runtime (bot_binds checks it)
        via = f" (a symlink to {str(real)!r})" if real != path else ""
        raise SandboxError(f"the command names {word!r}{via}, outside the entrant's folder "
                           f"{str(folder)!r}: a bot may name only its own files; copy what it "
                           f"needs into its folder, or list data every bot may read under "
                           f"shared:")
    return folder


def sealed_binds(argv: Sequence[str], workdir: Path, folder: Path,
                 shared: Sequence[Path] = ()) -> Binds:
    """What the sandbox shows a sealed entrant: its folder (served from a copy), its runtimes
    (outside its folder, never a system folder as a whole or a home) and ``shared``.

    :raises SandboxError: for a runtime that is a system folder as a whole or a home.
    """
    binds = bot_binds(argv, workdir)
    runtime: list[Path] = []
    for prefix in binds.runtime:
        if _inside(_real(prefix), [folder]):
            continue  # inside the folder: the copy serves it
        why = forbidden(_real(prefix))
        if why:
            raise SandboxError(f"the runtime {str(prefix)!r} of {str(binds.exe)!r} is {why}: "
                               f"install it in a folder of its own (a venv, say)")
        runtime.append(prefix)
    extra = [s for s in shared if _real(s) not in (_real(r) for r in runtime)]
    return replace(binds, bot=(folder,), runtime=(*runtime, *extra))


# -- the store -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Snapshot:
    """An entrant folder as copied into the store when the tournament started (plain data: it
    travels with the entrant)."""

    folder: Path
    """The folder as the bot sees it (its resolved path on the host)."""
    copy: Path
    """The copy in the store, which every match copies again."""
    digest: str
    """``sha256:`` of every path, kind, executable bit and content, in path order: the content
    as read back from :attr:`copy`, never from the folder."""
    size: int
    """Bytes of regular files."""
    files: int
    seconds: float
    """How long the copy took."""
    skipped: tuple[str, ...] = field(default=())
    """What was left out (relative paths): protected paths, other entrants, special files."""
    entries: int = 0
    """Files, folders and links: what a per-match copy makes."""
    stored: int = 0
    """Bytes of data in its regular files, holes left out: what a per-match copy writes."""


STORE_PREFIX = "ct-referee-entrants-"
"""The name of a store's folder starts so (:func:`clean_stale` looks for it)."""
STORE_LOCK = ".lock"
"""A file in a store, locked (``flock``) while the store is in use."""


class Store:
    """A private folder (``0700``, the referee's) holding a tournament's snapshots and its
    per-match copies; :meth:`close` removes it. A lock in it (:data:`STORE_LOCK`) is held while
    it lives: a store whose referee was killed without a word is found by the next start
    (:func:`clean_stale`)."""

    def __init__(self, parent: Path | None = None) -> None:
        self.path = Path(tempfile.mkdtemp(prefix=STORE_PREFIX, dir=parent or image.base()))
        self.path.chmod(0o700)
        self._lock: int | None = os.open(self.path / f"{STORE_LOCK}.new",
                                         os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC,
                                         0o600)
        fcntl.flock(self._lock, fcntl.LOCK_EX)
        os.rename(self.path / f"{STORE_LOCK}.new", self.path / STORE_LOCK)  # seen locked

    def room(self, name: str) -> int:
        """Bytes of the longest folder path a copy of entrant ``name``'s folder starts at (its
        snapshot, or a per-match copy): what a path inside the folder adds must stay below
        ``PATH_MAX``."""
        return max(len(os.fsencode(self.path / f"{name}-{'0' * 8}")),
                   len(os.fsencode(self.path / "m" / ("0" * 32))))

    def close(self) -> None:
        """Remove the store and everything in it."""
        shutil.rmtree(self.path, ignore_errors=True)
        if self._lock is not None:
            os.close(self._lock)
            self._lock = None

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def clean_stale(parent: Path | None = None) -> list[Path]:
    """Removes the stores a referee killed without a word (``kill -9``) left in ``parent``
    (default: where a :class:`Store` goes): this user's, whose lock no live process holds;
    returns them. A store of an older ct-referee (no lock) is left alone."""
    where = Path(parent or image.base())
    removed: list[Path] = []
    try:
        found = [p for p in where.iterdir() if p.name.startswith(STORE_PREFIX)]
    except OSError:
        return removed
    for path in found:
        try:
            st = path.lstat()
            if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid():
                continue
            fd = os.open(path / STORE_LOCK, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            continue  # in use
        finally:
            os.close(fd)
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
    return removed


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_NEW_FLAGS = os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_CHUNK = 1 << 20
_EMPTY = hashlib.sha256(b"").digest()

Writer = tuple[str, int]
"""Who may add entries to a folder: ``("u", uid)``, ``("g", gid)`` (its members) or
``("o", -1)`` (every user)."""


def _copy_range(src: int, dst: int, start: int, end: int) -> bool:
    """Copies bytes ``start`` to ``end`` of ``src`` to the same place in ``dst``, in the
    kernel where it can (``copy_file_range``: a reflink on btrfs and XFS); ``False`` if
    ``src`` ended first."""
    pos = start
    while pos < end:
        try:
            done = os.copy_file_range(src, dst, end - pos, pos, pos)
        except OSError as err:
            if err.errno not in (errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
                raise
            chunk = os.pread(src, min(end - pos, _CHUNK), pos)
            done = len(chunk)
            view = memoryview(chunk)
            at = pos
            while view:
                wrote = os.pwrite(dst, view, at)
                view, at = view[wrote:], at + wrote
        if done == 0:
            return False
        pos += done
    return True


def copy_data(src: int, dst: int, size: int, st_blocks: int) -> None:
    """Copies the first ``size`` bytes of ``src`` (no more, whatever it holds by then) into
    the empty ``dst``: a sparse file (fewer blocks than its size) data run by data run
    (``SEEK_DATA``/``SEEK_HOLE``), its holes left holes; a 128 MiB sparse file was written out
    dense in the snapshot and in every per-match copy."""
    if st_blocks * 512 >= size:
        _copy_range(src, dst, 0, size)
        return
    pos = 0
    while pos < size:
        try:
            start = os.lseek(src, pos, os.SEEK_DATA)
        except OSError as err:
            if err.errno != errno.ENXIO:  # past the last data: a hole to the end
                raise
            break
        if start >= size:
            break
        end = min(os.lseek(src, start, os.SEEK_HOLE), size)
        if not _copy_range(src, dst, start, end):
            break
        pos = end
    os.ftruncate(dst, size)  # the hole at the end


def _hash(fd: int) -> bytes:
    """sha256 of everything ``fd`` holds, read from its start."""
    h = hashlib.sha256()
    pos = 0
    while chunk := os.pread(fd, _CHUNK, pos):
        h.update(chunk)
        pos += len(chunk)
    return h.digest()


class _Copy:
    """One snapshot being made: the walk, file by file, through folder descriptors opened
    without following symlinks (a folder swapped for a symlink during the copy is refused, not
    followed), judging every folder and file by its own stat (:meth:`_judge`), with the digest
    of the copy and the counts."""

    def __init__(self, folder: Path, dest: Path, exclude: Sequence[Path], cap_mb: int,
                 excluded: Collection[tuple[int, int]] = (), room: int = 0,
                 opened: int | None = None) -> None:
        self.folder, self.dest, self.cap_mb, self.room = folder, dest, cap_mb, room
        self.opened = opened
        self.exclude = set()
        self.excluded = excluded  # shared by every snapshot of a tournament: not copied
        for path in exclude:
            with contextlib.suppress(OSError):
                st = os.stat(path)
                self.exclude.add((st.st_dev, st.st_ino))
        self.digest = hashlib.sha256()
        self.size = self.files = self.entries = self.stored = 0
        self.skipped: list[str] = []
        self.trusted = {0, os.geteuid()}
        self.dev = -1
        self._groups: dict[int, frozenset[int] | None] = {}
        # hard links not vouched for: inode -> [names seen, the first, its stat, who may write]
        self.links: dict[tuple[int, int], list[Any]] = {}

    def run(self) -> None:
        fd = os.open(self.folder, _DIR_FLAGS) if self.opened is None else \
            os.open(".", _DIR_FLAGS, dir_fd=self.opened)  # the very folder opened before
        try:
            top = os.fstat(fd)
            self.dev = top.st_dev
            self._folder(fd, Path(), self._writers(top, Path("."), {}))
        finally:
            os.close(fd)
        for seen, here, st, writers in self.links.values():
            if seen < st.st_nlink:
                who, where = self._writer(writers)
                raise SandboxError(
                    f"the entrant's folder {str(self.folder)!r} holds {str(here)!r}, a hard "
                    f"link to a file of uid {st.st_uid} with {st.st_nlink - seen} other "
                    f"name(s) outside the folder, and {who} may write {where}: a file "
                    f"linked in from elsewhere cannot be vouched for (another user's, "
                    f"perhaps); replace it with a copy of its own, or remove it")

    # -- who may have put a file there, and may it read the file --------------------------

    def _writers(self, st: os.stat_result, here: Path,
                 above: dict[Writer, Path]) -> dict[Writer, Path]:
        """Who may add entries to this folder (its owner always may: it can chmod it), with
        those who may add entries to a folder above it (they may swap this one), each with
        the first folder that lets it; root and the referee's uid are not counted."""
        writers = dict(above)
        if st.st_uid not in self.trusted:
            writers.setdefault(("u", st.st_uid), here)
        if st.st_mode & stat.S_IWGRP:
            writers.setdefault(("g", st.st_gid), here)
        if st.st_mode & stat.S_IWOTH:
            writers.setdefault(("o", -1), here)
        return writers

    def _groups_of(self, uid: int) -> frozenset[int] | None:
        if uid not in self._groups:
            try:
                user = pwd.getpwuid(uid)
                self._groups[uid] = frozenset(os.getgrouplist(user.pw_name, user.pw_gid))
            except (KeyError, OSError):
                self._groups[uid] = None  # unknown: judged by the group and the other bits
        return self._groups[uid]

    def _may_read(self, who: Writer, st: os.stat_result, need: int) -> bool:
        """Whether ``who`` (every member of it) may read (and, ``need`` 5, list) what ``st``
        states by its mode bits; its own file, it may (it can chmod it)."""
        kind, ident = who
        group = (st.st_mode >> 3) & need == need
        other = st.st_mode & need == need
        if kind == "u":
            if st.st_uid == ident:
                return True
            groups = self._groups_of(ident)
            if groups is None:
                return group and other
            return group if st.st_gid in groups else other
        if kind == "g" and st.st_gid == ident:
            return group
        return group and other

    @staticmethod
    def _writer(writers: dict[Writer, Path]) -> tuple[str, str]:
        """The first of ``writers`` to name in an error: who, and the folder it may write."""
        (kind, ident), where = next(iter(writers.items()))
        who = {"u": f"uid {ident}", "g": f"group {ident}", "o": "every user"}[kind]
        return who, ("the folder itself" if where == Path(".") else repr(str(where)))

    def _judge(self, here: Path, st: os.stat_result, writers: dict[Writer, Path],
               fd: int | None = None) -> None:
        """Refuse a folder or file that someone who may write a folder on its way (and so may
        have put it there: a hard link to another user's private file, in an upload folder
        the entrant's login may write) could not read (or list) itself, or that carries an
        access control list (which the mode bits do not tell); root's and the referee's own
        folders vouch for everything in them."""
        if not writers:
            return
        is_dir = stat.S_ISDIR(st.st_mode)
        what = "a folder" if is_dir else "a file"
        for who_is, where in writers.items():
            if not self._may_read(who_is, st, 5 if is_dir else 4):
                who, place = self._writer({who_is: where})
                raise SandboxError(
                    f"the entrant's folder {str(self.folder)!r} holds {str(here)!r}, {what} "
                    f"of uid {st.st_uid} (mode {stat.filemode(st.st_mode)}) that {who} may not "
                    f"{'list' if is_dir else 'read'}, yet {who} may write {place}: a "
                    f"snapshot would show it to the bot; remove it, or make it readable")
        if fd is not None and ("u", st.st_uid) not in writers:
            try:
                names = os.listxattr(fd)
            except OSError:  # a file system without extended attributes
                names = []
            if "system.posix_acl_access" in names:
                who, place = self._writer(writers)
                raise SandboxError(
                    f"the entrant's folder {str(self.folder)!r} holds {str(here)!r}, a file "
                    f"of uid {st.st_uid} with an access control list, and {who} may write "
                    f"{place}: who may read it is not in its mode; remove the list "
                    f"(setfacl -b) or the file")
            if st.st_nlink > 1:
                key = (st.st_dev, st.st_ino)
                if key in self.links:
                    self.links[key][0] += 1
                else:
                    self.links[key] = [1, here, st, writers]

    # -- the walk -----------------------------------------------------------------------------

    def _room(self, here: Path) -> None:
        if self.room + 1 + len(os.fsencode(here)) >= PATH_MAX:
            raise OSError(errno.ENAMETOOLONG, os.strerror(errno.ENAMETOOLONG),
                          str(self.folder / here))  # as a per-match copy would fail

    def _folder(self, fd: int, rel: Path, writers: dict[Writer, Path]) -> None:
        if len(rel.parts) > MAX_DEPTH:
            raise SandboxError(f"the entrant's folder {str(self.folder)!r} holds folders more "
                               f"than {MAX_DEPTH} deep: flatten what the bot needs")
        with os.scandir(fd) as it:
            entries = sorted(it, key=lambda e: e.name)
        for entry in entries:
            here = rel / entry.name
            st = entry.stat(follow_symlinks=False)
            if (st.st_dev, st.st_ino) in self.exclude or (st.st_dev, st.st_ino) in self.excluded:
                self.skipped.append(str(here))
                continue  # another entrant's folder, the output: they change, it does not
            if st.st_dev != self.dev:  # a file system mounted inside the folder
                raise SandboxError(f"the entrant's folder {str(self.folder)!r} holds another "
                                   f"file system at {str(here)!r} (a mount point): its files "
                                   f"are that file system's to serve as it likes; copy what "
                                   f"the bot needs instead")
            self._room(here)
            if stat.S_ISLNK(st.st_mode):
                link = os.readlink(entry.name, dir_fd=fd)
                (self.dest / here).symlink_to(link)
                self._note(f"l {here}\0{link}\0")
            elif stat.S_ISDIR(st.st_mode):
                sub = os.open(entry.name, _DIR_FLAGS, dir_fd=fd)
                try:
                    opened = os.fstat(sub)
                    self._judge(here, opened, writers)
                    (self.dest / here).mkdir()
                    (self.dest / here).chmod(0o755)  # whatever the umask (a tournament's)
                    self._note(f"d {here}\0")
                    self._folder(sub, here, self._writers(opened, here, writers))
                finally:
                    os.close(sub)
            elif stat.S_ISREG(st.st_mode):
                self._file(fd, entry.name, here, writers)
            else:
                self.skipped.append(str(here))  # fifos, sockets, devices

    def _count(self, st: os.stat_result) -> None:
        """Counts a regular file against the cap."""
        self.size += st.st_size
        self.files += 1
        if self.cap_mb and self.size > self.cap_mb << 20:
            raise SandboxError(f"the entrant's folder {str(self.folder)!r} holds more than "
                               f"{self.cap_mb} MiB: leave out what the bot does not need, "
                               f"or raise snapshot_mb")

    def _file(self, fd: int, name: str, here: Path, writers: dict[Writer, Path]) -> None:
        src = os.open(name, _FILE_FLAGS, dir_fd=fd)
        try:
            st = os.fstat(src)
            if not stat.S_ISREG(st.st_mode):  # swapped since the scan
                self.skipped.append(str(here))
                return
            self._judge(here, st, writers, src)
            self._count(st)
            mode = 0o755 if st.st_mode & 0o111 else 0o644
            self._note(f"f {here} {mode:o}\0")
            out = os.open(self.dest / here, _NEW_FLAGS, mode)
            try:
                os.fchmod(out, mode)  # whatever the umask
                # copy first (no more than the size counted: a file its owner appends to
                # during the copy would pass the cap), then hash the copy, which only the
                # referee can write: a write to the folder's file after this, through a
                # shared writable mapping, say, changes neither what plays nor its digest
                if st.st_size:
                    copy_data(src, out, st.st_size, st.st_blocks)
                    self.digest.update(_hash(out))
                    self.stored += min(st.st_size, os.fstat(out).st_blocks * 512)
                else:  # created empty here (O_EXCL), and nothing copied into it
                    self.digest.update(_EMPTY)
            finally:
                os.close(out)
        finally:
            os.close(src)

    def _note(self, text: str) -> None:
        """Counts an entry against the cap, and adds ``text`` to the digest."""
        self.entries += 1
        if self.cap_mb and self.entries > self.cap_mb * ENTRIES_PER_MB:
            raise SandboxError(f"the entrant's folder {str(self.folder)!r} holds more than "
                               f"{self.cap_mb * ENTRIES_PER_MB} files, folders and links (each is "
                               f"kept in memory while the tournament runs): leave out "
                               f"what the bot does not need, or raise snapshot_mb (each MiB "
                               f"allows {ENTRIES_PER_MB})")
        self.digest.update(text.encode("utf-8", "surrogateescape"))


def take_snapshot(folder: Path, store: Store, name: str, *, exclude: Sequence[Path] = (),
                  cap_mb: int = DEFAULT_CAP_MB,
                  excluded: Collection[tuple[int, int]] = (),
                  opened: int | None = None) -> Snapshot:
    """Copy ``folder`` (resolved) into ``store``, then hash the copy (the folder is read once,
    and never again): regular files (readable by all, executable where any execute bit was
    set; sparse ones kept sparse), folders, symlinks as they are (never followed); left out:
    ``exclude`` (the output folder, the configuration, other entrants), special files.
    ``excluded``: more to leave out, as the ``(st_dev, st_ino)`` of each (stated once for many
    snapshots). ``opened``: a descriptor of the folder, opened already (a league's submission,
    by handle): it is read through it, and ``folder`` (not resolved) only names it.

    :raises SandboxError: for a folder past ``cap_mb`` MiB (or its entries; 0: no cap), too
        deep, one the referee cannot read (or that changes under it), a path too long for a
        per-match copy, or a file or folder that someone who may write the folders on its way
        could not read itself (or a hard link to a file from outside it): naming it and the
        fix, in one line.
    """
    start = time.perf_counter()
    folder = _real(folder) if opened is None else Path(os.path.abspath(folder))
    dest = store.path / f"{name}-{uuid.uuid4().hex[:8]}"
    dest.mkdir()
    dest.chmod(0o755)  # whatever the umask (a tournament's is 077)
    try:
        copy = _walk(_Copy(folder, dest, exclude, cap_mb, excluded, store.room(name), opened))
    except SandboxError:
        shutil.rmtree(dest, ignore_errors=True)
        raise
    return Snapshot(folder, dest, "sha256:" + copy.digest.hexdigest(), copy.size, copy.files,
                    time.perf_counter() - start, tuple(copy.skipped), copy.entries, copy.stored)


def _walk(copy: _Copy) -> _Copy:
    """Runs ``copy``, an :class:`OSError` turned into a :class:`SandboxError` naming the fix."""
    try:
        copy.run()
    except OSError as err:
        raise SandboxError(f"cannot copy the entrant's folder "
                           f"{str(copy.folder)!r}: {err.strerror or err}"
                           f"{f' ({str(err.filename)!r})' if err.filename else ''}: make it "
                           f"readable by the referee, and leave it alone while the tournament "
                           f"starts") from None
    return copy


def remove_copy(path: Path) -> None:
    """Remove a snapshot's copy (quietly)."""
    shutil.rmtree(path, ignore_errors=True)


@dataclass(frozen=True)
class Sealed:
    """A sealed entrant as every match plays it: its snapshot and what its sandbox shows,
    resolved once before play (plain data)."""

    snapshot: Snapshot
    binds: Binds

    def sources(self, copy: Path) -> dict[Path, Path]:
        """The bind sources of a match whose copy of the folder is ``copy``."""
        return {self.snapshot.folder: copy}
