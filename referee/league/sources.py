"""Where a league's versions come from (:class:`Sources`): the house entrants of
``league.yaml`` (read again when it changes) and the submission folders, within the places the
league gives.

Places: at most :data:`MAX_FOLDERS` folders are looked at; those looked at already or in the
journal keep their place, newcomers take the room left in the order they came. A folder that
never held a valid bot (empty, or refused and never admitted) holds no place. A folder owned by
a student (any uid but root's, the referee's and the submissions folder's owner's: those are
the organiser's tools, an ``rsync`` or a course site's export) counts against its owner's
:data:`OWNER_FOLDERS`: one login cannot take the places of a class. Folders that are, or hold,
a mount point are named from the mount table (:func:`~referee.league.folders.mount_points`),
never looked into.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Collection
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

from referee.bots.policy import SandboxError
from referee.bots.snapshot import entrant_folder
from referee.league import folders
from referee.league.config import LeagueConfig, load_league
from referee.league.folders import mount_points, stat_key
from referee.tournament.common import ConfigError, EntrantConfig

__all__ = ["LIST_MAX", "MAX_FOLDERS", "OWNER_FOLDERS", "Source", "Sources"]

MAX_FOLDERS = 10_000
"""Submission folders holding a place: past it the ones already in keep their place and the
newest wait (one note says so)."""
LIST_MAX = 4 * MAX_FOLDERS
"""Names read from the submissions folder in one listing (a folder of more is cut there)."""
OWNER_FOLDERS = 3
"""Submission folders one student's login may own and have looked at (a student's is one
folder; the organiser's own uids are not counted)."""


@dataclass(frozen=True)
class Source:
    """Where an entrant's versions come from: a submission folder, or a house entrant."""

    author: str
    folder: Path
    command: str | tuple[str, ...] | None = None
    """A house entrant's command (``None``: a submission's ``command.txt``, else the
    league's)."""
    workdir: Path | None = None
    """Where the command runs (default: ``folder``)."""
    house: bool = False
    """A house entrant (from the YAML): its folder is the one its command names (as a
    tournament's); a submission's is its own folder, and nothing else."""
    owner: int = -1
    """A submission folder's owner (its uid)."""


