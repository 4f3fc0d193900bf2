"""Which duplicate sets of an output folder have ended: a set ends once every one of its
seatings is in the journal (``results.jsonl``), and until then nothing of it leaves the
referee's hands through a page or the report server (the later seatings play the same deals:
a record, a replay, a log or a total of an earlier seating tells a bot of a later one its
cards). The reasoning is in ``docs/security.md`` (*The report server*) and ``docs/report.md``.

:class:`SetGate` holds a report's journal lines until their set has ended, :class:`Counts`
counts the table's columns over them; :class:`EndedSets` follows a journal as it grows and
answers whether a match's set has ended.

>>> gate = SetGate(2)
>>> gate.add({"id": "r1-g001-s02"})
[]
>>> [line["id"] for line in gate.add({"id": "r1-g001-s01"})]
['r1-g001-s01', 'r1-g001-s02']
>>> [line["id"] for line in gate.add({"id": "r1-g001-s01"})]  # its set ended: a repeat passes
['r1-g001-s01']
"""

from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path
from typing import Any

import yaml

from referee.game.faults import Fault
from referee.records.match_id import MatchId
from referee.tournament.config import Config
from referee.tournament.formats import set_size
from referee.tournament.output import JournalLine

__all__ = ["Counts", "EndedSets", "SetGate", "set_key", "set_size_of"]

def set_key(match_id: object) -> int | None:
    """The set of a match id as one number, its round and group (however zero-padded the id is
    written): ``None`` for what is not a match id.

    >>> set_key("r1-g007-s02") == set_key("r01-g0007-s01") != set_key("r1-g008-s01")
    True
    """
    if not isinstance(match_id, str):
        return None
    try:
        mid = MatchId.parse(match_id)
    except ValueError:
        return None
    return mid.round << 64 | mid.group


def _seating(match_id: str) -> int:
    return MatchId.parse(match_id).seating


def size_of(settings: object) -> int | None:
    """The matches in one set of a configuration or an identity holding ``players`` and
    ``seatings`` (the loader's default where it is missing; ``None`` where they are not a
    tournament's)."""
    if not isinstance(settings, dict):
        return None
    players, kind = settings.get("players"), settings.get("seatings", Config.seatings)
    if isinstance(players, bool) or not isinstance(players, int) or not 2 <= players <= 4:
        return None
    try:
        return set_size(players, str(kind))
    except ValueError:
        return None


def set_size_of(out: Path, marker: Path | None = None) -> int | None:
    """The matches in one set of the output folder ``out``: from ``marker`` (a league's or a
    tournament's marker file: its ``identity``), else from the resolved configuration
    (``tournament.yaml``); ``None`` where neither says (then no set ever counts as ended)."""
    if marker is not None:
        try:
            found = size_of(json.loads(marker.read_text(encoding="utf-8")).get("identity"))
        except (OSError, ValueError, AttributeError):
            found = None
        if found is not None:
            return found
    try:
        return size_of(yaml.safe_load((out / "tournament.yaml").read_text(encoding="utf-8")))
    except (OSError, ValueError, yaml.YAMLError):
        return None


class SetGate:
    """Journal lines held by set until the set has ended (every one of its ``size`` seatings
    added), then handed on together in seating order; a line of a set that ended before passes
    at once (a journal read again: the report counts each match once). ``size`` ``None``: none
    is ever handed on. A line that names no match, or a seating past ``size``, is dropped."""

    def __init__(self, size: int | None) -> None:
        self.size = size
        self._held: dict[int, dict[int, dict[str, Any]]] = {}
        self._ended: set[int] = set()

    def add(self, line: dict[str, Any]) -> list[dict[str, Any]]:
        """``line`` with the rest of its set where it ends the set, ``[line]`` where its set
        ended before, else ``[]`` (held)."""
        key = set_key(line.get("id")) if isinstance(line, dict) else None
        if key is None or self.size is None:
            return []
        if key in self._ended:
            return [line]
        seating = _seating(str(line["id"]))
        if not 1 <= seating <= self.size:
            return []
        held = self._held.setdefault(key, {})
        held.setdefault(seating, line)
        if len(held) < self.size:
            return []
        del self._held[key]
        self._ended.add(key)
        return [held[s] for s in sorted(held)]

    @property
    def waiting(self) -> int:
        """Lines held (of sets under way)."""
        return sum(len(h) for h in self._held.values())


