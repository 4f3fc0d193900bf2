"""The submissions folder, watched, and each settled folder admitted, off the league's own
thread (:class:`Admissions`: a watcher thread, and :data:`ADMIT_JOBS` workers admitting):
whatever a folder holds, the league's thread never reads it, so a hostile folder can hold up
only one worker, by at most its caps and its bot's time limits.

A folder is one entrant (its name the author's). Its **fingerprint** (:func:`fingerprint`) is
a walk that follows no symlink and stops at the caps (entries and bytes, as a snapshot's: a
huge folder is refused after ``snapshot_mb * 8`` entries, never read further). A folder whose
fingerprint stayed the same for ``settle_s`` is **admitted** (:func:`admit`) as a tournament's
entrant is: its command checked against its folder, the folder snapshotted into the private
store (and the copy hashed: that digest is the version), the fingerprint taken again (a folder
that changed while being copied waits to settle again), the pre-flight, and, unless the league
says ``check: false``, ``ct-referee check``'s conformance, each bot run from the snapshot. A
refusal is one line. A new digest is a new version, which retires the author's older one.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import queue
import re
import stat
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

from referee.bots.bot import BotError
from referee.bots.limits import SandboxMode
from referee.bots.process import BotCommandError, Launcher, resolve_command
from referee.bots.sandbox import SandboxError
from referee.bots.snapshot import (
    ENTRIES_PER_MB,
    MAX_DEPTH,
    Sealed,
    Snapshot,
    Store,
    entrant_folder,
    remove_copy,
    sealed_binds,
    take_snapshot,
)
from referee.league.config import LeagueConfig, load_league
from referee.match.check import run_check
from referee.match.play import Entrant
from referee.protocol.escape import escape_controls
from referee.tournament.admission import preflight
from referee.tournament.config import NAME_RE, ConfigError, EntrantConfig

__all__ = ["Admissions", "Admitted", "Known", "Note", "Refused", "Source", "Withdrawn", "admit",
           "fingerprint"]

COMMAND_FILE = "command.txt"
"""A submission's own command (one line), in place of the league's."""
COMMAND_BYTES = 1024
VERSIONED = re.compile(r".*\.v[0-9]+")
"""A folder name the league's version names could take (``alice.v2``): refused."""
ADMIT_JOBS = 2
"""Admissions under way at once (a slow or hostile one holds up at most one of them)."""
MAX_FOLDERS = 10_000
"""Submission folders looked at: past it the ones already in keep their place and the newest
are refused (saying so once)."""
LIST_MAX = 4 * MAX_FOLDERS
"""Names read from the submissions folder in one listing (a folder of more is cut there)."""
MAX_NAME = 64
"""The longest folder name (an author's name on the page and in its files' names)."""
PATH_MAX = os.pathconf("/", "PC_PATH_MAX")
RACY_NS = 2_000_000_000
"""A folder or file changed this recently (by its timestamps) is walked again at the next poll
rather than trusted by its ``stat``: a change within the file system's timestamp granularity
leaves them as they were."""


@dataclass(frozen=True)
class Source:
    """Where an entrant's versions come from: a submission folder, or a house entrant."""

    author: str
    folder: Path
    command: str | tuple[str, ...] | None = None
    """``None``: the submission's ``command.txt``, else the league's ``command``."""
    workdir: Path | None = None
    """Where the command runs (default: ``folder``)."""
    house: bool = False
    """A house entrant (from the YAML): its folder is the one its command names (as a
    tournament's); a submission's is its own folder, and nothing else."""


@dataclass(frozen=True)
class Admitted:
    """A version admitted: ``entrant`` plays from its snapshot."""

    author: str
    name: str
    version: int
    digest: str
    entrant: Entrant
    argv: tuple[str, ...]
    seen: float
    """When its folder was first seen as it is (``time.time()``)."""
    new: bool = True
    """``False``: the version already in the journal, admitted again (a restart)."""


