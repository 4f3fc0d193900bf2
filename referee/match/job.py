"""One match as plain data: which match of the schedule (:class:`MatchSpec`: its id, its seats and
the deals it plays) and everything needed to play it (:class:`MatchJob`), so that a job can
travel to a worker process or a cluster and be played there.

>>> spec = MatchSpec("r1-g001-s01", 0, 1, 1, 1, (0, 1, 2), "1:1:1", bytes(32))
>>> spec.deal(1) == MatchSpec("r1-g001-s02", 1, 1, 1, 2, (0, 2, 1), "1:1:1", bytes(32)).deal(1)
True
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from referee.bots.bot import CancelSignal
from referee.bots.limits import Limits, SandboxMode
from referee.bots.process import Launcher
from referee.game.rules import Deal, Variant
from referee.match.play import Entrant, Observer, play_match
from referee.records.record import RecordDict, write_record

__all__ = ["Done", "MatchJob", "MatchSpec", "deal_seed", "result_line"]


@dataclass(frozen=True)
class MatchSpec:
    """One match of the schedule: who sits where, and which deals it plays."""

    id: str
    """Sortable id like ``r1-g007-s03``: round, group, seating, zero-padded (groups to at least
    3 digits, seatings to 2, rounds to the width of the last round)."""
    index: int
    """Position in the schedule (0-based): matches are rated in this order."""
    round: int
    """Round, 1-based."""
    group: int
    """Group, 1-based, in :func:`groups` order."""
    seating: int
    """Seating within the group, 1-based."""
    seats: tuple[int, ...]
    """Entrant indices (configuration order) by seat."""
    seed: str
    """Deal label prefix of the group in this round (every seating): ``seed:round:group``."""
    secret: bytes = field(repr=False)
    """The tournament's deal secret: with the label it keys every deal."""

    @property
    def players(self) -> int:
        """Seats at the table."""
        return len(self.seats)

    def deal(self, hand_number: int) -> Deal:
        """The deal of the match's hand ``hand_number`` (1-based): the same in every seating of
        the group, keyed by :attr:`secret` (HMAC-SHA256 of ``seed:round:group:hand``)."""
        return Deal.from_key(self.players, self.secret, deal_seed(self.seed, hand_number))

    @property
    def bot_id(self) -> str:
        """The id the bots are told: 12 hex digits of HMAC-SHA256(:attr:`secret`, ``id:<id>``),
        which say nothing of the round, group, seating or seed without the secret, and are the
        same when the match is played again (resumed) with the same secret."""
        return hmac.new(self.secret, f"id:{self.id}".encode(), hashlib.sha256).hexdigest()[:12]

    @property
    def deals_key(self) -> tuple[int, int]:
        """Round and group: matches with the same key play the same deals."""
        return (self.round, self.group)


def deal_seed(prefix: str, hand_number: int) -> str:
    """The label of one hand's deal: ``<seed>:<round>:<group>:<hand>``."""
    return f"{prefix}:{hand_number}"


def result_line(record: RecordDict) -> dict[str, Any]:
    """The small summary of a finished match that travels back to the coordinator and becomes
    its ``results.jsonl`` line: id, players by seat, totals, ranks, faults, the number of hands
    and each hand's scores and luck of the stock flips (so that ratings, evidence and a resume
    need no record)."""
    line = {"id": record["id"], "players": list(record["players"]),
            "totals": list(record["totals"]), "ranks": list(record["ranks"]),
            "faults": list(record["faults"]), "hands": len(record["hands"]),
            "scores": [[int(x) for x in hand["scores"]] for hand in record["hands"]]}
    if all("luck" in hand for hand in record["hands"]):
        line["luck"] = [list(hand["luck"]) for hand in record["hands"]]
    return line


@dataclass(frozen=True)
class Done:
    """What a finished match hands back to the coordinator: its :func:`result_line`. The record
    itself is on disk (:attr:`MatchJob.record_path`), never held in memory once written (a long
    tournament's memory does not grow with its records); a cluster worker that does not share
    the output folder sends its record back in its own report
    (:class:`~referee.runners.cluster.WorkerReport`), and the coordinator writes it."""

    line: dict[str, Any]


@dataclass(frozen=True)
class MatchJob:
    """Everything needed to play one match of the schedule (plain data: a job can travel)."""

    spec: MatchSpec
    entrants: tuple[Entrant, ...]
    """By seat."""
    variant: Variant
    target: int
    limits: Limits
    sandbox: SandboxMode
    """``bwrap`` or ``none``, already resolved; for a remote runner (one with ``remote``
    true: :class:`~referee.runners.cluster.ClusterRunner`), the configured mode, resolved where the
    bots are spawned."""
    tournament: str
    logs_dir: Path | None = None
    hidden: tuple[Path, ...] = ()
    record_path: Path | None = None
    """Where the record is written by whoever plays the match (a worker process shares the
    output folder); ``None`` only for jobs of tests that look at the result line alone: the
    record is then kept nowhere."""
    shared: tuple[Path, str] | None = None
    """A file of the output folder and the text it holds: a worker that reads the same there
    shares the folder (a cluster's shared file system) and writes the record and the logs into
    it itself."""
    snapshots: tuple[str | None, ...] | None = None
    """By seat, the digest of the entrant's sealed snapshot its bot ran from: written into the
    record (``snapshots``) and the result line where the match ran."""

    def play(self, stop: CancelSignal | None = None,
             observer: Observer | None = None) -> RecordDict:
        """Plays the match with fresh bot processes and returns its record.

        :raises referee.match.play.MatchAborted: if ``stop`` was set.
        :raises referee.bots.process.BotCommandError: if a bot command cannot be started (or
            the sandbox does not work here).
        """
        launcher = Launcher.resolve(self.sandbox, self.limits)  # once for the match's bots
        return play_match(self.spec.id, self.entrants, self.spec.deal, variant=self.variant,
                          target=self.target, limits=self.limits, launcher=launcher,
                          tournament=self.tournament, logs_dir=self.logs_dir, hidden=self.hidden,
                          observer=observer, stop=stop, bot_id=self.spec.bot_id,
                          fallback_key=self.spec.secret)

    def run(self, stop: CancelSignal | None = None, observer: Observer | None = None) -> Done:
        """Plays the match (:meth:`play`) and :meth:`finish` es it."""
        return self.finish(self.play(stop, observer))

    def finish(self, record: RecordDict) -> Done:
        """Writes ``record`` to :attr:`record_path` (atomically, synced) when set, and returns
        what goes back to the coordinator: the result line."""
        line = result_line(record)
        if self.snapshots is not None:
            record["snapshots"] = list(self.snapshots)
            line["snapshots"] = list(self.snapshots)
        if self.record_path is not None:
            write_record(record, self.record_path)
        return Done(line)
