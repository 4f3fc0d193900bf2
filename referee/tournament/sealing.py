"""A tournament's entrants sealed before play: one folder each, fingerprinted at the start and
snapshotted the first time one of its matches is planned.

:func:`seal` checks every entrant's command against its folder (:func:`referee.bots.snapshot.
entrant_folder`) and the ``shared`` list and takes each folder's
:func:`~referee.bots.snapshot.fingerprint` (stat only: the cap, the depth, an unreadable
folder are refused before play, as a copy would refuse them). :meth:`Seals.sealed` copies a
folder into the private store when its first match is planned, and refuses it
(:class:`~referee.bots.snapshot.FolderChanged`) when it no longer matches its fingerprint: every
match of an entrant plays the code it had when the tournament started, and a 10,000-entrant
ladder starts with the three snapshots its first match needs, not 10,000.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from referee.bots.sandbox import Binds, SandboxError, sealed_off
from referee.bots.snapshot import (
    Fingerprint,
    FolderChanged,
    Sealed,
    Store,
    entrant_folder,
    fingerprint,
    forbidden,
    sealed_binds,
    take_snapshot,
)
from referee.tournament.config import Config, ConfigError

LARGE_MB = 20
"""A folder from this size on is named, with its size, before play."""


@dataclass(frozen=True)
class _Entrant:
    """An entrant as checked before play: its folder's fingerprint and its sandbox's view."""

    fingerprint: Fingerprint
    binds: Binds


class Seals:
    """Every entrant's seal, by name: checked and fingerprinted before play, snapshotted once,
    the first time :meth:`sealed` asks (from any thread), with the header's line about them."""

    def __init__(self, config: Config, store: Store, warn: Callable[[str], None],
                 entrants: dict[str, _Entrant], excluded: set[tuple[int, int]],
                 summary: str) -> None:
        self._config, self._store, self._warn = config, store, warn
        self._entrants, self._excluded = entrants, excluded
        self.summary = summary
        self._taken: dict[str, Sealed | FolderChanged] = {}
        self._kept: dict[str, Counter[str]] = {}
        self._lock = threading.Lock()
        self._loaded = False  # the kept matches all told (kept_loaded)
        self.seconds = 0.0
        """Spent on snapshots so far."""

    def __contains__(self, name: object) -> bool:
        return name in self._entrants

    @property
    def names(self) -> list[str]:
        """The entrants, in configuration order."""
        return list(self._entrants)

    def folder(self, name: str) -> Path:
        """The entrant's folder (resolved)."""
        return self._entrants[name].fingerprint.folder

    def binds(self, name: str) -> Binds:
        """What the entrant's sandbox shows (its folder served from its snapshot)."""
        return self._entrants[name].binds

    def kept(self, name: str, digest: object) -> None:
        """A match kept from an earlier run says the entrant played the snapshot ``digest``:
        its snapshot, once taken (and :meth:`kept_loaded`), warns if it is another (the folder
        changed between runs)."""
        if isinstance(digest, str) and name in self._entrants:
            self._kept.setdefault(name, Counter())[digest] += 1

    def kept_loaded(self) -> None:
        """Every kept match is told: the snapshots taken already compare theirs."""
        with self._lock:
            for name, taken in self._taken.items():
                if isinstance(taken, Sealed):
                    self._compare(name, taken.snapshot.digest)
            self._loaded = True

    def _compare(self, name: str, digest: str) -> None:
        kept = self._kept.pop(name, Counter())
        count = sum(n for other, n in kept.items() if other != digest)
        if count:
            self._warn(f"entrant {name!r}: its folder changed since {count} kept match(es) "
                       f"were played (their records name another snapshot digest): they stay "
                       f"as played; --fresh plays everything again with the code as it is "
                       f"now")

    def digest(self, name: str) -> str | None:
        """The digest of the entrant's snapshot, if taken."""
        taken = self._taken.get(name)
        return taken.snapshot.digest if isinstance(taken, Sealed) else None

    def sealed(self, name: str) -> Sealed:
        """The entrant's snapshot and view, the snapshot taken the first time it is asked for
        (checked against the fingerprint of the start).

        :raises FolderChanged: the folder changed since the start (the same every time after).
        :raises SandboxError: the copy failed, the folder as it was at the start (a full disk):
            not the entrant's doing.
        """
        with self._lock:
            taken = self._taken.get(name)
            if taken is None:
                taken = self._taken[name] = self._take(name)
        if isinstance(taken, FolderChanged):
            raise taken
        return taken

    def _take(self, name: str) -> Sealed | FolderChanged:
        entrant = self._entrants[name]
        folder = entrant.fingerprint.folder
        try:
            snap = take_snapshot(folder, self._store, name, cap_mb=self._config.snapshot_mb,
                                 excluded=self._excluded, expect=entrant.fingerprint)
        except FolderChanged as err:
            return err
        except SandboxError as err:  # a file gone mid-copy, a folder swapped, or a full disk
            try:
                now = fingerprint(folder, cap_mb=self._config.snapshot_mb,
                                  excluded=self._excluded, room=self._store.room(name))
            except SandboxError:
                now = None
            if now is not None and now.digest == entrant.fingerprint.digest:
                raise  # the folder is as it was: the copy itself failed
            return FolderChanged(f"its folder {str(folder)!r} changed after the tournament "
                                 f"started ({err}): every match of an entrant plays the code "
                                 f"it had at the start")
        self.seconds += snap.seconds
        if self._loaded:
            self._compare(name, snap.digest)
        return Sealed(snap, entrant.binds)


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


