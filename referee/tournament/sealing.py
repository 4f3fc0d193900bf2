"""A tournament's entrants sealed before play: one folder each, snapshotted when the run starts.

:func:`seal` checks every entrant's command against its folder (:func:`referee.bots.snapshot.
entrant_folder`) and the ``shared`` list, and copies each folder into the private store, then
hashes the copy (:func:`~referee.bots.snapshot.take_snapshot`): what every match of an entrant
plays is the bytes it had when the tournament started, whatever is written to its folder after
(a write through a shared writable mapping moves no date, so no stat could see it). What the
copy refuses (the caps, the depth, an unreadable file, a file linked in from another user) is
refused before play, in one line naming the entrant. Entrants sharing a folder share its
snapshot.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from referee.bots.sandbox import Binds, SandboxError, sealed_off, system_view
from referee.bots.snapshot import (
    SLOW_COPY_S,
    Sealed,
    Snapshot,
    Store,
    entrant_folder,
    forbidden,
    sealed_binds,
    take_snapshot,
)
from referee.tournament.config import Config, ConfigError, EntrantConfig

LARGE_MB = 20
"""A folder from this size on is named, with its size, before play."""


@dataclass(frozen=True)
class _Entrant:
    """An entrant as sealed before play: its snapshot and its sandbox's view."""

    sealed: Sealed

    @property
    def binds(self) -> Binds:
        return self.sealed.binds


class Seals:
    """Every entrant's seal, by name, each snapshotted before play, with the header's line
    about them."""

    def __init__(self, warn: Callable[[str], None], entrants: dict[str, _Entrant],
                 summary: str, seconds: float = 0.0) -> None:
        self._warn = warn
        self._entrants = entrants
        self.summary = summary
        self._kept: dict[str, Counter[str]] = {}
        self._lock = threading.Lock()
        self.seconds = seconds
        """Spent on snapshots."""

    def __contains__(self, name: object) -> bool:
        return name in self._entrants

    @property
    def names(self) -> list[str]:
        """The entrants, in configuration order."""
        return list(self._entrants)

    def folder(self, name: str) -> Path:
        """The entrant's folder (resolved)."""
        return self._entrants[name].sealed.snapshot.folder

    def binds(self, name: str) -> Binds:
        """What the entrant's sandbox shows (its folder served from its snapshot)."""
        return self._entrants[name].binds

    def kept(self, name: str, digest: object) -> None:
        """A match kept from an earlier run says the entrant played the snapshot ``digest``:
        :meth:`kept_loaded` warns if it is another (the folder changed between runs)."""
        if isinstance(digest, str) and name in self._entrants:
            self._kept.setdefault(name, Counter())[digest] += 1

    def kept_loaded(self) -> None:
        """Every kept match is told: each snapshot compares its digest with theirs."""
        with self._lock:
            for name, entrant in self._entrants.items():
                self._compare(name, entrant.sealed.snapshot.digest)

    def _compare(self, name: str, digest: str) -> None:
        kept = self._kept.pop(name, Counter())
        count = sum(n for other, n in kept.items() if other != digest)
        if count:
            self._warn(f"entrant {name!r}: its folder changed since {count} kept match(es) "
                       f"were played (their records name another snapshot digest): they stay "
                       f"as played; --fresh plays everything again with the code as it is "
                       f"now")

    def digest(self, name: str) -> str | None:
        """The digest of the entrant's snapshot."""
        entrant = self._entrants.get(name)
        return entrant.sealed.snapshot.digest if entrant is not None else None

    def shown(self, shared: Sequence[Path] = ()) -> tuple[Path, ...]:
        """What the entrants' sandboxes show read-only at their host paths: the system
        folders, every entrant's runtimes (the referee package among them) and ``shared``;
        their own folders are a fresh copy each match. The files whose pages a referee that is
        not root evicts between the seatings of a set."""
        found = dict.fromkeys(system_view())
        for entrant in self._entrants.values():
            found.update(dict.fromkeys(entrant.binds.runtime))
        found.update(dict.fromkeys(Path(os.path.realpath(p)) for p in shared))
        return tuple(found)

    def sealed(self, name: str) -> Sealed:
        """The entrant's snapshot and view, taken when the tournament started."""
        return self._entrants[name].sealed


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


def seal(config: Config, store: Store, warn: Callable[[str], None]) -> Seals:
    """Check and snapshot every entrant (entrants sharing a folder share its snapshot), on
    :data:`SEAL_THREADS` threads, naming before play those whose per-match copy will be slow.

    :raises ConfigError: for a command naming a path outside its entrant's folder, a folder
        that may not be one, one past ``snapshot_mb``, one the referee cannot read, or one
        holding what its entrant could not read itself: naming the entrant, in one line (the
        first in configuration order, as on one thread).
    """
    start = time.perf_counter()
    check_shared(config)

    def folder_of(e: EntrantConfig) -> Path:
        try:
            return entrant_folder(e.argv, e.workdir, shared=config.shared,
                                  given=e.workdir_given)
        except SandboxError as err:
            raise ConfigError(f"{config.path}: entrant {e.name!r}: {err}") from None

    pool = ThreadPoolExecutor(SEAL_THREADS, thread_name_prefix="seal")
    try:
        folders = list(pool.map(folder_of, config.entrants))
        # What every snapshot leaves out, stated once (not once per entrant: 10,000 entrants
        # made that 100 million stats); an entrant's own folder is among them, harmlessly: a
        # copy of it starts inside it and never meets it.
        excluded = set()
        for path in (config.output, config.path, store.path, *folders, *config.shared):
            with contextlib.suppress(OSError):
                st = os.stat(path)
                excluded.add((st.st_dev, st.st_ino))
        first: dict[Path, EntrantConfig] = {}  # each folder's first entrant: names its snapshot
        for e, folder in zip(config.entrants, folders, strict=True):
            first.setdefault(folder, e)

        def seal_one(i: int) -> tuple[Snapshot | None, Binds]:
            e, folder = config.entrants[i], folders[i]
            try:
                snap = take_snapshot(folder, store, e.name, cap_mb=config.snapshot_mb,
                                     excluded=excluded) if first[folder] is e else None
                return snap, sealed_binds(e.argv, e.workdir, folder, config.shared)
            except SandboxError as err:
                raise ConfigError(f"{config.path}: entrant {e.name!r}: {err}") from None

        sealed = list(pool.map(seal_one, range(len(folders))))
    finally:
        pool.shutdown(cancel_futures=True)
    taken = {folder: snap for folder, (snap, _) in zip(folders, sealed, strict=True)
             if snap is not None}
    entrants: dict[str, _Entrant] = {}
    for e, folder, (_, bound) in zip(config.entrants, folders, sealed, strict=True):
        snap = taken[folder]
        if snap.size >= LARGE_MB << 20 or snap.estimate >= SLOW_COPY_S:
            warn(f"entrant {e.name!r}: its folder {str(folder)!r} holds {_mb(snap.size)} in "
                 f"{snap.entries} files, folders and links; each of its bots copies it again "
                 f"per match, about {snap.estimate:.2f} s a copy by its size (the snapshot "
                 f"took {snap.seconds:.2f} s)")
        entrants[e.name] = _Entrant(Sealed(snap, bound))
    size = sum(snap.size for snap in taken.values())
    files = sum(snap.files for snap in taken.values())
    copying = sum(snap.seconds for snap in taken.values())
    seconds = time.perf_counter() - start
    summary = (f"sealed: {len(taken)} folders snapshotted ({_mb(size)} in {files} files, "
               f"{seconds:.2f} s), a copy per bot per match")
    return Seals(warn, entrants, summary, copying)
