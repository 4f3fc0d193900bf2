"""The observation and action encoding (:mod:`referee.game.encoding`), without numpy: actions map
one-to-one onto the engine's legal decisions, and the observation depends on nothing a seat may
not see."""

from __future__ import annotations

import random

import pytest

from referee.game import encoding
from referee.game.cards import DECK, Card, parse_cards
from referee.game.rules import Deal, Hand, Move, Variant


def random_positions(seed: int, players: int, variant: Variant = Variant.CLASSIC):
    """Every decision of one random hand: (hand, seat to decide)."""
    rng = random.Random(seed)
    hand = Hand(Deal.random(players, rng), dealer=seed % players, variant=variant)
    while not hand.is_over():
        yield hand
        if hand.pick_card is not None:
            hand.pick(rng.choice(hand.pick_options))
        else:
            hand.play(*rng.choice(hand.legal_moves()))


@pytest.mark.parametrize("players", [2, 3, 4])
def test_actions_are_exactly_the_engines_legal_decisions(players: int) -> None:
    for seed in range(30):
        for hand in random_positions(seed, players):
            view = hand.view(hand.to_move)
            legal = encoding.legal_actions(view)
            assert len(set(legal)) == len(legal)
            assert all(0 <= a < encoding.ACTIONS for a in legal)
            if hand.pick_card is not None:
                assert sorted(encoding.decode(a, view) for a in legal) == sorted(hand.pick_options)
                assert all(a >= encoding.PICK_BASE for a in legal)
            else:
                assert [encoding.decode(a, view) for a in legal] == hand.legal_moves()
                assert legal == encoding.move_actions(hand.legal_moves())
                assert all(a < encoding.GO_ACTIONS for a in legal)
            others = [hand.view(s) for s in range(players) if s != hand.to_move]
            assert all(encoding.legal_actions(v) == [] for v in others)


def test_decode_refuses_an_action_that_is_not_legal() -> None:
    hand = Hand(Deal.from_seed(3, "x"), dealer=0)
    view = hand.view(hand.to_move)
    bad = next(a for a in range(encoding.ACTIONS) if a not in encoding.legal_actions(view))
    with pytest.raises(encoding.ActionError, match=f"action {bad} is not legal"):
        encoding.decode(bad, view)


def test_a_sweep_is_slot_zero_and_a_named_target_its_suit_slot() -> None:
    layout = parse_cards("Kd Kh Ks 3c")
    mine = parse_cards("Kc 7d 7h 2c 4c 5c 6c 8c")
    rest = [c for c in DECK if c not in layout and c not in mine]
    deal = Deal.from_cards([rest[:8], mine, rest[8:16]], layout, rest[16:])
    hand = Hand(deal, dealer=0)
    view = hand.view(1)
    legal = encoding.legal_actions(view)
    king, seven = Card.parse("Kc"), Card.parse("7d")
    assert king * 5 in legal and encoding.decode(king * 5, view) == Move(king, None)
    assert seven * 5 + 1 + 0 in legal  # 7d takes the 3 of clubs (suit 0)
    assert encoding.decode(seven * 5 + 1, view) == Move(seven, Card.parse("3c"))
    assert seven * 5 not in legal  # a capturing card cannot be thrown


@pytest.mark.parametrize("players", [2, 3, 4])
def test_the_observation_depends_only_on_what_the_seat_sees(players: int) -> None:
    """Two deals that differ only in cards the seat cannot see (the others' hands and the stock
    order) give the same observation at the start, and after the same public play."""
    rng = random.Random(players)
    for _ in range(20):
        deal = Deal.random(players, rng)
        hidden = [c for s in range(1, players) for c in deal.hands[s]] + list(deal.stock)
        rng.shuffle(hidden)
        size = 24 // players
        hands = [deal.hands[0]] + [tuple(hidden[i * size:(i + 1) * size])
                                   for i in range(players - 1)]
        other = Deal(tuple(hands), deal.layout, tuple(hidden[(players - 1) * size:]))
        a, b = Hand(deal, dealer=players - 1), Hand(other, dealer=players - 1)
        assert encoding.dense(a.view(0)) == encoding.dense(b.view(0))
        assert encoding.mask_list(a.view(0)) == encoding.mask_list(b.view(0))


