"""A bot re-asked against a record: the recorded match played again through
:func:`referee.match.play.play_match`, the other seats played back from the record
(:class:`RecordedPlayer`), the bot's own decisions judged (:class:`Reask`, behind
``ct-referee replay --bot``)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from referee.bots.bot import Answer, Bot, BotError, CancelSignal
from referee.bots.limits import Limits
from referee.bots.process import Launcher
from referee.game.rules import Variant
from referee.match.play import Entrant, Player, play_match
from referee.protocol import narration
from referee.records.record import RecordDict, deal_from_json
from referee.records.replay import Decision, Finding, answer_form, decisions, judge

__all__ = ["Reask", "RecordedPlayer"]


class RecordedPlayer:
    """A seat of a match played back from a record: it answers each request with the decision
    the record holds for it, and ignores what it is told (the match's ``Player``)."""

    def __init__(self, name: str, decisions: Iterable[Decision]) -> None:
        self.name = name
        self._decisions = iter(decisions)

    def next_decision(self) -> Decision:
        """The recorded decision the next request asks for."""
        return next(self._decisions)

    def start(self, startup_ms: float, stop: CancelSignal | None = None) -> str:
        """Nothing to start."""
        return self.name

    def send(self, line: str) -> None:
        """Ignores the line."""

    def request(self, line: str, timeout_ms: float) -> Answer:
        """The recorded decision, as a bot answers it."""
        return Answer(answer_form(self.next_decision().recorded), 0.0)

    def forfeit(self, fault: str) -> None:
        """Never called: a recorded answer is never a fault."""

    def close(self) -> None:
        """Nothing to stop."""


@dataclass(frozen=True)
class _Seated(Entrant):
    """An entrant whose player already exists."""

    player: Player | None = None

    def spawn(self, *, launcher: Launcher, stderr_path: Path | None,
              hidden: Sequence[Path]) -> Player:
        assert self.player is not None
        return self.player


class Reask:
    """Re-plays a recorded match to a bot sitting in ``seat`` and judges each of its decisions.

    The match is played by :func:`referee.match.play.play_match`, the other seats and the bot's own
    decisions played back from the record (:class:`RecordedPlayer`), so the bot is told exactly
    what a match tells a seat; only the ``end`` line is the record's own (its ranks count the
    match's faults, which the replay does not repeat). Iterate for a :class:`Finding` per
    decision asked. The match goes on with the recorded moves whatever the bot answers. A
    timeout or crash stops the bot; the decisions left are counted in :attr:`not_asked`.
    """

    def __init__(self, record: RecordDict, seat: int, bot: Bot, *, move_ms: int = 1000,
                 startup_ms: int = 10_000) -> None:
        self.record = record
        self.seat = seat
        self.bot = bot
        self.move_ms = move_ms
        self.startup_ms = startup_ms
        self.name = ""
        self.stopped = ""
        """Why the bot was stopped early (empty if it lasted the whole match)."""
        self.not_asked = 0

    def start(self) -> str:
        """Starts the bot and returns the name it gave.

        :raises referee.bots.bot.BotError: if it does not start.
        :raises referee.bots.process.BotCommandError: if the command cannot be run.
        """
        self.name = self.bot.start(self.startup_ms)
        return self.name

    def __iter__(self) -> Iterator[Finding]:
        record = self.record
        findings: list[Finding] = []
        entrants = [
            _Seated(name, "-", player=(_ReaskedSeat(self, findings) if s == self.seat else
                                       RecordedPlayer(name, decisions(record, s))))
            for s, name in enumerate(record["players"])]
        try:
            play_match(record["id"], entrants, lambda k: deal_from_json(record["hands"][k - 1]),
                       variant=Variant(record["variant"]), target=record["target"],
                       limits=Limits(startup_ms=self.startup_ms, move_ms=self.move_ms),
                       bot_id=record.get("bot_id", record["id"]))
        finally:
            self.bot.close()
        yield from findings


class _ReaskedSeat(RecordedPlayer):
    """The re-asked bot's seat: tells the bot every line, asks it each decision, judges its
    answer, and answers the match with the record's decision."""

    def __init__(self, reask: Reask, findings: list[Finding]) -> None:
        super().__init__(reask.name, decisions(reask.record, reask.seat))
        self.reask = reask
        self.findings = findings
        record = reask.record
        self.end = narration.end_cue(record["totals"], record["ranks"]).text

    def send(self, line: str) -> None:
        """Tells the bot (the record's ``end`` line for the match's)."""
        if not self.reask.stopped:
            self.reask.bot.send(self.end if line.startswith("end ") else line)

    def request(self, line: str, timeout_ms: float) -> Answer:
        """Asks the bot, judges its answer; answers the match as recorded."""
        reask, d = self.reask, self.next_decision()
        if reask.stopped:
            reask.not_asked += 1
        else:
            try:
                answer = reask.bot.request(line, reask.move_ms)
            except BotError as err:
                reask.stopped = f"{err.fault}: {err.detail}"
                reask.bot.close()
                self.findings.append(Finding(d, None, reask.stopped))
            else:
                self.findings.append(judge(d, answer.line))
        return Answer(answer_form(d.recorded), 0.0)
