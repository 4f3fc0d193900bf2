"""The submissions folder, watched, and each settled folder admitted, off the league's own
thread (:class:`Admissions`): whatever a folder holds, the league's thread never reads it.

A folder is one entrant (its name the author's; :mod:`referee.league.sources` says which
folders are looked at). Its **fingerprint** (:func:`~referee.league.folders.fingerprint`) is a
walk that follows no symlink and stops at the caps. A folder whose fingerprint (or whose reason
to be refused) stayed the same for ``settle_s`` is decided: refused at once where the look
says why, or queued for an **admission** (:func:`~referee.league.admit.admit`: by handle, the
snapshot, the pre-flight, the conformance check). A new digest is a new version, which retires
the author's older one.

No author can stall or squat the admissions: every look at a folder and every admission has a
wall-clock budget (:data:`LOOK_S`, :func:`admission_budget`) in a thread that is abandoned once
it is over (a stalled file system holds up its own folder, which is left alone until it
answers); at most one attempt of an author every ``version_s``, refusals too; the queue serves
the authors whose last attempt is oldest first (a first version first of all), one admission at
a time for each student's login; an empty folder holds no place and is said once in all.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import queue
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from referee.bots.limits import SandboxMode
from referee.bots.snapshot import Store, remove_copy
from referee.league.admit import Admission, Refusal, admit
from referee.league.config import LeagueConfig
from referee.league.folders import Changed, Stats, fingerprint, name_problem, recent, shown
from referee.league.folders import unchanged as still
from referee.league.sources import Source, Sources
from referee.match.play import Entrant

__all__ = ["ADMIT_JOBS", "EMPTY", "LOOK_S", "Admissions", "Admitted", "Known", "Note",
           "Refused", "Withdrawn", "admission_budget"]

ADMIT_JOBS = 2
"""Admissions under way at once."""
LOOK_S = 10.0
"""A look at one folder (or the listing of the submissions folder) that takes longer is
abandoned: the folder is left alone, said once, until the look returns."""
EMPTY = hashlib.sha256().hexdigest()
"""The fingerprint of an empty folder (it holds no place, and is not admitted)."""
EMPTY_NOTE_S = 60.0
"""How many folders are empty is said when it changed, at most this often."""


def admission_budget(config: LeagueConfig) -> float:
    """The longest an admission may take before it is abandoned (its folder refused until it
    changes): the copy's minute, the pre-flight (twice its start-up), and twice a conformance
    check whose every answer took the whole ``move_ms`` (62 requests), with room."""
    limits = config.limits
    check = limits.startup_ms + 80 * limits.move_ms if config.check else 0
    return 60.0 + (2 * limits.startup_ms + 2 * check) / 1000


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
    copy: Path | None = None
    """Its snapshot's copy in the store (removed once nothing plays it)."""


@dataclass(frozen=True)
class Refused:
    """A folder not admitted: why in one line, the end of its bot's stderr (escaped, cut)
    where one ran, and the folder's fingerprint as refused (``None``: try it again at the
    next start)."""

    author: str
    reason: str
    stderr: tuple[str, ...] = ()
    fingerprint: str | None = None


@dataclass(frozen=True)
class Withdrawn:
    """A folder that is gone: its author's version plays no more."""

    author: str


@dataclass(frozen=True)
class Note:
    """Something the organiser should know (the configuration not read again, say)."""

    text: str


Event = Admitted | Refused | Withdrawn | Note


@dataclass
class Known:
    """An author's current version, as the journal says."""

    name: str
    version: int
    digest: str
    at: float = 0.0
    """When it was admitted (``time.time()``; 0: unknown)."""