def test_layout_of_the_observation() -> None:
    deal = Deal.from_seed(3, "layout")
    hand = Hand(deal, dealer=2, variant=Variant.RED_FROG)
    view = hand.view(0)
    obs = encoding.dense(view, totals=(500, 250, 1500), target=1000)
    assert len(obs) == encoding.OBS_SIZE
    assert [c for c in range(52) if obs[encoding.HAND + c]] == sorted(view.hand)
    assert [c for c in range(52) if obs[encoding.TABLE + c]] == sorted(view.table)
    unseen = {c for s in (1, 2) for c in deal.hands[s]} | set(deal.stock)
    assert {c for c in range(52) if obs[encoding.UNSEEN + c]} == unseen
    assert obs[encoding.STOCK] == 1.0 and obs[encoding.PICKING] == 0.0
    assert obs[encoding.HELD:encoding.HELD + 4] == [8 / 12] * 3 + [0.0]
    assert obs[encoding.DEALER:encoding.DEALER + 4] == [0.0, 0.0, 1.0, 0.0]  # seat +2 deals
    assert obs[encoding.PLAYERS:encoding.PLAYERS + 3] == [0.0, 1.0, 0.0]
    assert obs[encoding.RED_FROG] == 1.0
    assert obs[encoding.TOTALS:encoding.TOTALS + 4] == [0.5, 0.25, 1.0, 0.0]
    assert all(0.0 <= x <= 1.0 for x in obs)
    seat1 = encoding.dense(hand.view(1), totals=(500, 250, 1500), target=1000)
    assert seat1[encoding.TOTALS:encoding.TOTALS + 4] == [0.25, 1.0, 0.5, 0.0]  # relative seats
    assert seat1[encoding.DEALER:encoding.DEALER + 4] == [0.0, 1.0, 0.0, 0.0]


def test_captures_points_and_played_cards_are_relative_to_the_seat() -> None:
    hand = Hand(Deal.from_seed(3, "relative"), dealer=0)
    rng = random.Random(5)
    for _ in range(9):
        if hand.pick_card is not None:
            hand.pick(hand.pick_options[0])
        else:
            hand.play(*rng.choice(hand.legal_moves()))
    pts = hand.variant.points
    for seat in range(3):
        obs = encoding.dense(hand.view(seat))
        for k in range(3):
            pile = hand.captured[(seat + k) % 3]
            base = encoding.CAPTURED + 52 * k
            assert {c for c in range(52) if obs[base + c]} == set(pile)
            assert obs[encoding.POINTS + k] == pytest.approx(sum(pts[c] for c in pile) / 240)
        played = {e.card for e in hand.events if e.card is not None}
        assert {c for c in range(52) if obs[encoding.PLAYED + c]} == played


def test_a_pick_sets_the_pick_plane_for_the_picker_only() -> None:
    for seed in range(200):
        for hand in random_positions(seed, 3):
            if hand.pick_card is None:
                continue
            mine = encoding.dense(hand.view(hand.to_move))
            assert mine[encoding.PICKING] == 1.0 and mine[encoding.PICK_CARD + hand.pick_card]
            other = encoding.dense(hand.view((hand.to_move + 1) % 3))
            assert other[encoding.PICKING] == 0.0
            assert not any(other[encoding.PICK_CARD:encoding.PICK_CARD + 52])
            return
    pytest.fail("no pick in 200 random hands")


def test_answer_text_is_the_protocol_answer() -> None:
    move = Move(Card.parse("7c"), Card.parse("3h"))
    assert encoding.move_action(move) == Card.parse("7c") * 5 + 1 + 2
    hand = Hand(Deal.from_seed(3, "x"), dealer=0)
    view = hand.view(hand.to_move)
    for a in encoding.legal_actions(view):
        assert encoding.answer_text(a, view) == str(encoding.decode(a, view))


@pytest.mark.parametrize("players", [2, 3, 4])
def test_held_counts_and_stock_follow_the_hand(players: int) -> None:
    for seed in range(10):
        for hand in random_positions(seed, players):
            for seat in range(players):
                obs = encoding.dense(hand.view(seat))
                held = [len(hand.hands[(seat + k) % players]) / 12 for k in range(players)]
                assert obs[encoding.HELD:encoding.HELD + players] == pytest.approx(held)
                assert obs[encoding.STOCK] == pytest.approx(len(hand.stock) / 24)
