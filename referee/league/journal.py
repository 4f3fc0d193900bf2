"""A league's output folder: the tournament's layout (:class:`~referee.tournament.output.
OutputFolder`: ``games/``, ``logs/``, ``preflight/``, ``results.jsonl``, ``standings.json``,
``standings.csv``, ``report/``, the deal secret) and two files of its own: the marker
``.ct-referee-league.json`` and ``league.jsonl``, the league's events (a version admitted,
refused or retired), each synced as it is written.

A match is finished once its record is written (synced) and then its line appended to
``results.jsonl`` (synced with its batch): the tournament's rule, read back the same way on a
restart (a line whose record is missing is dropped; a record without its line, a kill between
the two, is played again).
"""

from __future__ import annotations

from pathlib import Path

from referee.league.config import LeagueConfig
from referee.match.job import DealSecret
from referee.records.match_id import MatchId
from referee.tournament.output import (
    PREFLIGHT,
    REPORT,
    SECRET,
    Journal,
    OutputFolder,
    prepare_folder,
)

__all__ = ["EVENTS", "MARKER", "OWNED", "WIDTHS", "LeagueFolder", "match_id", "prepare"]

MARKER = ".ct-referee-league.json"
EVENTS = "league.jsonl"
OWNED = (MARKER, EVENTS, "results.jsonl", "standings.json", "standings.csv", SECRET, "games",
         "logs", PREFLIGHT, REPORT)
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