def seal(config: Config, store: Store, warn: Callable[[str], None]) -> Seals:
    """Check and fingerprint every entrant (in configuration order); snapshot at once those
    whose folder changed within :data:`~referee.bots.snapshot.HOT_S` (the rest wait for
    :meth:`Seals.sealed`).

    :raises ConfigError: for a command naming a path outside its entrant's folder, a folder
        that may not be one, one past ``snapshot_mb``, or one the referee cannot read.
    """
    start = time.perf_counter()
    check_shared(config)
    folders: list[Path] = []
    for e in config.entrants:
        try:
            folders.append(entrant_folder(e.argv, e.workdir, shared=config.shared,
                                          given=e.workdir_given))
        except SandboxError as err:
            raise ConfigError(f"{config.path}: entrant {e.name!r}: {err}") from None
    entrants: dict[str, _Entrant] = {}
    size = 0
    # What every snapshot leaves out, stated once (not once per entrant: 10,000 entrants made
    # that 100 million stats); an entrant's own folder is among them, harmlessly: a copy of it
    # starts inside it and never meets it.
    excluded = set()
    for path in (config.output, config.path, store.path, *folders, *config.shared):
        with contextlib.suppress(OSError):
            st = os.stat(path)
            excluded.add((st.st_dev, st.st_ino))
    for e, folder in zip(config.entrants, folders, strict=True):
        try:
            print_ = fingerprint(folder, cap_mb=config.snapshot_mb, excluded=excluded,
                                 room=store.room(e.name))
            binds = sealed_binds(e.argv, e.workdir, folder, config.shared)
        except SandboxError as err:
            raise ConfigError(f"{config.path}: entrant {e.name!r}: {err}") from None
        if print_.size >= LARGE_MB << 20:
            warn(f"entrant {e.name!r}: its folder {str(folder)!r} holds {_mb(print_.size)} "
                 f"({print_.files} files); each of its bots copies it again per match")
        entrants[e.name] = _Entrant(print_, binds)
        size += print_.size
    seconds = time.perf_counter() - start
    summary = (f"sealed: {len(entrants)} folders checked ({_mb(size)}, {seconds:.2f} s), each "
               f"snapshotted before its first match, a copy per bot per match")
    seals = Seals(config, store, warn, entrants, excluded, summary)
    for name, entrant in entrants.items():
        if entrant.fingerprint.hot:  # changed a moment ago: its stats may not tell the next
            try:
                seals.sealed(name)
            except SandboxError as err:
                raise ConfigError(f"{config.path}: entrant {name!r}: {err}") from None
    return seals
