"""A tournament's entrants sealed: one folder each, snapshotted before the entrant's first match.

:func:`prepare` checks every entrant's command against its folder (:func:`referee.bots.
snapshot.entrant_folder`) and the ``shared`` list before play; :meth:`Seals.start` then copies
each folder into the private store and hashes the copy (:func:`~referee.bots.snapshot.
take_snapshot`) on threads of their own, in the order play needs the entrants, beside play, and
:meth:`Seals.sealed` waits for one entrant's: what every match of an entrant plays is the bytes
its folder held at its snapshot, whatever is written to it after (a write through a shared
writable mapping moves no date, so no stat could see it). What the copy refuses (the caps, the
depth, an unreadable file, a file linked in from another user) is said in one line naming the
entrant (:meth:`Seals.refusal`: the session stops the run there). Entrants sharing a folder
share its snapshot. :func:`seal` takes every snapshot at once.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent import futures
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from referee.bots.bot import CancelSignal
from referee.bots.policy import SandboxError
from referee.bots.resolve import Binds, sealed_off
from referee.bots.snapshot import (
    Sealed,
    Snapshot,
    Store,
    entrant_folder,
    forbidden,
    sealed_binds,
    take_snapshot,
)
from referee.tournament.config import Config, ConfigError, EntrantConfig

STOP_POLL_S = 0.05
"""How often a wait for a snapshot looks at its stop signal."""

LARGE_MB = 20
"""A folder from this size on is named, with its size, before play."""


@dataclass(frozen=True)
class _Entrant:
    """An entrant as checked before play: its folder (resolved; entrants sharing one share its
    snapshot) and its sandbox's view."""

    folder: Path
    binds: Binds


