"""A game record's positions, one after another: the one record replay.

Pure code, no I/O. :func:`positions` re-plays a record under the rules and yields a
:class:`Dealt` as each hand is dealt, a :class:`Played` after each recorded turn (with the
position before it, at its pick if it had one, and after it, and the narration of the turn as
:mod:`referee.narration` tells it), and a :class:`Scored` as each hand ends. The text replay,
the HTML page and the seat lines of :mod:`referee.replay` read it.

The record must verify (:func:`referee.verify.verify_record`); one that does not may raise
:class:`referee.rules.RulesError` (or ``KeyError``, ``TypeError``...) part-way. Verification
itself reports discrepancies rather than raise, and so does its own careful re-play.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

from referee import narration
from referee.cards import Card
from referee.record import HandDict, RecordDict, TurnDict, deal_from_json
from referee.rules import Event, Hand, Move, Variant


class Dealt(NamedTuple):
    """Hand ``number`` (1-based) dealt: ``hand`` is the position before its first turn (the
    dealer's take, if any, already in its events); ``totals`` the totals before the hand."""

    number: int
    entry: HandDict
    hand: Hand
    totals: list[int]


class Played(NamedTuple):
    """Turn ``turn`` (1-based) of hand ``number`` applied as recorded.

    ``before`` and ``at_pick`` (the position when the turned card had several targets, else
    ``None``) are private copies; ``after`` is the live position, changed by the next turn.
    ``cues`` are the turn's narration, each :class:`referee.narration.Ask` answered as recorded.
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


Position = Dealt | Played | Scored


def recorded_move(turn: Mapping[str, Any]) -> Move:
    """The move a recorded turn played (the target is the capture, if exactly one)."""
    capture = turn["capture"]
    return Move(Card.parse(turn["play"]), Card.parse(capture[0]) if len(capture) == 1 else None)


def play_turn(hand: Hand, turn: Mapping[str, Any]) -> tuple[Hand, Hand | None, list[narration.Cue]]:
    """Applies a recorded turn to ``hand``: returns copies of the position before it and at its
    pick (``None`` without one), and the turn's narration.

    :raises referee.rules.IllegalMoveError: if the recorded turn breaks the rules.
    """
    before = hand.copy()
    at_pick: Hand | None = None
    cues: list[narration.Cue] = []
    for cue in narration.turn_cues(hand):
        cues.append(cue)
        if isinstance(cue, narration.Ask):
            if cue.kind == "go":
                hand.play(*recorded_move(turn))
            else:
                at_pick = hand.copy()
                hand.pick(Card.parse(turn["turn_capture"][0]))
    return before, at_pick, cues


def positions(record: RecordDict) -> Iterator[Position]:
    """Every position of the record in order: per hand a :class:`Dealt`, a :class:`Played` per
    turn, a :class:`Scored`."""
    variant = Variant(record["variant"])
    totals = [0] * len(record["players"])
    for k, entry in enumerate(record["hands"], 1):
        hand = Hand(deal_from_json(entry), dealer=entry["dealer"], variant=variant)
        yield Dealt(k, entry, hand, totals)
        for t, turn in enumerate(entry["turns"], 1):
            seat = hand.to_move
            before, at_pick, cues = play_turn(hand, turn)
            yield Played(k, t, turn, seat, before, at_pick, hand, tuple(cues))
        totals = [a + b for a, b in zip(totals, entry["scores"], strict=True)]
        yield Scored(k, entry, hand, entry["scores"], totals)
