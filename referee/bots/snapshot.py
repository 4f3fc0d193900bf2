"""Sealed entrants: an entrant is one folder, played from a private snapshot of it.

Before a tournament plays, :func:`entrant_folder` works out the one folder an entrant's command
lives in and refuses a command that names any path outside it (another entrant, ``/``,
``/proc``, ``/tmp``, a home, a symlink leading out), unless the path is in a system folder, in
the organiser's ``shared`` list, or is the runtime that runs the bot. :func:`take_snapshot` then
copies the folder once into a private store (a folder only the referee can open): every match
runs from that copy, so a symlink swapped or a file changed during play changes nothing, and
every match runs the same code (:attr:`Snapshot.digest` names it). :func:`match_copy` gives
each bot of each match a copy of its own (new inodes): the page cache of one match's files is
not the page cache of the next match's, so a bot cannot leave itself marks there.

>>> folder = entrant_folder(["python3", "bot.py"], Path("bots/mine"))  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import errno
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

from referee.bots.expiring import expiring
from referee.bots.sandbox import SYSTEM_DIRS, Binds, SandboxError, bot_binds, within

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
"""Files, folders and links a folder may hold per MiB of its cap: every match copies each one
again: 100,000 empty files took 28 s to snapshot and 26 s per match copy on this 2-core
machine at load 10 (``take_snapshot`` and ``match_copy`` timed by the red team), where 100 MB
in a few files takes 83 ms."""
HOT_S = 1.0
"""A folder holding an entry changed this recently (or dated in the future) when its
:func:`fingerprint` is taken is snapshotted at once: a file's times tick coarsely (a few ms),
so an edit in the same tick as the fingerprint could leave every stat as it was."""


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
    """The system folders (:data:`~referee.bots.sandbox.SYSTEM_DIRS`) there are, resolved."""
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
    """An entrant folder as copied into the store (plain data: it travels with the entrant)."""

    folder: Path
    """The folder as the bot sees it (its resolved path on the host)."""
    copy: Path
    """The copy in the store, which every match copies again."""
    digest: str
    """``sha256:`` of every path, kind, executable bit and content, in path order."""
    size: int
    """Bytes of regular files."""
    files: int
    seconds: float
    """How long the copy took."""
    skipped: tuple[str, ...] = field(default=())
    """What was left out (relative paths): protected paths, other entrants, special files."""


@dataclass(frozen=True)
class Fingerprint:
    """An entrant folder as stated (never read) when a tournament starts: what its snapshot,
    taken later, must find unchanged (plain data)."""

    folder: Path
    digest: str
    """``stat:`` sha256 of every path, kind, inode, size, owner, mode, mtime and ctime, in path
    order (an edit, a rename, a ``touch -d`` all change the ctime, which no user can set)."""
    size: int
    """Bytes of regular files."""
    files: int
    hot: bool
    """An entry changed within :data:`HOT_S` of the fingerprint: snapshot it at once."""


class FolderChanged(SandboxError):
    """An entrant folder that no longer matches the :class:`Fingerprint` taken when the
    tournament started (its snapshot is refused)."""


class Store:
    """A private folder (``0700``, the referee's) holding a tournament's snapshots and its
    per-match copies; :meth:`close` removes it."""

    def __init__(self, parent: Path | None = None) -> None:
        self.path = Path(tempfile.mkdtemp(prefix="ct-referee-entrants-", dir=parent))
        self.path.chmod(0o700)

    def room(self, name: str) -> int:
        """Bytes of the longest folder path a copy of entrant ``name``'s folder starts at (its
        snapshot, or a per-match copy): what a path inside the folder adds must stay below
        ``PATH_MAX``."""
        return max(len(os.fsencode(self.path / f"{name}-{'0' * 8}")),
                   len(os.fsencode(self.path / "m" / ("0" * 32))))

    def close(self) -> None:
        """Remove the store and everything in it."""
        shutil.rmtree(self.path, ignore_errors=True)

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def _readable(st: os.stat_result, owner: os.stat_result) -> bool:
    """Whether the folder's owner could read this file by its mode bits: the referee (root,
    say) copies nothing its entrant could not read itself (a hard link to another user's
    private file)."""
    if owner.st_uid == 0 or st.st_uid == owner.st_uid:
        return owner.st_uid == 0 or bool(st.st_mode & stat.S_IRUSR)
    if st.st_gid == owner.st_gid:
        return bool(st.st_mode & stat.S_IRGRP)
    return bool(st.st_mode & stat.S_IROTH)


class _Copy:
    """One snapshot being made (or, ``dest`` ``None``, a :class:`Fingerprint` taken): the walk,
    file by file, through folder descriptors opened without following symlinks (a folder
    swapped for a symlink during the copy is refused, not followed), with the digest, the
    fingerprint of the stats it walked (the same walk either way) and the counts."""

    def __init__(self, folder: Path, dest: Path | None, exclude: Sequence[Path], cap_mb: int,
                 excluded: Collection[tuple[int, int]] = (), room: int = 0) -> None:
        self.folder, self.dest, self.cap_mb, self.room = folder, dest, cap_mb, room
        self.exclude = set()
        self.excluded = excluded  # shared by every snapshot of a tournament: not copied
        for path in exclude:
            with contextlib.suppress(OSError):
                st = os.stat(path)
                self.exclude.add((st.st_dev, st.st_ino))
        self.digest = hashlib.sha256()
        self.stats = hashlib.sha256()
        self.newest = 0  # ns: the latest mtime or ctime walked
        self.moved = False  # a file changed while it was copied
        self.size = self.files = self.entries = 0
        self.skipped: list[str] = []
        self.owner = os.stat(folder)

    def run(self) -> None:
        fd = os.open(self.folder, _DIR_FLAGS)
        try:
            self._stat(Path(), os.fstat(fd))
            self._folder(fd, Path())
        finally:
            os.close(fd)

    def _stat(self, here: Path, st: os.stat_result) -> None:
        if self.dest is None and self.room + 1 + len(os.fsencode(here)) >= PATH_MAX:
            raise OSError(errno.ENAMETOOLONG, os.strerror(errno.ENAMETOOLONG),
                          str(self.folder / here))  # as the copy would fail
        self.newest = max(self.newest, st.st_mtime_ns, st.st_ctime_ns)
        self.stats.update(f"{here}\0{st.st_mode:o} {st.st_dev} {st.st_ino} {st.st_size} "
                          f"{st.st_uid} {st.st_gid} {st.st_mtime_ns} {st.st_ctime_ns}\0"
                          .encode("utf-8", "surrogateescape"))

    def _folder(self, fd: int, rel: Path) -> None:
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
                self.stats.update(f"{here}\0x\0".encode("utf-8", "surrogateescape"))
                continue  # another entrant's folder, the output: they change, it does not
            if st.st_dev != self.owner.st_dev:  # a file system mounted inside the folder
                raise SandboxError(f"the entrant's folder {str(self.folder)!r} holds another "
                                   f"file system at {str(here)!r} (a mount point): its files' "
                                   f"dates and sizes are that file system's to choose, so a "
                                   f"change could not be seen; copy what the bot needs instead")
            self._stat(here, st)
            if stat.S_ISLNK(st.st_mode):
                if self.dest is None:  # a symlink is never changed in place: its stat says it
                    self._note("")
                    continue
                link = os.readlink(entry.name, dir_fd=fd)
                (self.dest / here).symlink_to(link)
                self._note(f"l {here}\0{link}\0")
            elif stat.S_ISDIR(st.st_mode):
                sub = os.open(entry.name, _DIR_FLAGS, dir_fd=fd)
                try:
                    if self.dest is not None:
                        (self.dest / here).mkdir()
                        (self.dest / here).chmod(0o755)  # whatever the umask (a tournament's)
                    self._note(f"d {here}\0")
                    self._folder(sub, here)
                finally:
                    os.close(sub)
            elif stat.S_ISREG(st.st_mode):
                if self.dest is None:
                    if self._count(here, st):
                        if not os.access(entry.name, os.R_OK, dir_fd=fd):
                            # the entrant may read it, the referee may not: the copy would
                            # fail at its first match, with nothing changed to blame
                            raise OSError(errno.EACCES, os.strerror(errno.EACCES),
                                          str(self.folder / here))
                        self._note("")  # counted as the copy counts it
                else:
                    self._file(fd, entry.name, here, st)
            else:
                self.skipped.append(str(here))  # fifos, sockets, devices

    def _count(self, here: Path, st: os.stat_result) -> bool:
        """Counts a regular file against the cap; whether it is copied."""
        if not stat.S_ISREG(st.st_mode) or not _readable(st, self.owner):
            self.skipped.append(str(here))
            return False
        self.size += st.st_size
        self.files += 1
        if self.cap_mb and self.size > self.cap_mb << 20:
            raise SandboxError(f"the entrant's folder {str(self.folder)!r} holds more than "
                               f"{self.cap_mb} MiB: leave out what the bot does not need, "
                               f"or raise snapshot_mb")
        return True

    def _file(self, fd: int, name: str, here: Path, walked: os.stat_result) -> None:
        assert self.dest is not None
        src = os.open(name, _FILE_FLAGS, dir_fd=fd)
        try:
            st = os.fstat(src)
            if not self._count(here, st):
                return
            mode = 0o755 if st.st_mode & 0o111 else 0o644
            self._note(f"f {here} {mode:o}\0")
            h = hashlib.sha256()
            out = os.open(self.dest / here, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC,
                          mode)
            try:
                # no more than the size counted: a file its owner appends to during the
                # copy would otherwise pass the cap (and fill the store's disk)
                left = st.st_size
                while left > 0 and (chunk := os.read(src, min(left, 1 << 20))):
                    left -= len(chunk)
                    h.update(chunk)
                    view = memoryview(chunk)
                    while view:
                        view = view[os.write(out, view):]
                os.fchmod(out, mode)  # whatever the umask
            finally:
                os.close(out)
            self.digest.update(h.digest())
            after = os.fstat(src)
            self.moved |= any(getattr(s, k) != getattr(walked, k) for s in (st, after)
                              for k in ("st_ino", "st_dev", "st_size", "st_mtime_ns",
                                        "st_ctime_ns"))
        finally:
            os.close(src)

    def _note(self, text: str) -> None:
        """Counts an entry against the cap, and adds ``text`` to the digest."""
        self.entries += 1
        if self.cap_mb and self.entries > self.cap_mb * ENTRIES_PER_MB:
            raise SandboxError(f"the entrant's folder {str(self.folder)!r} holds more than "
                               f"{self.cap_mb * ENTRIES_PER_MB} files, folders and links: "
                               f"leave out what the bot does not need, or raise snapshot_mb "
                               f"(each MiB allows {ENTRIES_PER_MB})")
        self.digest.update(text.encode("utf-8", "surrogateescape"))


def take_snapshot(folder: Path, store: Store, name: str, *, exclude: Sequence[Path] = (),
                  cap_mb: int = DEFAULT_CAP_MB,
                  excluded: Collection[tuple[int, int]] = (),
                  expect: Fingerprint | None = None) -> Snapshot:
    """Copy ``folder`` (resolved) into ``store``: regular files (readable by all, executable
    where any execute bit was set), folders, symlinks as they are (never followed); left out:
    ``exclude`` (the output folder, the configuration, other entrants), special files, and
    files the folder's owner could not read itself. ``excluded``: more to leave out, as the
    ``(st_dev, st_ino)`` of each (stated once for many snapshots).

    ``expect``: the folder's :func:`fingerprint` when the tournament started; a folder that
    no longer matches it (or a file that changes while it is copied) is refused.

    :raises SandboxError: for a folder past ``cap_mb`` MiB (0: no cap) or one the referee
        cannot read (or that changes under it), naming it and the fix.
    :raises FolderChanged: for a folder unlike ``expect``.
    """
    start = time.perf_counter()
    folder = _real(folder)
    dest = store.path / f"{name}-{uuid.uuid4().hex[:8]}"
    dest.mkdir()
    dest.chmod(0o755)  # whatever the umask (a tournament's is 077)
    try:
        copy = _walk(_Copy(folder, dest, exclude, cap_mb, excluded))
        if expect is not None and ("stat:" + copy.stats.hexdigest() != expect.digest
                                   or copy.moved):
            raise FolderChanged(f"its folder {str(folder)!r} changed after the tournament "
                                f"started (a file written, added, removed or renamed since "
                                f"then): every match of an entrant plays the code it had at "
                                f"the start")
    except SandboxError:
        shutil.rmtree(dest, ignore_errors=True)
        raise
    return Snapshot(folder, dest, "sha256:" + copy.digest.hexdigest(), copy.size, copy.files,
                    time.perf_counter() - start, tuple(copy.skipped))


def fingerprint(folder: Path, *, exclude: Sequence[Path] = (), cap_mb: int = DEFAULT_CAP_MB,
                excluded: Collection[tuple[int, int]] = (), room: int = 0) -> Fingerprint:
    """The :class:`Fingerprint` of ``folder`` (resolved): the walk :func:`take_snapshot`
    makes, stating what it would copy (``exclude``, ``excluded``, ``cap_mb`` as there) but
    reading and writing nothing. ``room``: the bytes of the path its copies start at
    (:meth:`Store.room`): a path inside it that would not fit in ``PATH_MAX`` is refused.

    :raises SandboxError: as :func:`take_snapshot` (the cap, the depth, an unreadable folder,
        a path too long to copy).
    """
    folder = _real(folder)
    copy = _walk(_Copy(folder, None, exclude, cap_mb, excluded, room))
    hot = copy.newest >= time.time_ns() - int(HOT_S * 1e9)
    return Fingerprint(folder, "stat:" + copy.stats.hexdigest(), copy.size, copy.files, hot)


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


def match_copy(snapshot: Snapshot) -> Path:
    """A fresh copy of ``snapshot`` for one bot of one match (new inodes), next to it in the
    store; the caller removes it (:func:`remove_copy`) once the bot has stopped.

    :raises OSError: if it cannot be made (a full disk).
    """
    dest = snapshot.copy.parent / "m" / uuid.uuid4().hex
    dest.parent.mkdir(mode=0o700, exist_ok=True)
    try:
        shutil.copytree(snapshot.copy, dest, symlinks=True)
    except (OSError, shutil.Error):
        shutil.rmtree(dest, ignore_errors=True)
        raise OSError(f"cannot copy the snapshot {str(snapshot.copy)!r} for a match") from None
    return dest


def remove_copy(path: Path) -> None:
    """Remove a per-match copy (quietly)."""
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
