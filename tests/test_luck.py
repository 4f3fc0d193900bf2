"""The luck of the stock flips: its value on a hand worked by hand, mean 0 whatever the bots do,
less variance in the adjusted points, recorded by the referee and re-checked by verify."""

from __future__ import annotations

import copy
import random
import statistics
from typing import Any

import pytest

from conftest import DATA
from referee.game.cards import Card
from referee.game.rules import Deal, Hand, Variant
from referee.records.luck import hand_luck, record_luck
from referee.records.record import deal_to_json, read_record
from referee.records.verify import verify_record


def test_a_hand_worked_by_hand() -> None:
    entry = {"dealer": 0, "hands": [["Ad"], ["9c"]], "layout": ["5h", "Kc"],
             "stock": ["5d", "2c"], "turns": [
                 # 9c captures nothing; 5d would take 5h (10 points), 2c nothing: luck +5
                 {"seat": 1, "play": "9c", "capture": [], "turn": "5d", "turn_capture": ["5h"]},
                 # one card left in the stock: no luck
                 {"seat": 0, "play": "Ad", "capture": ["9c"], "turn": "2c", "turn_capture": []}]}
    assert hand_luck(entry, 2, Variant.CLASSIC) == [0.0, 5.0]
    assert hand_luck(entry, 2, Variant.RED_FROG) == [0.0, 0.0]  # red cards score nothing there
    # A forged entry with more turns than stock cards is a ValueError, as documented.
    forged = {**entry, "stock": ["5d"]}
    with pytest.raises(ValueError, match="more turns than stock cards"):
        hand_luck(forged, 2, Variant.CLASSIC)


def _play(players: int, rng: random.Random, greedy: bool) -> dict[str, Any]:
    """One hand by random (or greedy-ish) seats, as a record's hand entry."""
    deal = Deal.random(players, rng)
    hand = Hand(deal, dealer=rng.randrange(players))
    entry: dict[str, Any] = dict(deal_to_json(deal, hand.dealer))
    pts = Variant.CLASSIC.points
    while not hand.is_over():
        seat = hand.to_move
        moves = hand.legal_moves()
        move = max(moves, key=lambda m: pts[m.card] + (pts[m.target] if m.target else 0)) \
            if greedy else rng.choice(moves)
        before = len(hand.events)
        hand.play(*move)
        if hand.pick_card is not None:
            hand.pick(rng.choice(hand.pick_options))
        play, turn = hand.events[before], hand.events[before + 1]
        entry["turns"].append({"seat": seat, "play": str(Card(play.card)),
                               "capture": [str(Card(c)) for c in play.captured],
                               "turn": str(Card(turn.card)),
                               "turn_capture": [str(Card(c)) for c in turn.captured]})
    entry["scores"] = hand.scores()
    return entry


@pytest.mark.parametrize("players, greedy", [(2, False), (3, True), (4, False)])
def test_the_luck_has_mean_zero_and_goes_with_the_points(players: int, greedy: bool) -> None:
    """Over 300 fixed hands the mean luck per seat is within 4 standard errors of 0, and it
    goes with the points (what makes it worth subtracting in duplicate sets, where the luck of
    the dealt cards is gone: bench/stopping.py --real measures that)."""
    rng = random.Random(f"luck:{players}")
    luck: list[float] = []
    points: list[float] = []
    for _ in range(300):
        entry = _play(players, rng, greedy)
        luck += hand_luck(entry, players, Variant.CLASSIC)
        points += entry["scores"]
    se = statistics.stdev(luck) / len(luck) ** 0.5
    assert abs(statistics.fmean(luck)) < 4 * se
    assert statistics.correlation(points, luck) > 0.2


def test_verify_recomputes_the_recorded_luck() -> None:
    record = copy.deepcopy(dict(read_record(DATA / "golden.json")))
    for entry, luck in zip(record["hands"], record_luck(record), strict=True):
        entry["luck"] = luck
    assert verify_record(record) == []
    record["hands"][1]["luck"][0] += 1.0
    found = verify_record(record)
    assert [(d.hand, d.what) for d in found] == [(2, "luck")]
    record["hands"][1]["luck"] = "lucky"
    assert [(d.hand, d.what) for d in verify_record(record)] == [(2, "luck")]
