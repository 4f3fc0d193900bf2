"""A game record's positions, one after another: the one record replay.

Pure code, no I/O. :func:`positions` re-plays a record under the rules and yields a
:class:`Dealt` as each hand is dealt, a :class:`ReplayedTurn` after each recorded turn (with the
position before it, at its pick if it had one, and after it, and the narration of the turn as
:mod:`referee.protocol.narration` tells it), and a :class:`Scored` as each hand ends;
:func:`hand_positions`
does it for one hand, and :func:`play_turn` applies one recorded turn. The text replay, the HTML
page and the seat lines of :mod:`referee.records.replay` read it, and so does verification.

What the replay reads from a turn goes through a :class:`TurnReader`: the move to play, the target
to pick, and the end of the hand before the recorded scores are read. :data:`RECORDED` takes the
record at its word, so the record must verify (:func:`referee.records.verify.verify_record`); one
that
does not may raise :class:`referee.game.rules.RulesError` (or ``KeyError``, ``TypeError``...)
part-way. :mod:`referee.records.verify` passes its own check, which checks each field before the
replay
uses it and raises to stop the hand at a discrepancy.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple, Protocol

from referee.game.cards import Card
from referee.game.rules import Event, Hand, Move, Variant
from referee.protocol import narration
from referee.records.record import HandDict, RecordDict, TurnDict, deal_from_json


class Dealt(NamedTuple):
    """Hand ``number`` (1-based) dealt: ``hand`` is the position before its first turn (the
    dealer's take, if any, already in its events); ``totals`` the totals before the hand."""

    number: int
    entry: HandDict
    hand: Hand
    totals: list[int]


class ReplayedTurn(NamedTuple):
    """Turn ``turn`` (1-based) of hand ``number`` applied as recorded.

    ``before`` and ``at_pick`` (the position when the turned card had several targets, else
    ``None``) are private copies; ``after`` is the live position, changed by the next turn.
    ``cues`` are the turn's narration, each :class:`referee.protocol.narration.Ask` answered as
    recorded.
    """

    number: int
    turn: int
    record: TurnDict
    seat: int
    before: Hand
    at_pick: Hand | None
    after: Hand
    cues: tuple[narration.Cue, ...]

    @property
    def play(self) -> Event:
        """The event of the card played."""
        return self.after.events[-2]

    @property
    def turned(self) -> Event:
        """The event of the card turned."""
        return self.after.events[-1]


class Scored(NamedTuple):
    """Hand ``number`` ended: its recorded ``scores`` and the ``totals`` after it."""

    number: int
    entry: HandDict
    hand: Hand
    scores: list[int]
    totals: list[int]


Position = Dealt | ReplayedTurn | Scored


def recorded_move(turn: Mapping[str, Any]) -> Move:
    """The move a recorded turn played (the target is the capture, if exactly one)."""
    capture = turn["capture"]
    return Move(Card.parse(turn["play"]), Card.parse(capture[0]) if len(capture) == 1 else None)


class TurnReader(Protocol):
    """How the replay reads a recorded turn: each hook is called before the replay applies what
    it returns, and may raise to stop the replay there."""

    def go(self, hand: Hand, turn: Mapping[str, Any]) -> Move:
        """The move ``turn`` plays on ``hand``, the position before it."""
        ...

    def pick(self, hand: Hand, turn: Mapping[str, Any]) -> Card:
        """The target ``turn`` picks for ``hand.pick_card``, among ``hand.pick_options``."""
        ...

    def end(self, hand: Hand, entry: Mapping[str, Any]) -> None:
        """Called after the last recorded turn of ``entry``, before its scores are read."""
        ...


class Recorded:
    """The :class:`TurnReader` that takes the record at its word."""

    def go(self, hand: Hand, turn: Mapping[str, Any]) -> Move:
        """The recorded move (:func:`recorded_move`)."""
        return recorded_move(turn)

    def pick(self, hand: Hand, turn: Mapping[str, Any]) -> Card:
        """The recorded turn capture."""
        return Card.parse(turn["turn_capture"][0])

    def end(self, hand: Hand, entry: Mapping[str, Any]) -> None:
        """Nothing to check."""


RECORDED = Recorded()


def play_turn(
    hand: Hand, turn: Mapping[str, Any], *, check: TurnReader = RECORDED
) -> tuple[Hand, Hand | None, list[narration.Cue]]:
    """Applies a recorded turn to ``hand``, as ``check`` reads it: returns copies of the
    position before it and at its pick (``None`` without one), and the turn's narration.

    :raises referee.game.rules.IllegalMoveError: if the recorded turn breaks the rules.
    """
    before = hand.copy()
    at_pick: Hand | None = None
    cues: list[narration.Cue] = []
    for cue in narration.turn_cues(hand):
        cues.append(cue)
        if isinstance(cue, narration.Ask):
            if cue.kind == "go":
                hand.play(*check.go(hand, turn))
            else:
                at_pick = hand.copy()
                hand.pick(check.pick(hand, turn))
    return before, at_pick, cues


def hand_positions(
    entry: HandDict, number: int, variant: Variant, totals: list[int], *,
    check: TurnReader = RECORDED,
) -> Iterator[Position]:
    """The positions of hand ``number`` (1-based), ``totals`` being the totals before it: a
    :class:`Dealt`, a :class:`ReplayedTurn` per turn (applied by :func:`play_turn` with ``check``),
    a :class:`Scored`."""
    hand = Hand(deal_from_json(entry), dealer=entry["dealer"], variant=variant)
    yield Dealt(number, entry, hand, totals)
    for t, turn in enumerate(entry["turns"], 1):
        seat = hand.to_move
        before, at_pick, cues = play_turn(hand, turn, check=check)
        yield ReplayedTurn(number, t, turn, seat, before, at_pick, hand, tuple(cues))
    check.end(hand, entry)
    after = [a + b for a, b in zip(totals, entry["scores"], strict=True)]
    yield Scored(number, entry, hand, entry["scores"], after)


def positions(record: RecordDict) -> Iterator[Position]:
    """Every position of the record in order: per hand a :class:`Dealt`, a :class:`ReplayedTurn` per
    turn, a :class:`Scored`."""
    variant = Variant(record["variant"])
    totals = [0] * len(record["players"])
    for k, entry in enumerate(record["hands"], 1):
        for pos in hand_positions(entry, k, variant, totals):
            yield pos
            if isinstance(pos, Scored):
                totals = pos.totals
