"""A league's output folder: the tournament's layout (:class:`~referee.tournament.output.
OutputFolder`: ``games/``, ``logs/``, ``preflight/``, ``results.jsonl``, ``report/``, the deal
secret) and two files of its own: the marker ``.ct-referee-league.json`` and ``league.jsonl``,
the league's events (a version admitted, refused or retired), each synced as it is written.

A match is finished once its record is written (synced) and its line appended to
``results.jsonl`` (synced with its batch). A referee killed between the two leaves a record
without its line: :func:`orphans` finds such records on a restart, and the league appends their
lines (a record holds everything its line says), so no finished match is lost.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterator, Mapping
from pathlib import Path
from typing import Any

from referee.league.config import LeagueConfig
from referee.match.job import DealSecret, result_line
from referee.records.match_id import MatchId
from referee.records.record import RecordError, read_record, record_id
from referee.tournament.output import (
    PREFLIGHT,
    REPORT,
    SECRET,
    Journal,
    OutputFolder,
    prepare_folder,
)

__all__ = ["EVENTS", "MARKER", "OWNED", "RECENT", "WIDTHS", "Journaled", "LeagueFolder", "match_id",
           "orphans", "prepare"]

MARKER = ".ct-referee-league.json"
EVENTS = "league.jsonl"
OWNED = (MARKER, EVENTS, "results.jsonl", SECRET, "games", "logs", PREFLIGHT, REPORT)
"""Everything ``--fresh`` deletes from a league's folder; nothing else is touched."""
WIDTHS = (1, 6, 2)
"""A league's match ids, ``r1-g000042-s02``: round 1, the set's number, the seating."""


def match_id(group: int, seating: int) -> str:
    """The id of seating ``seating`` of set ``group``.

    >>> match_id(42, 2)
    'r1-g000042-s02'
    """
    return str(MatchId(1, group, seating, WIDTHS))


class LeagueFolder(OutputFolder):
    """A league's output folder (the tournament's layout, and the league's own files)."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.league_marker = root / MARKER
        self.events = root / EVENTS

    def event_log(self) -> Journal:
        """``league.jsonl``."""
        return Journal(self.events)


def prepare(config: LeagueConfig, *, fresh: bool = False) -> DealSecret:
    """Makes the output folder ready (new, the same league resumed, or emptied with
    ``fresh``) and returns its deal secret: the tournament's
    :func:`~referee.tournament.output.prepare_folder`, with the league's marker and files.

    :raises ConfigError: for a folder of another league, one that is not a league's and is
        not empty, or one with results but no deal secret.
    """
    return prepare_folder(config.output, config.identity(), kind="league", marker=MARKER,
                          owned=OWNED, fresh=fresh)


RECENT = 10_000
"""Sets below the newest journaled one by more than this are taken as fully journaled but
for sets under way (a kill between a record and its line is a matter of the sets in play:
thousands of sets do not finish while one match writes its line)."""


class Journaled:
    """The matches read back from ``results.jsonl``, remembered for the newest :data:`RECENT`
    sets only (a journal of a million lines costs the memory of ten thousand sets)."""

    def __init__(self) -> None:
        self.newest = 0
        self._seen: dict[int, set[int]] = {}

    def add(self, group: int, seating: int) -> None:
        """Match ``seating`` of set ``group`` was journaled."""
        self._seen.setdefault(group, set()).add(seating)
        if group > self.newest:
            self.newest = group
            if len(self._seen) > 2 * RECENT:
                floor = self.newest - RECENT
                self._seen = {g: s for g, s in self._seen.items() if g >= floor}

    def has(self, group: int, seating: int, *,
            partial: Mapping[int, Collection[int]]) -> bool:
        """Whether match ``seating`` of set ``group`` was journaled (``partial``: the sets
        under way, by set, with their journaled seatings)."""
        if group in partial:
            return seating in partial[group]
        return group < self.newest - RECENT or seating in self._seen.get(group, ())


def orphans(folder: OutputFolder, journaled: Journaled,
            partial: Mapping[int, Collection[int]]) -> Iterator[dict[str, Any]]:
    """The result lines of the records in ``games/`` that ``journaled`` lacks, read back from
    each record (one that cannot be read is left alone), oldest set first; ``games/`` is read
    one name at a time."""
    found = []
    try:
        with os.scandir(folder.games) as it:
            for entry in it:
                mid = record_id(entry.name)
                if mid is None or not MatchId.is_one(mid):
                    continue
                parsed = MatchId.parse(mid)
                if not journaled.has(parsed.group, parsed.seating, partial=partial):
                    found.append((parsed.group, parsed.seating, mid))
    except OSError:
        return
    for _, _, mid in sorted(found):
        try:
            record = read_record(folder.saved_record(mid))
            line = result_line(record)
        except (RecordError, KeyError, TypeError, ValueError):
            continue
        snapshots = record.get("snapshots")
        if isinstance(snapshots, list):
            line["snapshots"] = snapshots
        line["record"] = folder.record_ref(mid)
        yield line
