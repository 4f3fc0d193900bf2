"""The one record replay: positions hand by hand, and the TurnReader that reads each turn."""

from __future__ import annotations

from collections.abc import Mapping
from itertools import islice
from typing import Any

import pytest

from conftest import DATA
from referee.game.cards import Card
from referee.game.rules import Hand, Move, Variant
from referee.records.positions import (
    Dealt,
    Position,
    Recorded,
    ReplayedTurn,
    Scored,
    hand_positions,
    positions,
)
from referee.records.record import RecordDict, read_record

RECORDS = sorted(DATA.glob("*.json"))


def where(pos: Position) -> tuple[str, int, int | None]:
    return type(pos).__name__, pos.number, pos.turn if isinstance(pos, ReplayedTurn) else None


class Logged(Recorded):
    """The record's own reading, logging each hook as (hook, turns completed, pick pending)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, int, bool]] = []

    def go(self, hand: Hand, turn: Mapping[str, Any]) -> Move:
        self.calls.append(("go", hand.turn, hand.pick_card is not None))
        return super().go(hand, turn)

    def pick(self, hand: Hand, turn: Mapping[str, Any]) -> Card:
        self.calls.append(("pick", hand.turn, hand.pick_card is not None))
        return super().pick(hand, turn)

    def end(self, hand: Hand, entry: Mapping[str, Any]) -> None:
        self.calls.append(("end", hand.turn, hand.pick_card is not None))


@pytest.mark.parametrize("path", RECORDS, ids=[p.name for p in RECORDS])
def test_positions_are_the_hands_positions_in_a_row(path: Any) -> None:
    record: RecordDict = read_record(path)
    variant = Variant(record["variant"])
    totals = [0] * len(record["players"])
    expected: list[tuple[str, int, int | None]] = []
    for k, entry in enumerate(record["hands"], 1):
        steps = list(hand_positions(entry, k, variant, totals))
        assert isinstance(steps[0], Dealt) and steps[0].totals == totals
        assert isinstance(steps[-1], Scored)
        totals = steps[-1].totals
        expected += map(where, steps)
    assert [where(p) for p in positions(record)] == expected
    assert totals == record["totals"]


def test_the_check_is_asked_before_each_move_each_pick_and_the_end() -> None:
    picks = 0
    for path in RECORDS:
        record = read_record(path)
        totals = [0] * len(record["players"])
        for k, entry in enumerate(record["hands"], 1):
            check = Logged()
            steps = list(hand_positions(entry, k, Variant(record["variant"]), totals, check=check))
            played = [s for s in steps if isinstance(s, ReplayedTurn)]
            expected: list[tuple[str, int, bool]] = []
            for s in played:
                expected.append(("go", s.turn - 1, False))
                if s.at_pick is not None:
                    expected.append(("pick", s.turn - 1, True))
                    picks += 1
            expected.append(("end", len(played), False))
            assert check.calls == expected
    assert picks  # the fixtures have picks to ask about


def test_the_replay_plays_the_move_the_check_gives() -> None:
    entry = read_record(DATA / "golden.json")["hands"][0]
    recorded = entry["turns"][0]["play"]

    class Other(Recorded):
        def go(self, hand: Hand, turn: Mapping[str, Any]) -> Move:
            return next(m for m in hand.legal_moves() if str(m.card) != recorded)

    steps = hand_positions(entry, 1, Variant.CLASSIC, [0, 0, 0], check=Other())
    first = list(islice(steps, 2))[1]  # the record's later turns need not fit the new move
    assert isinstance(first, ReplayedTurn)
    assert first.play.card is not None and str(first.play.card) != recorded


def test_a_check_that_raises_stops_the_replay_there() -> None:
    entry = read_record(DATA / "golden.json")["hands"][0]

    class Stop(Exception):
        pass

    class StopAtFive(Recorded):
        def go(self, hand: Hand, turn: Mapping[str, Any]) -> Move:
            if hand.turn == 4:
                raise Stop
            return super().go(hand, turn)

    steps = hand_positions(entry, 1, Variant.CLASSIC, [0, 0, 0], check=StopAtFive())
    seen: list[Position] = []
    # go raised before turn 5 was applied: the hand, live in the last ReplayedTurn, is at turn 4
    with pytest.raises(Stop):
        for step in steps:
            seen.append(step)
    played = [("ReplayedTurn", 1, t) for t in range(1, 5)]
    assert [where(s) for s in seen] == [("Dealt", 1, None), *played]
    last = seen[-1]
    assert isinstance(last, ReplayedTurn) and last.after.turn == 4