class Seals:
    """Every entrant's seal, by name, with the header's line about them. The folders are
    checked before play (:func:`prepare`); their snapshots are taken on :data:`SEAL_THREADS`
    threads once :meth:`start` names the order play needs them in, and :meth:`sealed` waits for
    an entrant's own: a match waits only for its seats' snapshots, never for the last one.

    Thread-safe; what is to be said (a large folder, a folder changed since kept matches) waits
    for :meth:`tell`, on the coordinator's thread."""

    def __init__(self, warn: Callable[[str], None], entrants: dict[str, _Entrant],
                 take: Callable[[str], Snapshot], *, checked: float = 0.0) -> None:
        self._warn = warn
        self._entrants = entrants
        self._take = take
        """Takes the snapshot of the folder of the entrant named (its first in the
        configuration); raises :class:`ConfigError` naming it."""
        self._sharing: dict[Path, list[str]] = {}  # each folder's entrants, its first names it
        for name, entrant in entrants.items():
            self._sharing.setdefault(entrant.folder, []).append(name)
        self._kept: dict[str, Counter[str]] = {}
        self._loaded = False
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None
        self._futures: dict[Path, Future[Snapshot]] = {}
        self._said: list[str] = []
        self._refused: ConfigError | None = None
        self._checked = checked
        self._started = 0.0
        self._ended: float | None = None
        self._count = 0

    def __contains__(self, name: object) -> bool:
        return name in self._entrants

    @property
    def names(self) -> list[str]:
        """The entrants, in configuration order."""
        return list(self._entrants)

    def folder(self, name: str) -> Path:
        """The entrant's folder (resolved)."""
        return self._entrants[name].folder

    def binds(self, name: str) -> Binds:
        """What the entrant's sandbox shows (its folder served from its snapshot)."""
        return self._entrants[name].binds

    # -- snapshots, in the order play needs them ------------------------------------------------

    def start(self, first: Sequence[str] = ()) -> None:
        """Starts taking the snapshots on threads of their own: the folders of the entrants
        ``first`` names, in that order, then the rest in configuration order (each folder
        once). Does nothing once started."""
        with self._lock:
            if self._pool is not None:
                return
            self._started = time.perf_counter()
            self._pool = ThreadPoolExecutor(SEAL_THREADS, thread_name_prefix="seal")
            for name in dict.fromkeys([*first, *self._entrants]):
                folder = self._entrants[name].folder
                if folder not in self._futures:
                    self._futures[folder] = self._pool.submit(self._seal, folder)

    def _seal(self, folder: Path) -> Snapshot:
        """(a sealing thread) The snapshot of ``folder``, what it says noted for :meth:`tell`."""
        name = self._sharing[folder][0]
        try:
            snap = self._take(name)
        except ConfigError as err:
            with self._lock:
                self._refused = self._refused or err
            raise
        with self._lock:
            self._count += 1
            if self._count == len(self._sharing):
                self._ended = time.perf_counter()
            if snap.size >= LARGE_MB << 20:
                for other in self._sharing[folder]:
                    self._said.append(
                        f"entrant {other!r}: its folder {str(folder)!r} holds "
                        f"{_mb(snap.size)} in {snap.entries} files, folders and links, kept "
                        f"in memory while the tournament runs (the snapshot took "
                        f"{snap.seconds:.2f} s)")
            if self._loaded:
                self._compare_folder(folder, snap.digest)
        return snap

    def sealed(self, name: str) -> Sealed:
        """The entrant's snapshot and view, waiting for its snapshot (sealing starts here,
        in configuration order, if nothing started it).

        :raises ConfigError: its folder refused, in one line naming the entrant.
        """
        self.start()
        entrant = self._entrants[name]
        return Sealed(self._futures[entrant.folder].result(), entrant.binds)

    def wait_for(self, name: str, stop: CancelSignal) -> Sealed | None:
        """:meth:`sealed`, unless ``stop`` is set before its snapshot is taken (``None``)."""
        self.start()
        entrant = self._entrants[name]
        future = self._futures[entrant.folder]
        while not future.done():
            if stop.is_set():
                return None
            futures.wait([future], timeout=STOP_POLL_S)
        return Sealed(future.result(), entrant.binds)

    def settle(self, timeout: float) -> None:
        """Waits up to ``timeout`` seconds for the snapshots under way (all of them, or one
        refused)."""
        with self._lock:
            pending = [f for f in self._futures.values() if not f.done()]
        if pending:
            futures.wait(pending, timeout=timeout, return_when=futures.FIRST_EXCEPTION)

    def refusal(self) -> ConfigError | None:
        """The first refusal found so far (in the order sealed), if any."""
        with self._lock:
            return self._refused

    def wait(self) -> None:
        """Waits for every snapshot (sealing started in configuration order if nothing
        started it), then says what is to be said (:meth:`tell`).

        :raises ConfigError: for the first entrant refused in configuration order.
        """
        self.start()
        for name in self._entrants:
            self.sealed(name)
        self.tell()

    def close(self) -> None:
        """Takes no more snapshots (those being taken finish first: the store outlives them)."""
        with self._lock:
            pool = self._pool
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)

    def tell(self) -> None:
        """Says (``warn``, on this thread) what the snapshots taken since the last call
        have to say."""
        with self._lock:
            said, self._said = self._said, []
        for text in said:
            self._warn(text)

    @property
    def done(self) -> bool:
        """Whether every folder is snapshotted."""
        with self._lock:
            return self._count == len(self._sharing)

    @property
    def summary(self) -> str:
        """The header's line: the snapshots so far (every one once :meth:`wait` returned)."""
        with self._lock:
            taken = [f.result() for f in self._futures.values()  # a stop cancels some
                     if f.done() and not f.cancelled() and f.exception() is None]
            count, ended = self._count, self._ended
        folders = len(self._sharing)
        if count < folders:
            what = "1 folder" if folders == 1 else f"{folders} folders"
            return (f"sealed: {what} checked ({self._checked:.2f} s), each snapshotted before "
                    f"its first match in the order play needs them ({count} taken so far, the "
                    f"rest while play goes on), in memory, read-only to every match")
        size = sum(snap.size for snap in taken)
        files = sum(snap.files for snap in taken)
        seconds = self._checked + ((ended or self._started) - self._started)
        return (f"sealed: {folders} folders snapshotted ({_mb(size)} in {files} files, "
                f"{seconds:.2f} s), in memory, read-only to every match")

    # -- a resume ------------------------------------------------------------------------------

    def kept(self, name: str, digest: object) -> None:
        """A match kept from an earlier run says the entrant played the snapshot ``digest``:
        once both :meth:`kept_loaded` is called and its snapshot taken, a warning waits for
        :meth:`tell` if it is another (the folder changed between runs)."""
        if isinstance(digest, str) and name in self._entrants:
            with self._lock:
                self._kept.setdefault(name, Counter())[digest] += 1

    def kept_loaded(self) -> None:
        """Every kept match is told: each snapshot (taken already, or once taken) compares its
        digest with theirs."""
        with self._lock:
            self._loaded = True
            for folder, future in self._futures.items():
                if future.done() and not future.cancelled() and future.exception() is None:
                    self._compare_folder(folder, future.result().digest)

    def _compare_folder(self, folder: Path, digest: str) -> None:
        """(under the lock) Compares the kept matches of the entrants of ``folder``."""
        for name in self._sharing[folder]:
            kept = self._kept.pop(name, Counter())
            count = sum(n for other, n in kept.items() if other != digest)
            if count:
                self._said.append(
                    f"entrant {name!r}: its folder changed since {count} kept match(es) were "
                    f"played (their records name another snapshot digest): they stay as "
                    f"played; --fresh plays everything again with the code as it is now")

    def digest(self, name: str) -> str | None:
        """The digest of the entrant's snapshot (``None``: not taken yet)."""
        entrant = self._entrants.get(name)
        if entrant is None:
            return None
        future = self._futures.get(entrant.folder)
        if future is None or not future.done() or future.cancelled() or \
                future.exception() is not None:
            return None
        return future.result().digest