@dataclass
class _Folder:
    """What the watcher knows of one source."""

    source: Source
    seen: str | None = None
    """Its fingerprint at the last look, or ``bad:`` and why it is refused."""
    since: float = 0.0
    """When :attr:`seen` was first seen (the watcher's clock) ..."""
    wall: float = 0.0
    """... and by the wall clock."""
    done: str | None = None
    """The fingerprint last admitted or refused (nothing to do while it stays)."""
    busy: bool = False
    """Queued or being admitted (nothing else touches it meanwhile)."""
    stats: Stats | None = None
    """Every entry's ``stat`` at the last walk that gave :attr:`seen` (``None``: walk again):
    while they stay, so does the fingerprint, and the folder is not walked."""
    walked: str | None = None
    """The fingerprint that walk gave."""
    key: tuple[int, int] | None = None
    """The folder's device and inode at that walk."""
    waiting: bool = False
    """A new attempt waits for ``version_s`` (said once)."""
    bad: str | None = None
    """Why its name cannot be an author's (looked at once)."""
    first: bool = True
    """Whether this is the run's first look at the author's folder (a folder withdrawn and
    back is not: its next attempt waits for ``version_s`` like any other)."""


@dataclass
class _Running:
    """An admission under way, on a thread of its own."""

    state: _Folder
    seen: str
    deadline: float
    stop: threading.Event = field(default_factory=threading.Event)
    thread: threading.Thread | None = None
    abandoned: bool = False


class _Lookout:
    """The watcher's looks, each on a thread of its own, abandoned when what it reads (a
    folder, or the submissions folder: ``""``) does not answer within :data:`LOOK_S`; the
    folders left alone while an abandoned thread is still in them."""

    def __init__(self) -> None:
        self.gen = 0
        """The look under way's number: an abandoned look's result is not taken."""
        self.current: tuple[str, float] | None = None
        """What the look under way reads and since when."""
        self.stuck: threading.Thread | None = None
        """A look abandoned in the submissions folder itself, while it is still there."""
        self.blocked: dict[str, threading.Thread] = {}
        """The folders whose look or admission did not return in time, and the thread still
        in it: each left alone until it returns."""

    def stalled(self, author: str) -> bool:
        """Whether ``author``'s folder is left alone (a look or an admission still in it)."""
        thread = self.blocked.get(author)
        if thread is not None and not thread.is_alive():
            del self.blocked[author]  # it answers again: looked at anew
            return False
        return thread is not None

    @contextlib.contextmanager
    def reading(self, author: str) -> Iterator[bool]:
        """While inside, the look reads ``author``'s folder (a stall is its); ``False``: it
        is left alone, do not."""
        if self.stalled(author):
            yield False
            return
        was = self.current
        self.current = (author, time.monotonic())
        try:
            yield True
        finally:
            self.current = was

    def look(self, run: Callable[[int], None]) -> tuple[str, threading.Thread] | None:
        """``run(gen)`` on a thread of its own; what it was reading and the thread, if it
        did not answer within :data:`LOOK_S` (then abandoned), else ``None``."""
        looker = threading.Thread(target=run, args=(self.gen,), name="league-look",
                                  daemon=True)
        looker.start()
        while looker.is_alive():
            looker.join(timeout=0.05)
            current = self.current
            if current is None or not looker.is_alive() or \
                    time.monotonic() - current[1] < LOOK_S:
                continue
            self.gen += 1  # whatever the abandoned look finds later is not taken
            return current[0], looker
        return None


