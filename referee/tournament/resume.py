"""What an earlier run of a tournament's output folder left: the matches it finished
(:class:`Resumed`, from ``results.jsonl``) and the rounds it planned (:class:`RoundsLog`,
``rounds.jsonl``), so that a resumed run plays only what is missing, the same way."""

from __future__ import annotations

import array
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from referee.match.job import MatchSpec
from referee.records.record import FaultDict, RecordDict, RecordError, read_record
from referee.tournament.output import Journal, JournalLine, OutputFolder
from referee.tournament.ratings import MatchResult
from referee.tournament.sealing import Seals

__all__ = ["Kept", "Resumed", "RoundsLog"]


_NO_FAULTS: list[FaultDict] = []


@dataclass(frozen=True)
class Kept:
    """A finished match read back from the journal (its hand scores packed: a resume may hold
    a million of these)."""

    result: MatchResult
    scores: array.array[int]
    luck: list[list[float]] | None = None
    faults: list[FaultDict] = field(default_factory=lambda: _NO_FAULTS)

    @classmethod
    def of(cls, result: MatchResult, hands: list[list[int]],
           luck: list[list[float]] | None = None, faults: list[FaultDict] | None = None) -> Kept:
        """Packs ``hands``, every hand's points by seat."""
        return cls(result, array.array("i", [x for hand in hands for x in hand]), luck,
                   faults or _NO_FAULTS)

    @property
    def hands(self) -> list[list[int]]:
        """Every hand's points by seat."""
        n = len(self.result.players)
        return [list(self.scores[i:i + n]) for i in range(0, len(self.scores), n)]


def _hand_scores(record: RecordDict | dict[str, Any]) -> list[list[int]]:
    return [[int(x) for x in hand["scores"]] for hand in record.get("hands", ())]


def _hand_luck(record: RecordDict | dict[str, Any]) -> list[list[float]] | None:
    """Every hand's luck by seat (``None`` when a hand has none: an older record)."""
    hands = record.get("hands", ())
    if not all("luck" in hand for hand in hands):
        return None
    return [[float(x) for x in hand["luck"]] for hand in hands]


class Resumed:
    """The matches an earlier run of this output folder finished, by match id, read back from
    its journal (:meth:`load`); a later line for the same id wins. A line is kept when its
    record was written (its hand scores in the line: the record is synced before the line), or,
    a line of an older ct-referee without them, when its record agrees with it. A sealed
    entrant's snapshot digests are handed to ``seals`` (a resume says when a folder changed)."""

    def __init__(self, folder: OutputFolder, seals: Seals | None = None) -> None:
        self.folder, self.seals = folder, seals
        self.matches: dict[str, Kept] = {}
        self._records: set[str] = set()

    def __len__(self) -> int:
        return len(self.matches)

    def load(self, journal: Journal) -> None:
        """Reads ``journal`` once (dropping the lines not kept, see :meth:`Journal.load`)."""
        self.folder.drop_superseded()  # an older run's games/<id>.json played again since
        self._records = self.folder.records()  # one listing: the cheap check of a line
        journal.load(self.accept, collect=False)
        self._records = set()
        if self.seals is not None:
            self.seals.kept_loaded()

    def accept(self, data: dict[str, Any]) -> bool:
        """Takes one journal line; ``False`` for one not kept."""
        try:
            line = JournalLine.parse(data)
        except ValueError:
            return False
        checked = self._check(line)
        if checked is None:
            return False
        self.matches[line.id], snapshots = checked
        if self.seals is not None:  # its snapshot, once taken, says if the code changed since
            for name, digest in zip(line.result.players, snapshots or (), strict=False):
                self.seals.kept(name, digest)
        return True

    def _check(self, line: JournalLine) -> tuple[Kept, Any] | None:
        """The line as kept, and the snapshot digests by seat, if it is to be kept."""
        if line.scores is not None:  # trusted: its record was written (synced) before the line
            if line.id not in self._records:
                return None
            return Kept.of(line.result, line.scores, line.luck, line.faults), line.snapshots
        try:  # a line of an older ct-referee: its record says the hand scores
            record = read_record(self.folder.saved_record(line.id))
            hands = _hand_scores(record)
            luck = _hand_luck(record)
        except (KeyError, TypeError, ValueError, RecordError):
            return None
        if record.get("id") != line.id or \
                list(record.get("totals", ())) != list(line.result.totals) or \
                not all(len(h) == len(line.result.players) for h in hands):
            return None
        return Kept.of(line.result, hands, luck, line.faults), record.get("snapshots")

    def pop(self, spec: MatchSpec, players: Sequence[str]) -> tuple[Kept | None, bool]:
        """The kept match of ``spec`` if it was played by ``players`` (by seat), and whether a
        kept line for its id was there at all (one that does not fit is dropped)."""
        old = self.matches.pop(spec.id, None)
        if old is not None and list(old.result.players) == list(players):
            return old, True
        return None, old is not None


class RoundsLog:
    """``rounds.jsonl``: each round of a format seeded by the results
    (:attr:`~referee.tournament.formats.Format.seeded_by_results`) as it was planned, its
    groups by entrant name, so that a resume plays it the same even with entrants added since."""

    def __init__(self, journal: Journal, names: Sequence[str]) -> None:
        self.journal, self.names = journal, list(names)
        self.planned: dict[int, list[tuple[int, tuple[int, ...]]]] = {}
        """Per round, its ``(group number, members)`` as planned."""
        self._index = {name: i for i, name in enumerate(self.names)}

    def load(self) -> None:
        """Reads the rounds planned by earlier runs (dropping lines that do not parse)."""
        self.journal.load(self.accept, collect=False)

    def accept(self, line: dict[str, Any]) -> bool:
        """Takes one line; ``False`` for one that does not name a round of these entrants."""
        try:
            r = int(line["round"])
            groups = [(int(g), tuple(self._index[str(n)] for n in members))
                      for g, members in line["groups"]]
        except (KeyError, TypeError, ValueError):
            return False
        self.planned[r] = groups
        return True

    def get(self, round_: int) -> list[tuple[int, tuple[int, ...]]] | None:
        """Round ``round_`` as an earlier run planned it (``None``: not planned yet)."""
        return self.planned.get(round_)

    def add(self, round_: int, specs: Sequence[MatchSpec]) -> None:
        """Logs round ``round_`` as planned now, unless an earlier run did."""
        if round_ in self.planned:
            return
        groups = {s.group: [self.names[i] for i in sorted(s.seats)] for s in specs}
        self.journal.append({"round": round_, "groups": list(groups.items())})

    def close(self) -> None:
        """Closes the file (synced)."""
        self.journal.close()