def _mb(size: int) -> str:
    return f"{size / (1 << 20):.1f} MB"


def check_shared(config: Config) -> None:
    """Refuse a ``shared`` path that is a system folder or a home as a whole, or that holds
    the output folder, the configuration or an entrant's folder.

    :raises ConfigError: naming the path.
    """
    protected = [config.output, config.path, *(e.workdir for e in config.entrants)]
    for path in config.shared:
        real = Path(os.path.realpath(path))
        why = forbidden(real)
        if why:
            raise ConfigError(f"{config.path}: shared: {str(path)!r} is {why}: share a folder "
                              f"of its own holding only the data")
        if not sealed_off(real, within=True):
            raise ConfigError(f"{config.path}: shared: {str(path)!r} (or a file in it) can be "
                              f"changed during play by someone other than root: make root "
                              f"its owner and let no one else write it")
        for other in protected:
            if Path(os.path.realpath(other)).is_relative_to(real):
                raise ConfigError(f"{config.path}: shared: {str(path)!r} holds {str(other)!r}: "
                                  f"share a folder of its own holding only the data")


SEAL_THREADS = 8
"""Entrant folders checked and snapshotted at once. The work is mostly waiting on the file
system (a folder listed, a file stated, copied and read back: system calls that let the other
threads run, and a cold cache's disk reads): on 2 cores at a load average of 14-16, a
10,000-entrant ladder's sealing took 26.8 and 33.6 s on 8 threads against 70.6 and 69.4 s
on one, alternating (``docs/scaling.md``)."""


def prepare(config: Config, store: Store, warn: Callable[[str], None]) -> Seals:
    """Checks every entrant's command against its folder (and the ``shared`` list) now, and
    returns the :class:`Seals` that snapshot the folders once started (:meth:`Seals.start`:
    in the order play needs them, beside play; :meth:`Seals.sealed` waits for one).

    :raises ConfigError: for a ``shared`` path or a command naming a path outside its
        entrant's folder, or a folder that may not be one: naming the entrant, in one line (the
        first in configuration order). A snapshot's refusal (a folder past ``snapshot_mb``,
        one the referee cannot read, one holding what its entrant could not read itself) is
        raised by :meth:`Seals.sealed` and :meth:`Seals.wait`, and noted for
        :meth:`Seals.refusal`.
    """
    start = time.perf_counter()
    check_shared(config)

    def check(e: EntrantConfig) -> _Entrant:
        try:
            folder = entrant_folder(e.argv, e.workdir, shared=config.shared,
                                    given=e.workdir_given)
            return _Entrant(folder, sealed_binds(e.argv, e.workdir, folder, config.shared))
        except SandboxError as err:
            raise ConfigError(f"{config.path}: entrant {e.name!r}: {err}") from None

    with ThreadPoolExecutor(SEAL_THREADS, thread_name_prefix="seal") as pool:
        checked = list(pool.map(check, config.entrants))
    # What every snapshot leaves out, stated once (not once per entrant: 10,000 entrants
    # made that 100 million stats); an entrant's own folder is among them, harmlessly: a
    # copy of it starts inside it and never meets it.
    excluded = set()
    for path in (config.output, config.path, store.path, *(c.folder for c in checked),
                 *config.shared):
        with contextlib.suppress(OSError):
            st = os.stat(path)
            excluded.add((st.st_dev, st.st_ino))
    entrants = {e.name: c for e, c in zip(config.entrants, checked, strict=True)}

    def take(name: str) -> Snapshot:
        try:
            return take_snapshot(entrants[name].folder, store, name, cap_mb=config.snapshot_mb,
                                 excluded=excluded)
        except SandboxError as err:
            raise ConfigError(f"{config.path}: entrant {name!r}: {err}") from None

    return Seals(warn, entrants, take, checked=time.perf_counter() - start)


def seal(config: Config, store: Store, warn: Callable[[str], None]) -> Seals:
    """Checks and snapshots every entrant now (:func:`prepare`, then :meth:`Seals.wait`),
    naming those whose per-match copy will be slow.

    :raises ConfigError: as :func:`prepare`, and for the first entrant in configuration order
        whose snapshot is refused.
    """
    seals = prepare(config, store, warn)
    try:
        seals.wait()
    finally:
        seals.close()
    return seals