@dataclass(frozen=True)
class Refused:
    """A folder not admitted, and why, in one line."""

    author: str
    reason: str


@dataclass(frozen=True)
class Withdrawn:
    """A folder that is gone: its author's version plays no more."""

    author: str


@dataclass(frozen=True)
class Note:
    """Something the organiser should know (the configuration not read again, say)."""

    text: str


Event = Admitted | Refused | Withdrawn | Note


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
    """The folder changed while it was walked (an entry gone, a folder become a file)."""


def fingerprint(folder: Path, *, cap_mb: int,
                stats: list[tuple[str, tuple[int, ...]]] | None = None) -> str:
    """A digest of what ``folder`` holds as ``stat`` sees it (paths, kinds, sizes, modes,
    modification times, link targets), walked without following a symlink.

    :raises ValueError: past the caps (``cap_mb`` MiB of files, ``cap_mb * 8`` entries,
        :data:`MAX_DEPTH` folders deep), or for a folder that is a symlink or not a folder:
        one line saying which.
    :raises Changed: where an entry went or changed kind while it was walked.
    :raises OSError: where it cannot be read.

    ``stats``: filled with every entry's path and :func:`stat_key` (the folder's first), what
    :func:`unchanged` compares at the next look.
    """
    try:
        return _walk(folder, cap_mb, stats)
    except (FileNotFoundError, NotADirectoryError) as err:
        raise Changed(str(err)) from None
    except OSError as err:
        if err.errno == errno.ENAMETOOLONG:
            raise ValueError("a path in it is longer than the system allows") from None
        raise


def stat_key(st: os.stat_result) -> tuple[int, ...]:
    """What tells a change of an entry by its ``stat``: its kind and mode, inode, size, and
    modification and change times."""
    return st.st_mode, st.st_ino, st.st_dev, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def unchanged(stats: list[tuple[str, tuple[int, ...]]]) -> bool:
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


def recent(stats: list[tuple[str, tuple[int, ...]]]) -> bool:
    """Whether an entry changed within :data:`RACY_NS` of now (its ``stat`` not to be trusted
    yet)."""
    now = time.time_ns()
    return any(now - max(key[4], key[5]) < RACY_NS for _, key in stats)


