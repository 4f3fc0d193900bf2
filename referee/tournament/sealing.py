"""A tournament's entrants sealed before play: one folder each, snapshotted once.

:func:`seal` checks every entrant's command against its folder (:func:`referee.bots.snapshot.
entrant_folder`) and the ``shared`` list, copies each folder into a private store, and returns
what every match needs (:class:`~referee.bots.snapshot.Sealed`), with a line for the header.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from referee.bots.sandbox import SandboxError, sealed_off
from referee.bots.snapshot import (
    Sealed,
    Store,
    entrant_folder,
    forbidden,
    sealed_binds,
    take_snapshot,
)
from referee.tournament.config import Config, ConfigError

LARGE_MB = 20
"""A folder from this size on is named, with its size and copy time, before play."""


@dataclass(frozen=True)
class Seals:
    """Every entrant's seal, by name, and the header's line about them."""

    by_name: dict[str, Sealed]
    summary: str


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
    """Check and snapshot every entrant (in configuration order).

    :raises ConfigError: for a command naming a path outside its entrant's folder, a folder
        that may not be one, one past ``snapshot_mb``, or one the referee cannot read.
    """
    check_shared(config)
    folders: list[Path] = []
    for e in config.entrants:
        try:
            folders.append(entrant_folder(e.argv, e.workdir, shared=config.shared,
                                          given=e.workdir_given))
        except SandboxError as err:
            raise ConfigError(f"{config.path}: entrant {e.name!r}: {err}") from None
    by_name: dict[str, Sealed] = {}
    size = seconds = 0.0
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
            snap = take_snapshot(folder, store, e.name, cap_mb=config.snapshot_mb,
                                 excluded=excluded)
            binds = sealed_binds(e.argv, e.workdir, folder, config.shared)
        except SandboxError as err:
            raise ConfigError(f"{config.path}: entrant {e.name!r}: {err}") from None
        if snap.size >= LARGE_MB << 20:
            warn(f"entrant {e.name!r}: its folder {str(folder)!r} holds {_mb(snap.size)} "
                 f"({snap.files} files), copied in {snap.seconds:.2f} s; each of its bots "
                 f"copies it again per match")
        by_name[e.name] = Sealed(snap, binds)
        size += snap.size
        seconds += snap.seconds
    summary = (f"sealed: {len(by_name)} snapshots ({_mb(int(size))}, {seconds:.2f} s), "
               f"a copy per bot per match")
    return Seals(by_name, summary)