class Admissions:
    """The watcher and the admissions, on threads of their own: :meth:`events` hands the
    league what happened since, never blocking.

    ``known``: each author's current version (from the journal: a folder whose snapshot has
    the same digest is that version again); ``versions``: each author's highest version so
    far; ``refused``: each author's folder refused by an earlier run, its fingerprint and when
    (left alone until it changes)."""

    def __init__(self, config: LeagueConfig, *, store: Store, mode: SandboxMode, logs: Path,
                 known: dict[str, Known], versions: dict[str, int],
                 refused: Mapping[str, tuple[str, float]] | None = None,
                 clock: Callable[[], float] = time.monotonic, remote: bool = False) -> None:
        self.config, self.store, self.mode, self.logs = config, store, mode, logs
        self.remote = remote
        """Matches run on a cluster's workers: an admitted version (its snapshot pre-flown and
        checked here) plays there from its folder as it is (no snapshot travels)."""
        self.known, self.versions = known, versions
        self.refused = dict(refused or {})
        self.clock = clock
        self.stop = threading.Event()
        self.error: BaseException | None = None
        self._events: queue.Queue[Event] = queue.Queue()
        self._folders: dict[str, _Folder] = {}
        self._missing: dict[str, float] = {}
        self._lock = threading.Lock()  # versions, known, the queue: every thread's
        self.workers = _Workers(self)
        self.lookout = _Lookout()
        self._empty = (0, float("-inf"))
        """The empty folders last said, and when."""
        self.sources = Sources(config, held=lambda: {*self._folders, *self.known},
                               placeless=self._placeless,
                               note=lambda text: self._events.put(Note(text)),
                               reading=self.lookout.reading)
        wall, mono = time.time(), clock()
        self._attempted: dict[str, float] = {
            a: mono - max(0.0, wall - k.at) for a, k in known.items() if k.at}
        """When each author's last attempt started (the watcher's clock), kept through a
        withdrawal."""
        for author, (_, at) in self.refused.items():
            if at and author not in self._attempted:
                self._attempted[author] = mono - max(0.0, wall - at)
        self._looked: set[str] = set()
        self._thread = threading.Thread(target=self._run, name="league-watch", daemon=True)

    def start(self) -> None:
        """Starts watching."""
        self._thread.start()

    def close(self) -> None:
        """Stops watching (an admission under way is abandoned at its next step)."""
        self.stop.set()
        with self._lock:
            for run in self.workers.running.values():
                run.stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=LOOK_S + 5)

    def events(self) -> list[Event]:
        """What happened since the last call."""
        out = []
        with contextlib.suppress(queue.Empty):
            while True:
                out.append(self._events.get_nowait())
        return out

    def _placeless(self) -> set[str]:
        """The folders looked at that hold no place: never a valid bot (empty, or refused and
        never admitted)."""
        return {a for a, s in self._folders.items()
                if a not in self.known and s.done is not None and s.done == s.seen}

    # -- the watcher's thread ----------------------------------------------------------------

    def _run(self) -> None:
        try:
            while not self.stop.is_set():
                self._supervised()
                self.workers.dispatch()
                self.workers.supervise()
                self.stop.wait(self.config.poll_s)
        except BaseException as err:  # the league says so; nothing here may end it
            self.error = err

    def poll(self) -> None:
        """One look at every source (on this thread), then the admissions due started."""
        self._look(self.lookout.gen)
        self.workers.dispatch()
        self.workers.supervise()

    def _supervised(self) -> None:
        """One look, on a thread of its own abandoned where a folder (or the submissions
        folder) does not answer within :data:`LOOK_S`."""
        lookout = self.lookout
        if lookout.stuck is not None:
            if lookout.stuck.is_alive():
                return  # the submissions folder still does not answer: nothing to look at
            lookout.stuck = None
            self._events.put(Note("the submissions folder answers again"))
        stalled = lookout.look(self._look_safely)
        if stalled is None:
            return
        author, looker = stalled
        if not author:
            lookout.stuck = looker
            self._events.put(Note("the submissions folder does not answer (a stalled file "
                                  "system?): nobody is admitted or withdrawn until it does; "
                                  "the league plays on"))
            return
        self.blocked(author, looker, f"its folder does not answer within {LOOK_S:.0f} s (a "
                                     f"stalled file system?): it is left alone until it does")

    def blocked(self, author: str, thread: threading.Thread | None, why: str,
                key: str = "bad:stalled") -> None:
        """``author``'s folder is left alone while ``thread`` (a look or an admission that
        did not return in time) is in it; refused, said once."""
        if thread is not None:
            self.lookout.blocked[author] = thread
        state = self._folders.get(author)
        if state is None:
            self._events.put(Refused(shown(author), why))
            return
        state.seen, state.stats, state.busy = None, None, False
        self._refuse(state, why, key)

    def _look_safely(self, gen: int) -> None:
        try:
            self._look(gen)
        except BaseException as err:  # the league says so
            if gen == self.lookout.gen:
                self.error = self.error or err

    # -- one look ----------------------------------------------------------------------------

    def _look(self, gen: int) -> None:
        """One look at every source: a folder settled and changed since it was last decided
        is refused or queued; one gone is withdrawn."""
        now = self.clock()
        self.lookout.current = ("", time.monotonic())
        try:
            found = self.sources.look()
        finally:
            self.lookout.current = None
        if found is None or gen != self.lookout.gen:
            return
        sources = {s.author: s for s in found}
        self._withdraw(sources, now)
        empty = 0
        for author, source in sources.items():
            if self.stop.is_set() or gen != self.lookout.gen:
                return
            state = self._folders.get(author)
            if state is None:
                state = self._folder(author, source)
            if self.lookout.stalled(author):
                continue
            if state.busy:
                continue
            seen = self._seen(state, author, gen)
            if seen is None:
                continue
            empty += seen == EMPTY
            self._settle(state, seen, now)
        said, at = self._empty
        if empty != said and empty and time.monotonic() - at >= EMPTY_NOTE_S:
            self._events.put(Note(f"{empty} submission folders are empty: left alone until a "
                                  f"file comes"))
            self._empty = (empty, time.monotonic())

    def _folder(self, author: str, source: Source) -> _Folder:
        """The watcher's record of a source it looks at for the first time in this run."""
        state = self._folders[author] = _Folder(source, first=author not in self._looked)
        self._looked.add(author)
        if not source.house:
            state.bad = name_problem(author, self.config.output)
            if author in self.refused and author not in self.known:
                state.done = self.refused[author][0]  # refused before, as it is: left alone
        return state

    def _withdraw(self, sources: Mapping[str, Source], now: float) -> None:
        """The folders gone for ``settle_s`` withdrawn (a version's, or a refusal's)."""
        for author in [a for a in self._missing if a in sources]:
            del self._missing[author]
        with self._lock:
            for author in [a for a in {*self._folders, *self.known} if a not in sources]:
                state = self._folders.get(author)
                if state is not None and state.busy:
                    continue  # gone once its admission is over
                if now - self._missing.setdefault(author, now) < self.config.settle_s:
                    continue  # gone for good only once it stayed away (a folder swapped)
                del self._missing[author]
                self._folders.pop(author, None)
                self.workers.queue.pop(author, None)
                if author in self.known or (state is not None and state.done is not None):
                    self._events.put(Withdrawn(author))
                self.known.pop(author, None)

    def _seen(self, state: _Folder, author: str, gen: int) -> str | None:
        """The folder's fingerprint, or ``bad:`` and why it is refused (``None``: it changed
        while walked, or this look was abandoned)."""
        if author in self.sources.mounted:
            return "bad:it is, or holds, another file system (a mount point): copy the files " \
                   "in instead"
        if state.bad is not None:
            return f"bad:{state.bad}"
        self.lookout.current = (author, time.monotonic())
        try:
            seen = self._fingerprint(state)
        except Changed:  # changed while it was walked: it has not settled
            state.seen, seen = None, None
        except (OSError, ValueError) as err:
            why = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
            seen = f"bad:{why}"
        except Exception as err:  # whatever a folder holds, the watcher goes on
            seen = f"bad:cannot be read: {type(err).__name__}"
        finally:
            self.lookout.current = None
        if seen == EMPTY and author in self.known:
            seen = "bad:its folder is empty (nothing to run)"
        return seen if gen == self.lookout.gen else None

    def _fingerprint(self, state: _Folder) -> str:
        """The fingerprint of ``state``'s folder: the last walk's while every entry's ``stat``
        stays as it was (one ``lstat`` an entry), else a walk."""
        if state.stats is not None and state.walked is not None and still(state.stats):
            return state.walked
        state.stats, state.walked = None, None
        stats: Stats = []
        seen = fingerprint(state.source.folder, cap_mb=self.config.snapshot_mb, stats=stats)
        state.key = (stats[0][1][2], stats[0][1][1])
        if not recent(stats):
            state.stats, state.walked = stats, seen
        return seen

    def _settle(self, state: _Folder, seen: str, now: float) -> None:
        """A folder whose look stayed ``seen`` for ``settle_s`` is decided, at most once an
        attempt every ``version_s``: refused (``bad:``), left alone (empty) or queued."""
        author = state.source.author
        if seen.startswith("bad:") and (state.bad is not None or author in self.sources.mounted):
            state.seen = seen  # its name, a mount point: said at once, its folder never read
            self._refuse(state, seen[4:], seen)
            return
        if seen != state.seen:
            state.seen, state.since, state.wall = seen, now, time.time()
            with self._lock:
                self.workers.queue.pop(author, None)
            return
        if seen == state.done or now - state.since < self.config.settle_s:
            return
        if seen == EMPTY:  # never a bot (a version's emptied folder is refused): no place
            state.done = seen
            return
        if self._too_soon(state, now):
            return
        state.waiting = False
        if seen.startswith("bad:"):
            self._attempted[author] = now
            self._refuse(state, seen[4:], seen)
            return
        with self._lock:
            self.workers.queue[author] = (state, seen)

    def _too_soon(self, state: _Folder, now: float) -> bool:
        """Whether an attempt of ``state``'s author must wait (``version_s`` since its last
        one, a refusal's too); said once a wait. The folder as it is when the wait is over
        (and settled) is the one tried. An author's first attempt never waits, nor the first
        look of a run at a folder (after a restart, the journal's version is most often the
        folder as it is: admitted again at once, it plays at once); a folder withdrawn and
        put back waits like any other (moving it away and back is no way round)."""
        author = state.source.author
        last = self._attempted.get(author)
        if last is None or (state.first and state.done is None):
            return False
        left = last + self.config.version_s - now
        if left <= 0:
            return False
        if not state.waiting:
            state.waiting = True
            self._events.put(Note(f"{author}: a new version waits {left:.0f} s (version_s: "
                                  f"{self.config.version_s:g} s between two attempts of an "
                                  f"author); the folder as it is then is tried"))
        return True

    def _refuse(self, state: _Folder, reason: str, key: str,
                stderr: tuple[str, ...] = ()) -> None:
        state.stats = None
        if state.done != key:
            state.done = key
            self._events.put(Refused(shown(state.source.author), reason, stderr, key))