def _walk(folder: Path, cap_mb: int, stats: list[tuple[str, tuple[int, ...]]] | None) -> str:
    most_entries, most_bytes = cap_mb * ENTRIES_PER_MB, cap_mb << 20
    digest = hashlib.sha256()
    entries = size = 0
    st = os.lstat(folder)
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
        raise ValueError("it is a symlink or a file, not a folder")
    if stats is not None:
        stats.append((str(folder), stat_key(st)))
    stack: list[tuple[Path, int]] = [(folder, 0)]
    while stack:
        here, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise ValueError(f"it is more than {MAX_DEPTH} folders deep")
        with os.scandir(here) as it:
            names = []
            for entry in it:
                entries += 1
                if entries > most_entries:
                    raise ValueError(f"it holds more than {most_entries} files, folders and "
                                     f"links (snapshot_mb {cap_mb} allows {ENTRIES_PER_MB} a "
                                     f"MiB)")
                names.append(entry)
        for entry in sorted(names, key=lambda e: e.name):
            est = entry.stat(follow_symlinks=False)
            if stats is not None:
                stats.append((entry.path, stat_key(est)))
            rel = os.path.relpath(entry.path, folder)
            extra = ""
            if stat.S_ISLNK(est.st_mode):
                with contextlib.suppress(OSError):
                    extra = os.readlink(entry.path)
            elif stat.S_ISDIR(est.st_mode):
                stack.append((Path(entry.path), depth + 1))
            elif stat.S_ISREG(est.st_mode):
                size += est.st_size
                if size > most_bytes:
                    raise ValueError(f"it holds more than {cap_mb} MiB (snapshot_mb)")
            digest.update(f"{rel}\0{est.st_mode}\0{est.st_size}\0{est.st_mtime_ns}\0"
                          f"{extra}\n".encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def _command(source: Source, default: str) -> str | tuple[str, ...]:
    """The command of a submission: its ``command.txt`` (one line, read through no symlink),
    else the league's."""
    if source.command is not None:
        return source.command
    try:
        fd = os.open(source.folder / COMMAND_FILE, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return default
    except OSError as err:
        raise ValueError(f"{COMMAND_FILE}: cannot read: {err.strerror}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError(f"{COMMAND_FILE} is not a file")
        data = os.read(fd, COMMAND_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) > COMMAND_BYTES:
        raise ValueError(f"{COMMAND_FILE} is longer than {COMMAND_BYTES} bytes")
    lines = [x for x in data.decode("utf-8", "replace").splitlines() if x.strip()]
    if len(lines) != 1:
        raise ValueError(f"{COMMAND_FILE} must hold one line (the bot's command)")
    return lines[0].strip()


def admit(source: Source, name: str, *, config: LeagueConfig, store: Store, mode: SandboxMode,
          logs: Path, stop: threading.Event, before: str) -> tuple[Entrant, Snapshot,
                                                                   tuple[str, ...]]:
    """Admits one settled folder as entrant ``name`` (see the module): its entrant, snapshot
    and command. ``before``: the folder's fingerprint when it settled.

    :raises ValueError: a refusal, in one line (the snapshot, if one was made, removed).
    :raises InterruptedError: the folder changed while it was copied (try again later).
    """
    workdir = source.workdir or source.folder
    try:
        command = _command(source, config.command)
        argv = tuple(resolve_command(command, workdir))
        folder = entrant_folder(argv, workdir, shared=config.shared, given=not source.house)
    except (BotCommandError, SandboxError) as err:
        raise ValueError(str(err)) from None
    own = Path(os.path.realpath(source.folder))
    if not source.house and folder != own:
        raise ValueError(f"its command runs {str(folder)!r}, outside its own folder (a "
                         f"symlink out?): a submission may run only its own files")
    try:
        snap = take_snapshot(folder, store, name, cap_mb=config.snapshot_mb,
                             exclude=(config.output, config.path))
    except SandboxError as err:
        if _changed(source.folder, before, config):  # a copy cut short by a change: later
            raise InterruptedError(name) from None
        raise ValueError(str(err)) from None
    try:
        if _changed(source.folder, before, config):  # changed while copied (or swapped for
            raise InterruptedError(name)  # a link to another's folder): later
        if mode is SandboxMode.NONE:  # no sandbox: the bot runs in its snapshot's copy
            rel = os.path.relpath(workdir, folder)
            entrant = Entrant(name, argv, workdir=Path(os.path.normpath(snap.copy / rel)))
        else:
            try:
                binds = sealed_binds(argv, workdir, folder, config.shared)
            except SandboxError as err:
                raise ValueError(str(err)) from None
            entrant = Entrant(name, argv, workdir=workdir, hidden=(config.output,),
                              sealed=Sealed(snap, binds))
        _fly(entrant, config=config, mode=mode, logs=logs, stop=stop)
        if config.check:
            _conform(entrant, config=config, mode=mode)
    except BaseException:
        remove_copy(snap.copy)
        raise
    return entrant, snap, argv


def _changed(folder: Path, before: str, config: LeagueConfig) -> bool:
    """Whether ``folder`` is no longer as its fingerprint ``before`` saw it (or is a link)."""
    try:
        after = fingerprint(folder, cap_mb=config.snapshot_mb)
    except (OSError, ValueError, Changed):
        return True
    return after != before or os.path.islink(folder)


def _fly(entrant: Entrant, *, config: LeagueConfig, mode: SandboxMode, logs: Path,
         stop: threading.Event) -> None:
    """The pre-flight: the bot started once from its snapshot."""
    try:
        launcher = Launcher.resolve(mode, config.limits)
        [flight] = preflight([entrant], limits=config.limits, launcher=launcher,
                             logs_dir=logs, hidden=(config.output,), stop=stop)
    except (BotCommandError, BotError, SandboxError) as err:
        raise ValueError(f"did not start: {err}") from None
    if not flight.ok:
        raise ValueError(f"did not start in the pre-flight: {flight.fault}: "
                         f"{escape_controls(flight.detail)}")


def _conform(entrant: Entrant, *, config: LeagueConfig, mode: SandboxMode) -> None:
    """``ct-referee check``'s scripted situations, the bot run as in its matches (sandboxed:
    each process from a fresh copy of its snapshot; else in the snapshot's copy);
    a failure is checked once more (the matches being played beside it may have cost a bot on
    a loaded machine the time a step allows), and refused if it fails again."""
    limits = config.limits
    for _attempt in (1, 2):
        try:
            report = run_check(entrant.command, move_ms=limits.move_ms,
                               startup_ms=limits.startup_ms, sandbox=mode,
                               workdir=entrant.workdir, limits=limits, sealed=entrant.sealed)
        except (BotCommandError, BotError, SandboxError, OSError) as err:
            raise ValueError(f"the conformance check could not run it: {err}") from None
        if report.ok:
            return
    failed = next((s for s in report.steps if not s.ok), None)
    what = "no step ran" if failed is None else \
        f"{failed.title}: expected {failed.expected or failed.status}, got {failed.received}"
    raise ValueError(f"failed the conformance check (ct-referee check) twice: "
                     f"{escape_controls(what)}"[:300])


@dataclass
class _Folder:
    """What the watcher knows of one source."""

    source: Source
    seen: str | None = None
    since: float = 0.0
    """When :attr:`seen` was first seen (monotonic) ..."""
    wall: float = 0.0
    """... and by the wall clock."""
    done: str | None = None
    """The fingerprint last admitted or refused (nothing to do while it stays)."""
    busy: bool = False
    """An admission of it is under way (on a worker: nothing else touches it meanwhile)."""
    stats: list[tuple[str, tuple[int, ...]]] | None = None
    """Every entry's ``stat`` at the last walk that gave :attr:`seen` (``None``: walk again):
    while they stay, so does the fingerprint, and the folder is not walked."""
    waiting: bool = False
    """A new version waits for ``version_s`` (said once)."""
    bad: str | None = None
    """Why its name cannot be an author's (:func:`name_problem`), looked at once."""
    first: bool = True
    """Whether this is the run's first look at the author's folder (a folder withdrawn and
    back is not: its new version waits for ``version_s`` like any other)."""


@dataclass
class Known:
    """An author's current version, as the journal says."""

    name: str
    version: int
    digest: str
    at: float = 0.0
    """When it was admitted (``time.time()``; 0: unknown)."""


class Admissions:
    """The watcher and the admissions, on a thread of their own: :meth:`events` hands the
    league what happened since, never blocking.

    ``known``: each author's current version (from the journal: a folder whose snapshot has
    the same digest is that version again); ``versions``: each author's highest version so
    far."""

    def __init__(self, config: LeagueConfig, *, store: Store, mode: SandboxMode, logs: Path,
                 known: dict[str, Known], versions: dict[str, int],
                 clock: Callable[[], float] = time.monotonic, remote: bool = False) -> None:
        self.config, self.store, self.mode, self.logs = config, store, mode, logs
        self.remote = remote
        """Matches run on a cluster's workers: an admitted version (its snapshot pre-flown and
        checked here) plays there from its folder as it is (no snapshot travels)."""
        self.known, self.versions = known, versions
        self.clock = clock
        self.stop = threading.Event()
        self._events: queue.Queue[Event] = queue.Queue()
        self._folders: dict[str, _Folder] = {}
        self._thread = threading.Thread(target=self._run, name="league-admissions",
                                        daemon=True)
        self._pool = ThreadPoolExecutor(max_workers=ADMIT_JOBS,
                                        thread_name_prefix="league-admit")
        self._lock = threading.Lock()  # versions and known: the workers' and the watcher's
        self._missing: dict[str, float] = {}  # an author's folder not seen since
        self.error: BaseException | None = None
        self._house = config.entrants
        self._read = self._mtime()
        self._listing: tuple[tuple[int, ...], list[str], bool] | None = None
        """The submissions folder's ``stat``, its names and whether they were cut at
        :data:`LIST_MAX`, from its last listing (read again once its ``stat`` changes)."""
        self._made: dict[str, Source] = {}
        """Each submission folder's source, made once."""
        self._arrival: dict[str, int] = {}
        """The poll each folder not yet looked at was first listed in (past the cap)."""
        self._polls = 0
        self._capped: set[str] = set()
        """Folders refused past :data:`MAX_FOLDERS` (each said once)."""
        wall, mono = time.time(), clock()
        self._accepted: dict[str, float] = {
            a: mono - max(0.0, wall - k.at) for a, k in known.items() if k.at}
        """When each author's newest version was admitted (by ``clock``), kept through a
        withdrawal."""
        self._looked: set[str] = set()
        """The authors whose folder this run has looked at."""

    def start(self) -> None:
        """Starts watching."""
        self._thread.start()

    def close(self) -> None:
        """Stops watching (an admission under way is abandoned at its next step)."""
        self.stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=30)
        self._pool.shutdown(wait=False, cancel_futures=True)

    def events(self) -> list[Event]:
        """What happened since the last call."""
        out = []
        with contextlib.suppress(queue.Empty):
            while True:
                out.append(self._events.get_nowait())
        return out

    def _run(self) -> None:
        try:
            while not self.stop.is_set():
                self.poll()
                self.stop.wait(self.config.poll_s)
        except BaseException as err:  # the league says so; nothing here may end it
            self.error = err

    # -- one look ---------------------------------------------------------------------------

    def sources(self) -> list[Source] | None:
        """The house entrants, then the submission folders (sorted): at most
        :data:`MAX_FOLDERS`, those already looked at or in the journal first, the newest
        refused past it; ``None`` while the submissions folder cannot be read (nobody is
        withdrawn for that)."""
        found = [self._house_source(e) for e in self._entrants()]
        folder = self.config.submissions
        if folder is not None:
            listed = self._names(folder)
            if listed is None:
                return None
            names, cut = listed
            house = {s.author for s in found}
            names = [n for n in names if n not in house]
            made = self._made
            for n in sorted(self._within_cap(folder, names, cut)):
                source = made.get(n)
                if source is None:
                    source = made[n] = Source(n, folder / n)
                found.append(source)
            if len(made) > 2 * MAX_FOLDERS:  # gone ones forgotten
                self._made = {s.author: s for s in found}
        return found

    def _names(self, folder: Path) -> tuple[list[str], bool] | None:
        """The submissions folder's names (those not starting with ``.``) and whether they
        were cut at :data:`LIST_MAX`: listed again only when its ``stat`` changed."""
        try:
            st = os.stat(folder)
        except OSError:
            return None
        key = stat_key(st)
        if self._listing is not None and self._listing[0] == key:
            return self._listing[1], self._listing[2]
        names: list[str] = []
        cut = False
        try:
            with os.scandir(folder) as it:
                for entry in it:
                    if len(names) >= LIST_MAX:
                        cut = True
                        break
                    if not entry.name.startswith("."):
                        names.append(entry.name)
        except OSError:
            return None
        fresh = time.time_ns() - max(key[4], key[5]) < RACY_NS
        self._listing = None if fresh else (key, names, cut)
        return names, cut

    def _within_cap(self, folder: Path, names: list[str], cut: bool) -> list[str]:
        """``names`` within :data:`MAX_FOLDERS`: those the watcher looks at already or the
        journal knows keep their place, newcomers take what room is left (those listed first
        first, then by name), and the rest are refused, each once (and a note says so, once
        each time it starts)."""
        held = {*self._folders, *self.known}
        present = [n for n in names if n in held]
        if cut:  # a listing cut short: those held that it did not reach are looked up
            seen = set(present)
            present += [n for n in held if n not in seen and os.path.isdir(folder / n)]
        self._polls += 1
        arrival = self._arrival = {n: self._arrival.get(n, self._polls)
                                   for n in names if n not in held}
        newcomers = sorted(arrival, key=lambda n: (arrival[n], n))  # the newest last
        room = max(0, MAX_FOLDERS - len(present))
        over = newcomers[room:]
        self._capped &= set(over)  # room freed: looked at as any other, refused once again
        if over and not self._capped:
            self._events.put(Note(
                f"the submissions folder holds more than {MAX_FOLDERS} folders: the "
                f"{len(over)} newest are refused until some leave (those already in keep "
                f"their place)"))
        for name in over:
            if name not in self._capped:
                self._capped.add(name)
                self._events.put(Refused(shown(name), f"the league looks at {MAX_FOLDERS} "
                                                      f"submission folders at most, and that "
                                                      f"many came before it"))
        return present + newcomers[:room]

    def _mtime(self) -> int | None:
        try:
            return os.stat(self.config.path).st_mtime_ns
        except OSError:
            return None

    def _entrants(self) -> tuple[EntrantConfig, ...]:
        """The house entrants, the configuration read again when it changed (its other keys
        take effect at the next start)."""
        mtime = self._mtime()
        if mtime is not None and mtime != self._read:
            self._read = mtime
            try:
                self._house = load_league(self.config.path, output=self.config.output).entrants
            except ConfigError as err:
                self._events.put(Note(f"{self.config.path.name} not read again (its house "
                                      f"entrants stay as they were): {str(err).splitlines()[0]}"))
            else:
                self._events.put(Note(f"{self.config.path.name} read again: "
                                      f"{len(self._house)} house entrants"))
        return self._house

    def _house_source(self, e: EntrantConfig) -> Source:
        """A house entrant's source: the folder its command names (as a tournament's)."""
        try:
            folder = entrant_folder(e.argv, e.workdir, shared=self.config.shared,
                                    given=e.workdir_given)
        except SandboxError:
            folder = e.workdir  # refused when admitted, saying why
        return Source(e.name, folder, e.command, e.workdir, house=True)

    def poll(self) -> None:
        """One look at every source: a folder settled and changed since it was last decided
        is admitted (or refused); one gone is withdrawn."""
        now = self.clock()
        found = self.sources()
        if found is None:
            return
        sources = {s.author: s for s in found}
        for author in [a for a in self._missing if a in sources]:
            del self._missing[author]
        with self._lock:
            for author in [a for a in {*self._folders, *self.known} if a not in sources]:
                if author in self._folders and self._folders[author].busy:
                    continue  # gone once its admission is over
                if now - self._missing.setdefault(author, now) < self.config.settle_s:
                    continue  # gone for good only once it stayed away (a folder swapped)
                del self._missing[author]
                self._folders.pop(author, None)
                if author in self.known:
                    self._events.put(Withdrawn(author))
                    del self.known[author]
        for author, source in sources.items():
            if self.stop.is_set():
                return
            state = self._folders.get(author)
            if state is None:
                state = self._folders[author] = _Folder(source, first=author not in self._looked)
                self._looked.add(author)
                if not source.house:
                    state.bad = name_problem(author, self.config.output)
            if state.busy:
                continue
            if state.bad is not None:
                self._refuse(state, author, state.bad, "name")
                continue
            try:
                seen = self._look(state)
            except Changed:  # changed while it was walked: it has not settled
                state.seen = None
                continue
            except (OSError, ValueError) as err:
                why = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
                self._refuse(state, author, f"{why}", f"bad:{why}")
                continue
            except Exception as err:  # whatever a folder holds, the watcher goes on
                self._refuse(state, author, f"cannot be read: {type(err).__name__}",
                             f"bad:{type(err).__name__}")
                continue
            if seen != state.seen:
                state.seen, state.since, state.wall = seen, now, time.time()
                continue
            if seen == state.done or now - state.since < self.config.settle_s:
                continue
            if self._too_soon(state, now):
                continue
            state.busy, state.waiting = True, False
            self._pool.submit(self._admit_on_worker, state, seen)

    def _look(self, state: _Folder) -> str:
        """The fingerprint of ``state``'s folder: the last one while every entry's ``stat``
        stays as it was (one ``lstat`` an entry), else a walk (:func:`fingerprint`)."""
        if state.stats is not None and state.seen is not None and unchanged(state.stats):
            return state.seen
        state.stats = None
        stats: list[tuple[str, tuple[int, ...]]] = []
        seen = fingerprint(state.source.folder, cap_mb=self.config.snapshot_mb, stats=stats)
        if not recent(stats):
            state.stats = stats
        return seen

    def _too_soon(self, state: _Folder, now: float) -> bool:
        """Whether a new version of ``state``'s author must wait (``version_s`` since its
        last one was admitted); said once a wait. The folder as it is when the wait is over
        (and settled) is the one admitted. An author's first version never waits, nor the
        first look of a run at a folder (after a restart, the journal's version is most often
        the folder as it is: admitted again at once, it plays at once); a folder withdrawn
        and put back waits like any new version (moving it away and back is no way round)."""
        author = state.source.author
        last = self._accepted.get(author)
        if last is None or (state.first and state.done is None):
            return False
        left = last + self.config.version_s - now
        if left <= 0:
            return False
        if not state.waiting:
            state.waiting = True
            self._events.put(Note(f"{author}: a new version waits {left:.0f} s (version_s: "
                                  f"{self.config.version_s:g} s between two versions of an "
                                  f"author); the folder as it is then is admitted"))
        return True

    def _admit_on_worker(self, state: _Folder, seen: str) -> None:
        try:
            self._admit(state, seen)
        except Exception as err:  # what no refusal foresaw: this folder's, not the league's
            state.done = seen
            self._events.put(Refused(state.source.author, f"could not be admitted: "
                                                          f"{type(err).__name__}: {err}"[:300]))
        except BaseException as err:  # the league says so; a worker never hides one
            self.error = self.error or err
        finally:
            state.busy = False

    def _refuse(self, state: _Folder, author: str, reason: str, key: str) -> None:
        state.seen, state.stats = None, None
        if state.done != key:
            state.done = key
            self._events.put(Refused(shown(author), reason))

    def _admit(self, state: _Folder, seen: str) -> None:
        author = state.source.author
        with self._lock:
            version = self.versions.get(author, 0) + 1
        name = author if version == 1 else f"{author}.v{version}"
        try:
            entrant, snap, argv = admit(state.source, name, config=self.config,
                                        store=self.store, mode=self.mode, logs=self.logs,
                                        stop=self.stop, before=seen)
        except InterruptedError:
            state.seen = None  # it changed while being copied: it settles again first
            return
        except ValueError as err:
            state.done = seen
            self._events.put(Refused(author, str(err)))
            return
        state.done = seen
        if self.remote:
            entrant = Entrant(name, argv, workdir=state.source.workdir or state.source.folder,
                              hidden=(self.config.output,))
        with self._lock:
            old = self.known.get(author)
            if old is not None and snap.digest == old.digest:  # the same code, the same version
                self._events.put(Admitted(author, old.name, old.version, old.digest,
                                          replace(entrant, name=old.name), argv, state.wall,
                                          new=False))
                return
            self.versions[author] = version
            self.known[author] = Known(name, version, snap.digest, time.time())
            self._accepted[author] = self.clock()
            self._events.put(Admitted(author, name, version, snap.digest, entrant, argv,
                                      state.wall))