class Sources:
    """One look at where versions come from (:meth:`look`). ``held``: the authors that keep
    their place (looked at already, or in the journal); ``placeless``: those among them that
    hold none (never a valid bot); ``note``: a line for the organiser; ``reading``: see
    :attr:`reading`."""

    def __init__(self, config: LeagueConfig, *, held: Callable[[], Collection[str]],
                 placeless: Callable[[], Collection[str]], note: Callable[[str], None],
                 reading: Callable[[str], AbstractContextManager[bool]] | None = None) -> None:
        self.config, self.held, self.placeless, self.note = config, held, placeless, note
        self.reading = reading or (lambda name: contextlib.nullcontext(True))
        """Around each look into one folder (its owner's ``lstat``): ``False``, do not."""
        self.folder = Path(os.path.realpath(config.submissions)) \
            if config.submissions is not None else None
        self.organiser = {0, os.geteuid()}
        with contextlib.suppress(OSError, TypeError):
            self.organiser.add(os.stat(self.folder).st_uid)  # type: ignore[arg-type]
        self._house = config.entrants
        self._read = self._mtime()
        self._listing: tuple[tuple[int, ...], list[str], bool] | None = None
        """The submissions folder's ``stat``, its names and whether they were cut at
        :data:`LIST_MAX`, from its last listing (read again once its ``stat`` changes)."""
        self._made: dict[str, Source] = {}
        self._arrival: dict[str, int] = {}
        self._polls = 0
        self._waiting = 0
        self._owners: dict[int, int] = {}
        """Each student's uid, and how many of its folders are left alone (each said once)."""
        self.mounted: set[str] = set()
        """The submission folders that are, or hold, a mount point (at the last look)."""

    # -- the house -------------------------------------------------------------------------

    def _mtime(self) -> int | None:
        try:
            return os.stat(self.config.path).st_mtime_ns
        except OSError:
            return None

    def house(self) -> tuple[EntrantConfig, ...]:
        """The house entrants, the configuration read again when it changed (its other keys
        take effect at the next start)."""
        mtime = self._mtime()
        if mtime is not None and mtime != self._read:
            self._read = mtime
            try:
                self._house = load_league(self.config.path, output=self.config.output).entrants
            except ConfigError as err:
                self.note(f"{self.config.path.name} not read again (its house entrants stay "
                          f"as they were): {str(err).splitlines()[0]}")
            else:
                self.note(f"{self.config.path.name} read again: {len(self._house)} house "
                          f"entrants")
        return self._house

    def _house_source(self, e: EntrantConfig) -> Source:
        """A house entrant's source: the folder its command names (as a tournament's)."""
        try:
            folder = entrant_folder(e.argv, e.workdir, shared=self.config.shared,
                                    given=e.workdir_given)
        except SandboxError:
            folder = e.workdir  # refused when admitted, saying why
        return Source(e.name, folder, e.command, e.workdir, house=True)

    # -- the submissions -------------------------------------------------------------------

    def look(self) -> list[Source] | None:
        """The house entrants, then the submission folders within their places (sorted);
        ``None`` while the submissions folder cannot be read (nobody is withdrawn for that).
        :attr:`mounted` names the folders with a mount point."""
        found = [self._house_source(e) for e in self.house()]
        if self.folder is None:
            return found
        listed = self._names(self.folder)
        if listed is None:
            return None
        names, cut = listed
        house = {s.author for s in found}
        names = [n for n in names if n not in house]
        self.mounted = mount_points(self.folder) & set(names)
        made = self._made
        for n in sorted(self._within_cap(names, cut)):
            source = made.get(n)
            if source is None:
                source = made[n] = Source(n, self.folder / n, owner=self._owner(n))
            found.append(source)
        if len(made) > 2 * MAX_FOLDERS:  # gone ones forgotten
            self._made = {s.author: s for s in found if not s.house}
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
        fresh = time.time_ns() - max(key[4], key[5]) < folders.RACY_NS
        self._listing = None if fresh else (key, names, cut)
        return names, cut

    def _owner(self, name: str) -> int:
        """The uid that owns submission folder ``name`` (-1: unknown). A mount point's is not
        asked (its file system may not answer)."""
        if self.folder is None or name in self.mounted:
            return -1
        with self.reading(name) as go:
            if not go:
                return -1
            try:
                return os.lstat(self.folder / name).st_uid
            except OSError:
                return -1

    def _within_cap(self, names: list[str], cut: bool) -> list[str]:
        """``names`` within their places (see the module): those held first, then newcomers
        in the order they came (then by name), each student's uid at most
        :data:`OWNER_FOLDERS`; the rest left alone, said in one note (each time it grows)."""
        held = set(self.held())
        present = [n for n in names if n in held]
        if cut and self.folder is not None:  # a listing cut short: the held ones it missed
            seen = set(present)
            present += [n for n in held if n not in seen and os.path.isdir(self.folder / n)]
        self._polls += 1
        arrival = self._arrival = {n: self._arrival.get(n, self._polls)
                                   for n in names if n not in held}
        placeless = set(self.placeless())
        places = sum(n not in placeless for n in present)
        owned: dict[int, int] = {}
        for n in present:
            uid = self._made[n].owner if n in self._made else self._owner(n)
            owned[uid] = owned.get(uid, 0) + 1
        taken, waiting, over = [], 0, dict.fromkeys(self._owners, 0)
        for n in sorted(arrival, key=lambda n: (arrival[n], n)):  # the newest last
            uid = self._owner(n)
            if uid not in self.organiser and uid != -1 and owned.get(uid, 0) >= OWNER_FOLDERS:
                over[uid] = over.get(uid, 0) + 1
                continue
            if places >= MAX_FOLDERS:
                waiting += 1
                continue
            owned[uid] = owned.get(uid, 0) + 1
            places += 1
            taken.append(n)
        self._say(over, waiting)
        return present + taken

    def _say(self, over: dict[int, int], waiting: int) -> None:
        """One note for each student's uid whose folders past :data:`OWNER_FOLDERS` grew in
        number, one for the newcomers waiting for a place when they grew."""
        for uid, count in over.items():
            if count > self._owners.get(uid, 0):
                self.note(f"uid {uid} owns more than {OWNER_FOLDERS} submission folders: "
                          f"{count} of them are left alone (a student's bot is one folder; "
                          f"the first {OWNER_FOLDERS} are looked at)")
        self._owners = {uid: count for uid, count in over.items() if count}
        if waiting > self._waiting:
            self.note(f"the submissions folder holds more than {MAX_FOLDERS} folders with a "
                      f"place: the {waiting} newest wait until some leave (those already in "
                      f"keep their place)")
        self._waiting = waiting