class _Workers:
    """The admissions of an :class:`Admissions` (``watch``): queued, each started on a thread
    of its own, abandoned past its budget."""

    def __init__(self, watch: Admissions) -> None:
        self.watch = watch
        self.queue: dict[str, tuple[_Folder, str]] = {}
        self.running: dict[str, _Running] = {}

    def dispatch(self) -> None:
        """Starts the queued admissions while fewer than :data:`ADMIT_JOBS` run: the authors
        whose last attempt is oldest first (never tried: first of all), one at a time for
        each student's login."""
        organiser = self.watch.sources.organiser
        with self.watch._lock:
            busy = {r.state.source.owner for r in self.running.values()} - organiser
            waiting = sorted(self.queue.items(), key=lambda item: (
                self.watch._attempted.get(item[0], float("-inf")), item[1][0].since))
            for author, (state, seen) in waiting:
                if len(self.running) >= ADMIT_JOBS or self.watch.stop.is_set():
                    return
                if state.source.owner in busy:
                    continue
                del self.queue[author]
                busy.add(state.source.owner)
                busy -= organiser
                state.busy = True
                self.watch._attempted[author] = self.watch.clock()
                run = _Running(state, seen, time.monotonic() + admission_budget(self.watch.config))
                run.thread = threading.Thread(target=self._admit_on_worker, args=(run,),
                                              name="league-admit", daemon=True)
                self.running[author] = run
                run.thread.start()

    def supervise(self) -> None:
        """Abandons the admissions past their budget: the folder refused (said once) and left
        alone until the admission returns and the folder changes."""
        now = time.monotonic()
        with self.watch._lock:
            for author, run in list(self.running.items()):
                if run.thread is not None and not run.thread.is_alive():
                    del self.running[author]
                elif now > run.deadline:
                    run.abandoned = True
                    run.stop.set()
                    del self.running[author]
                    self.watch.blocked(author, run.thread, f"its admission took more than "
                                       f"{admission_budget(self.watch.config):.0f} s: it is "
                                       f"tried again once its folder changes", run.seen)

    def _admit_on_worker(self, run: _Running) -> None:
        state = run.state
        try:
            self._admit(run)
        except Exception as err:  # what no refusal foresaw: this folder's, not the league's
            if not run.abandoned:
                state.done = run.seen
                self.watch._events.put(Refused(state.source.author, f"could not be admitted: "
                                         f"{type(err).__name__}: {err}"[:300]))
        except BaseException as err:  # the league says so; a worker never hides one
            self.watch.error = self.watch.error or err
        finally:
            if not run.abandoned:
                state.busy = False

    def _what(self, state: _Folder) -> tuple[Admission, int | None]:
        """What an admission of ``state``'s folder reads, and the descriptor it opened."""
        source = state.source
        if source.house or self.watch.sources.folder is None:
            return Admission(source.author, source.folder, command=source.command,
                             workdir=source.workdir), None
        parent = os.open(self.watch.sources.folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        return Admission(source.author, source.folder, key=state.key, parent=parent), parent

    def _admit(self, run: _Running) -> None:
        state, seen = run.state, run.seen
        author = state.source.author
        with self.watch._lock:
            version = self.watch.versions.get(author, 0) + 1
        name = author if version == 1 else f"{author}.v{version}"
        what, parent = self._what(state)
        try:
            w = self.watch
            entrant, snap, argv = admit(what, name, config=w.config, store=w.store,
                                        mode=w.mode, logs=w.logs, stop=run.stop, before=seen)
        except InterruptedError:
            state.seen = None  # it changed while being read: it settles again first
            return
        except Refusal as err:
            if not run.abandoned:
                state.done = seen
                self.watch._events.put(Refused(author, err.reason, err.stderr, seen))
            return
        finally:
            if parent is not None:
                os.close(parent)
        if run.abandoned or self.watch.stop.is_set():
            remove_copy(snap.copy)
            return
        state.done = seen
        self._admitted(state, name, version, entrant, snap.digest, argv, snap.copy)

    def _admitted(self, state: _Folder, name: str, version: int, entrant: Entrant,
                  digest: str, argv: tuple[str, ...], copy: Path) -> None:
        author = state.source.author
        if self.watch.remote:
            entrant = Entrant(name, argv, workdir=state.source.workdir or state.source.folder,
                              hidden=(self.watch.config.output,))
        with self.watch._lock:
            old = self.watch.known.get(author)
            if old is not None and digest == old.digest:  # the same code, the same version
                self.watch._events.put(Admitted(author, old.name, old.version, old.digest,
                                          replace(entrant, name=old.name), argv, state.wall,
                                          new=False, copy=copy))
                return
            self.watch.versions[author] = version
            self.watch.known[author] = Known(name, version, digest, time.time())
            self.watch._events.put(Admitted(author, name, version, digest, entrant, argv,
                                      state.wall, copy=copy))
