"""One match as plain data: which match of the schedule (:class:`MatchSpec`: its id, its seats and
the deals it plays) and everything needed to play it (:class:`MatchJob`), so that a job can
travel to a worker process or a cluster and be played there.

>>> spec = MatchSpec("r1-g001-s01", 0, 1, 1, 1, (0, 1, 2), "1:1:1", bytes(32))
>>> spec.deal(1) == MatchSpec("r1-g001-s02", 1, 1, 1, 2, (0, 2, 1), "1:1:1", bytes(32)).deal(1)
True

A job that travels to a machine not trusted with the tournament's deal secret (a cluster
worker) is :meth:`MatchJob.sealed` first: its spec keeps no secret, and it carries instead what
the secret gives this one match (:class:`MatchKeys`): its deals, every one it can need (a hand's
points are fixed, so a match's hands are bounded: :func:`max_hands`), the id its bots are told
and the key of its fallback's choices.

>>> from referee.bots.limits import Limits
>>> job = MatchJob(spec, (), Variant.CLASSIC, 1000, Limits(), "none", "t").sealed()
>>> job.spec.secret, len(job.keys.deals), job.keys.deals[0] == spec.deal(1)
(b'', 13, True)
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, cast

from referee.bots.bot import CancelSignal
from referee.bots.limits import Limits, SandboxMode
from referee.bots.process import Launcher
from referee.game.rules import Variant
from referee.match.play import Entrant, Observer, play_match
from referee.match.spec import DealSecret, MatchKeys, MatchSpec, deal_seed, max_hands
from referee.protocol.escape import escape_controls
from referee.records.record import RecordDict, deal_to_json, write_record
from referee.records.verify import first_discrepancy

__all__ = ["DealSecret", "Done", "MatchJob", "MatchKeys", "MatchSpec", "deal_seed", "max_hands",
           "result_line"]


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
    """A file of the output folder and the text it holds (a :meth:`sealed` job: its SHA-256
    digest, ``sha256:<hex>``): a worker that reads the same there shares the folder (a
    cluster's shared file system) and writes the record and the logs into it itself."""
    snapshots: tuple[str | None, ...] | None = None
    """By seat, the digest of the entrant's sealed snapshot its bot ran from: written into the
    record (``snapshots``) and the result line where the match ran."""
    keys: MatchKeys | None = None
    """What the deal secret gives this match, in a :meth:`sealed` job (its spec holds no
    secret); ``None``: the spec's secret gives them where the match is played."""
    after: Callable[[RecordDict], None] | None = None
    """Called with the record once it is written, where the match ran (a picklable callable
    of a layer above, known here only as a call: the tournament report's replay page,
    :class:`referee.web.replay_html.ReplayPage`, rendered by the worker that played the match
    rather than by the coordinator after the last one); what it raises is ignored, the
    record counts. Never on a :meth:`sealed` job's untrusted machine."""

    def sealed(self) -> MatchJob:
        """This job without the deal secret, for a machine not trusted with it: the spec's
        secret emptied, the match's :class:`MatchKeys` in its place, and the :attr:`shared`
        file's text (the secret's own file) as its SHA-256 digest (``sha256:<hex>``)."""
        if self.after is not None:
            return replace(self, after=None).sealed()
        if self.keys is not None:
            return self
        shared = self.shared
        if shared is not None and not shared[1].startswith("sha256:"):
            shared = (shared[0], "sha256:" + hashlib.sha256(shared[1].encode()).hexdigest())
        return replace(self, spec=replace(self.spec, secret=b""), shared=shared,
                       keys=MatchKeys.of(self.spec, self.variant, self.target))

    def refusal(self, record: Any, line: Any = None) -> str | None:
        """Why ``record``, sent back by a machine that played this job (and the result
        ``line`` it claims for it, where it sent one), is not a play of this match, in a few
        words; ``None`` when it is. Checked where the deal secret is: the record's id, bot id,
        tournament, variant, target and players are this job's, each hand's deal is the one the
        secret gives (:meth:`MatchSpec.deal`), every turn, score, total and rank follows the
        rules (:func:`~referee.records.verify.verify_record`), the snapshots are the job's, and
        the line is the record's :func:`result_line`. What it cannot check: that the moves
        were the bots' own and the faults theirs (the record is its referee's word)."""
        if not isinstance(record, dict):
            return f"a record is a JSON object, not {type(record).__name__}"
        spec = self.spec
        expected: dict[str, Any] = {
            "id": spec.id, "bot_id": spec.bot_id, "tournament": self.tournament,
            "variant": self.variant.value, "target": self.target,
            "players": [e.name for e in self.entrants]}
        for key, value in expected.items():
            if record.get(key) != value:
                return f"its {key} is {quote(record.get(key))}, not {quote(value)}"
        hands = record.get("hands")
        if not isinstance(hands, list):
            return "it has no hands"
        most = max_hands(spec.players, self.variant, self.target)
        if len(hands) > most:
            return f"it has {len(hands)} hands, more than the {most} this match can last"
        for k, hand in enumerate(hands, 1):
            dealt = deal_to_json(spec.deal(k), (k - 1) % spec.players)
            if not isinstance(hand, dict) or any(hand.get(key) != dealt[key]
                                                 for key in ("hands", "layout", "stock")):
                return f"hand {k} is not the deal of hand {k} of this match"
        found = first_discrepancy(record)
        if found is not None:
            return f"it breaks the rules: {found}"[:300]
        if self.snapshots is not None and record.get("snapshots", list(self.snapshots)) \
                != list(self.snapshots):
            return "its snapshots are not the entrants' own"
        if line is not None:
            claimed = result_line(cast(RecordDict, record))
            if self.snapshots is not None:
                claimed["snapshots"] = list(self.snapshots)
            if line != claimed:
                return (f"the result it claims ({_summary(line)}) is not its record's "
                        f"({_summary(claimed)})")
        return None

    def play(self, stop: CancelSignal | None = None,
             observer: Observer | None = None) -> RecordDict:
        """Plays the match with fresh bot processes and returns its record.

        :raises referee.match.play.MatchAborted: if ``stop`` was set.
        :raises referee.bots.process.BotCommandError: if a bot command cannot be started (or
            the sandbox does not work here).
        """
        launcher = Launcher.resolve(self.sandbox, self.limits)  # once for the match's bots
        keys = self.keys
        deals, bot_id, fallback_key = (self.spec.deal, self.spec.bot_id, self.spec.fallback_key) \
            if keys is None else (keys.deal, keys.bot_id, keys.fallback_key)
        return play_match(self.spec.id, self.entrants, deals, variant=self.variant,
                          target=self.target, limits=self.limits, launcher=launcher,
                          tournament=self.tournament, logs_dir=self.logs_dir, hidden=self.hidden,
                          observer=observer, stop=stop, bot_id=bot_id,
                          fallback_key=fallback_key)

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
            if self.after is not None:
                with contextlib.suppress(Exception):  # a view: never the match's failure
                    self.after(record)
        return Done(line)


def quote(value: Any) -> str:
    """A value of a record for a one-line message, cut."""
    text = escape_controls(repr(value))
    return text if len(text) <= 60 else text[:57] + "..."


def _summary(line: Any) -> str:
    """A result line's totals and ranks, for a one-line message."""
    if not isinstance(line, dict):
        return quote(line)
    return f"totals {quote(line.get('totals'))}, ranks {quote(line.get('ranks'))}"