class EndedSets:
    """The sets of an output folder whose every seating is in its journal, read as the journal
    grows (the new bytes only; from the start again where the file was replaced or cut, as a
    resumed run's torn last line is dropped, or ``--fresh`` begins a new one). Thread-safe.
    ``size`` ``None``: no set ends."""

    def __init__(self, journal: Path, size: int | None) -> None:
        self.journal, self.size = journal, size
        self._lock = threading.Lock()
        self._file: tuple[int, int] | None = None
        self._offset = 0
        self._rest = b""
        self._seen: dict[int, int] = {}
        """Per set under way, a bit per seating journaled."""
        self._ended: set[int] = set()

    def ended(self, match_id: str) -> bool:
        """Whether the set of match ``match_id`` has ended (``False`` for what is not a match
        id)."""
        key = set_key(match_id)
        if key is None or self.size is None:
            return False
        with self._lock:
            self._read()
            return key in self._ended

    def _read(self) -> None:
        try:
            fd = os.open(self.journal, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            self._reset(None)
            return
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                self._reset(None)
                return
            identity = (info.st_dev, info.st_ino)
            if identity != self._file or info.st_size < self._offset:
                self._reset(identity)
            if info.st_size == self._offset:
                return
            os.lseek(fd, self._offset, os.SEEK_SET)
            chunks = []
            while chunk := os.read(fd, 1 << 20):
                chunks.append(chunk)
        finally:
            os.close(fd)
        data = self._rest + b"".join(chunks)
        self._offset += len(data) - len(self._rest)
        complete, _, self._rest = data.rpartition(b"\n")
        for raw in complete.split(b"\n") if complete else ():
            self._take(raw)

    def _reset(self, identity: tuple[int, int] | None) -> None:
        self._file, self._offset, self._rest = identity, 0, b""
        self._seen.clear()
        self._ended.clear()

    def _take(self, raw: bytes) -> None:
        try:
            line = json.loads(raw)
        except ValueError:
            return
        match_id = line.get("id") if isinstance(line, dict) else None
        key = set_key(match_id)
        if key is None or key in self._ended or self.size is None:
            return
        seating = _seating(str(match_id))
        if not 1 <= seating <= self.size:
            return
        seen = self._seen.get(key, 0) | 1 << seating
        if seen == (1 << (self.size + 1)) - 2:  # seatings 1..size
            self._seen.pop(key, None)
            self._ended.add(key)
        else:
            self._seen[key] = seen


class Counts:
    """Each entrant's counting columns of the table (games, wins, mean rank, points a hand,
    adjusted points a hand, faults) over the journal lines added: those of the sets that ended,
    where the running table counts every match of the schedule's finished prefix, a set under
    way too. :meth:`apply` puts them into a row of the table."""

    def __init__(self) -> None:
        self._tally: dict[str, list[float]] = {}
        """Per entrant: matches, wins, sum of ranks, points, luck, hands."""
        self._faults: dict[str, dict[str, int]] = {}

    def add(self, line: dict[str, Any]) -> None:
        """Counts one journal line (a malformed one is skipped)."""
        try:
            parsed = JournalLine.parse(line)
        except ValueError:
            return
        result = parsed.result
        luck = [sum(hand[seat] for hand in parsed.luck) for seat in range(len(result.players))] \
            if parsed.luck is not None else [0.0] * len(result.players)
        for seat, name in enumerate(result.players):
            tally = self._tally.setdefault(name, [0, 0, 0, 0, 0.0, 0])
            tally[0] += 1
            tally[1] += result.ranks[seat] == 1
            tally[2] += result.ranks[seat]
            tally[3] += result.totals[seat]
            tally[4] += luck[seat]
            tally[5] += result.hands
        for seat, kind in result.faults:
            if 0 <= seat < len(result.players):
                faults = self._faults.setdefault(result.players[seat], {})
                faults[kind] = faults.get(kind, 0) + 1

    def apply(self, row: dict[str, Any]) -> dict[str, Any]:
        """``row`` (:meth:`~referee.tournament.ratings.Standing.to_json`) with these counts."""
        matches, wins, ranks, points, luck, hands = self._tally.get(
            str(row.get("name")), [0, 0, 0, 0, 0.0, 0])
        faults = {kind: 0 for kind in row.get("faults") or {}} | {f.value: 0 for f in Fault}
        return row | {
            "matches": int(matches), "wins": int(wins),
            "mean_rank": round(ranks / matches, 6) if matches else None,
            "points_per_hand": round(points / hands, 6) if hands else None,
            "adjusted_per_hand": round((points - luck) / hands, 6) if hands else None,
            "faults": faults | self._faults.get(str(row.get("name")), {})}
