"""What the report shows, as data: the finished matches and the folder's standings (read by
:func:`referee.web.report.read_folder`, drawn by :mod:`referee.web.report_page`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from referee.records.match_id import MatchId
from referee.tournament.ratings import RatingConfig

__all__ = ["Folder", "Match"]


@dataclass(frozen=True)
class Match:
    """One finished match, as the report needs it (a ``results.jsonl`` line)."""

    id: str
    players: tuple[str, ...]
    totals: tuple[int, ...]
    ranks: tuple[int, ...]
    hands: int
    faults: tuple[dict[str, Any], ...]
    set: str
    """The duplicate set: the matches dealt the same cards (a group's seatings in one round)."""
    order: tuple[int, str]
    """Where it sits in the schedule (matches are rated in this order)."""

    @classmethod
    def from_json(cls, line: dict[str, Any], position: int) -> Match:
        """From a ``results.jsonl`` line.

        :raises KeyError, TypeError, ValueError: if a field is missing or malformed.
        """
        match_id = str(line["id"])
        players = tuple(str(p) for p in line["players"])
        totals = tuple(int(t) for t in line["totals"])
        ranks = tuple(int(r) for r in line["ranks"])
        if not len(players) == len(totals) == len(ranks):
            raise ValueError("players, totals and ranks differ in length")
        faults = tuple(dict(f) for f in line.get("faults") or ())
        default_set = MatchId.parse(match_id).set if MatchId.is_one(match_id) else match_id
        index = line.get("index")
        order = (index, match_id) if isinstance(index, int) else (-1, match_id)
        return cls(match_id, players, totals, ranks, int(line.get("hands", 0)), faults,
                   str(line.get("set", default_set)), order)


@dataclass
class Folder:
    """Everything the report shows, read from an output folder."""

    name: str
    entrants: list[str]
    rating: RatingConfig
    matches: list[Match]
    """Finished matches, in schedule order."""
    standings: dict[str, Any] | None = None
    """``standings.json``, once written (the final table)."""
    logs: dict[str, dict[int, str]] = field(default_factory=dict)
    """Per match id, per seat: the stderr log's path relative to the output folder."""
    pages: set[str] = field(default_factory=set)
    """Match ids whose replay page exists (the others link to their record)."""
    preflight: dict[str, str] = field(default_factory=dict)
    """Per entrant, its pre-flight stderr log, relative to the output folder."""
