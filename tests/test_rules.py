"""The rules engine, one test per rule and special case, on hand-built deals."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Sequence

import pytest

from referee.game.cards import DECK, Card, card, parse_cards
from referee.game.rules import (
    TURNS_PER_HAND,
    Deal,
    DealError,
    Event,
    Hand,
    IllegalMoveError,
    Match,
    Move,
    RulesError,
    SeatView,
    Variant,
    legal_moves_on,
    rank,
    targets_on,
)

# Helpers.


def make_deal(
    hands: Sequence[str] = (), layout: str = "", stock: str = "", *, players: int = 3
) -> Deal:
    """A full, valid deal that starts with the given cards.

    ``hands`` holds the first cards of each seat's hand, ``layout`` the first layout cards and
    ``stock`` the first cards to be turned, in turn order. Everything else is filled with the
    unused cards of the deck in index order, so each test states only the cards it cares about.
    """
    given_hands = [parse_cards(h) for h in hands]
    given_hands += [[] for _ in range(players - len(given_hands))]
    given_layout = parse_cards(layout)
    given_stock = parse_cards(stock)
    given = [c for h in given_hands for c in h] + given_layout + given_stock
    assert len(set(given)) == len(given), "a test card is given twice"
    rest = iter([c for c in DECK if c not in set(given)])
    size = TURNS_PER_HAND // players
    full_hands = [h + [next(rest) for _ in range(size - len(h))] for h in given_hands]
    full_layout = given_layout + [next(rest) for _ in range(4 - len(given_layout))]
    full_stock = given_stock + list(rest)
    return Deal.from_cards(full_hands, full_layout, full_stock)


def cs(text: str) -> tuple[Card, ...]:
    """Cards from space-separated text, as a tuple."""
    return tuple(parse_cards(text))


def play_out(hand: Hand, rng: random.Random) -> list[int]:
    """Plays the hand to its end with random legal choices; returns the seat of each turn."""
    seats: list[int] = []
    while not hand.is_over():
        assert hand.pick_card is None
        seats.append(hand.to_move)
        hand.play(*rng.choice(hand.legal_moves()))
        if hand.pick_card is not None:
            hand.pick(rng.choice(hand.pick_options))
    return seats


def play_first(hand: Hand) -> None:
    """Plays the hand to its end, always taking the first legal move and the first pick option."""
    while not hand.is_over():
        if hand.pick_card is not None:
            hand.pick(hand.pick_options[0])
        else:
            hand.play(*hand.legal_moves()[0])


def state(hand: Hand) -> tuple[object, ...]:
    """Everything that changes while a hand is played."""
    return (
        [list(h) for h in hand.hands], list(hand.table), list(hand.stock),
        [list(p) for p in hand.captured], list(hand.events), hand.turn, hand.to_move,
        hand.pick_card, hand.pick_options,
    )


# Capturing.

PAIRS = [("Ah", "9c"), ("9h", "Ac"), ("2h", "8c"), ("8d", "2s"), ("3h", "7c"), ("7h", "3c"),
         ("4h", "6c"), ("6h", "4c"), ("5h", "5c")]


@pytest.mark.parametrize(("mine", "theirs"), PAIRS)
def test_cards_adding_to_ten_capture(mine: str, theirs: str) -> None:
    hand = Hand(make_deal(hands=["", mine], layout=f"{theirs} Kc Qd Jh", stock="Ts"), dealer=0)
    assert hand.to_move == 1
    assert hand.targets(card(mine)) == cs(theirs)
    event = hand.play(card(mine))
    assert event == Event("play", 1, card(mine), cs(theirs))
    assert hand.captured[1][:2] == [card(mine), card(theirs)]
    assert card(theirs) not in hand.table
    assert card(mine) not in hand.table
    assert card(mine) not in hand.hands[1]


def test_capture_relation_is_exactly_sum_ten_or_same_face_rank() -> None:
    ranks = "A23456789TJQK"
    for mine in ranks:
        for theirs in ranks:
            hand = Hand(make_deal(hands=["", mine + "h"], layout=theirs + "c"), dealer=0)
            values = {r: i + 1 for i, r in enumerate(ranks[:9])}
            sums_to_ten = values.get(mine, 99) + values.get(theirs, 99) == 10
            should = sums_to_ten or (mine == theirs and mine in "TJQK")
            assert (card(theirs + "c") in hand.targets(card(mine + "h"))) is should, (mine, theirs)


@pytest.mark.parametrize("face", ["T", "J", "Q", "K"])
def test_ten_and_pictures_capture_only_their_own_rank(face: str) -> None:
    others = [r for r in "TJQK" if r != face]
    layout = " ".join(r + "c" for r in others) + f" {face}d"
    hand = Hand(make_deal(hands=["", face + "h"], layout=layout, stock="2s"), dealer=0)
    assert hand.targets(card(face + "h")) == cs(face + "d")
    hand.play(card(face + "h"))
    assert hand.captured[1] == [card(face + "h"), card(face + "d")]
    assert sorted(hand.table) == sorted([*cs(" ".join(r + "c" for r in others)), card("2s")])


@pytest.mark.parametrize("face", ["T", "J", "Q", "K"])
def test_ten_and_pictures_capture_no_numeral(face: str) -> None:
    hand = Hand(make_deal(hands=["", face + "h"], layout="Ac 5d 9s 2c"), dealer=0)
    assert hand.targets(card(face + "h")) == ()


def test_suits_do_not_matter_for_capturing() -> None:
    hand = Hand(make_deal(hands=["", "3h"], layout="7c 7d 7h 7s"), dealer=0)
    assert hand.targets(card("3h")) == cs("7c 7d 7h 7s")


def test_one_card_captures_one_table_card() -> None:
    hand = Hand(make_deal(hands=["", "7h"], layout="3c 3d 9h Kc", stock="Qs"), dealer=0)
    event = hand.play(card("7h"), card("3c"))
    assert event.captured == cs("3c")
    assert hand.captured[1] == [card("7h"), card("3c")]
    assert hand.table == [*cs("3d 9h Kc"), card("Qs")]


# Compulsory capture and the choice of target.


def test_legal_moves_lists_exactly_the_card_target_pairs() -> None:
    deal = make_deal(hands=["", "7h Ks 4c 2d 9c Jd 8h Qc"], layout="3c 3d Kh 6s")
    hand = Hand(deal, dealer=0)
    expected = [
        Move(card("7h"), card("3c")), Move(card("7h"), card("3d")),
        Move(card("Ks"), card("Kh")),
        Move(card("4c"), card("6s")),
        Move(card("2d")), Move(card("9c")), Move(card("Jd")), Move(card("8h")), Move(card("Qc")),
    ]
    moves = hand.legal_moves()
    assert sorted(moves) == sorted(expected)
    assert len(moves) == len(set(moves))


def test_a_capturing_card_cannot_be_played_without_capturing() -> None:
    hand = Hand(make_deal(hands=["", "7h"], layout="3c 9d Kh 6s", stock="Qs"), dealer=0)
    assert Move(card("7h")) not in hand.legal_moves()
    assert Move(card("7h"), card("3c")) in hand.legal_moves()
    event = hand.play(card("7h"))  # the single target may be left out: it still captures
    assert event.captured == cs("3c")
    assert card("7h") not in hand.table
    assert hand.captured[1] == [card("7h"), card("3c")]


def test_the_mover_chooses_the_target_of_the_played_card() -> None:
    hand = Hand(make_deal(hands=["", "7h"], layout="3c 3d Kh 6s", stock="Qs"), dealer=0)
    event = hand.play(card("7h"), card("3d"))
    assert event.captured == cs("3d")
    assert card("3c") in hand.table
    assert card("3d") not in hand.table


@pytest.mark.parametrize(("hand_card", "moves", "message"), [
    ("7h", [("7h",)], "must name its target"),  # several targets: which one
    ("2d", [("2d", "3c")], None),  # a target, when nothing can be captured
    ("7h", [("7h", "Kh"), ("7h", "3h")], None),  # one it cannot capture; one not on the table
], ids=["missing-target", "target-with-no-capture", "target-it-cannot-capture"])
def test_an_illegal_target_is_refused_and_changes_nothing(
        hand_card: str, moves: list[tuple[str, ...]], message: str | None) -> None:
    hand = Hand(make_deal(hands=["", hand_card], layout="3c 3d Kh 6s"), dealer=0)
    before = state(hand)
    for move in moves:
        with pytest.raises(IllegalMoveError, match=message):
            hand.play(*(card(c) for c in move))
    assert state(hand) == before


def test_card_not_in_hand_is_illegal() -> None:
    hand = Hand(make_deal(hands=["Qd", "7h"], layout="3c 3d Kh 6s"), dealer=0)
    before = state(hand)
    with pytest.raises(IllegalMoveError, match="not in seat 1"):
        hand.play(card("Qd"))  # seat 0's card, and seat 1 is to move
    with pytest.raises(IllegalMoveError):
        hand.play(card("3c"), None)  # a table card
    assert state(hand) == before


def test_a_card_that_captures_nothing_joins_the_table() -> None:
    hand = Hand(make_deal(hands=["", "2d"], layout="3c 3d Kh 6s", stock="Qs"), dealer=0)
    event = hand.play(card("2d"))
    assert event == Event("play", 1, card("2d"), ())
    assert hand.table == [*cs("3c 3d Kh 6s 2d Qs")]
    assert hand.captured == [[], [], []]


def test_turned_card_captures_its_single_target() -> None:
    hand = Hand(make_deal(hands=["", "2d"], layout="3c 9d Kh 6s", stock="7s"), dealer=0)
    hand.play(card("2d"))
    assert hand.pick_card is None
    assert hand.events[-1] == Event("turn", 1, card("7s"), cs("3c"))
    assert hand.captured[1] == [card("7s"), card("3c")]
    assert hand.to_move == 2
    assert hand.turn == 1


def test_turned_card_can_capture_the_card_just_played() -> None:
    hand = Hand(make_deal(hands=["", "2d"], layout="3c 9d Kh 6s", stock="8c"), dealer=0)
    hand.play(card("2d"))
    assert hand.events[-1] == Event("turn", 1, card("8c"), cs("2d"))
    assert hand.captured[1] == [card("8c"), card("2d")]
    assert hand.table == [*cs("3c 9d Kh 6s")]


def test_the_mover_chooses_the_target_of_the_turned_card() -> None:
    hand = Hand(make_deal(hands=["", "Qs"], layout="3c 3d Kh 6s", stock="7c"), dealer=0)
    event = hand.play(card("Qs"))
    assert event == Event("play", 1, card("Qs"), ())
    assert hand.pick_card == card("7c")
    assert hand.pick_options == cs("3c 3d")
    assert hand.to_move == 1
    assert hand.turn == 0
    assert hand.legal_moves() == []
    with pytest.raises(IllegalMoveError):
        hand.play(hand.hands[1][0])
    for wrong in cs("Kh 6s 3h Qs 7c"):
        with pytest.raises(IllegalMoveError):
            hand.pick(wrong)
    assert hand.pick_card == card("7c")
    turn = hand.pick(card("3d"))
    assert turn == Event("turn", 1, card("7c"), cs("3d"))
    assert hand.captured[1] == [card("7c"), card("3d")]
    assert hand.table == [*cs("3c Kh 6s Qs")]
    assert hand.pick_card is None
    assert hand.pick_options == ()
    assert hand.to_move == 2
    assert hand.turn == 1


def test_pick_without_a_pending_pick_is_illegal() -> None:
    hand = Hand(make_deal(hands=["", "Qs"], layout="3c 3d Kh 6s", stock="7c"), dealer=0)
    with pytest.raises(IllegalMoveError, match="no pick"):
        hand.pick(card("3c"))


def test_a_turned_card_that_captures_nothing_joins_the_table() -> None:
    hand = Hand(make_deal(hands=["", "Qs"], layout="3c 3d Kh 6s", stock="8c"), dealer=0)
    hand.play(card("Qs"))
    assert hand.events[-1] == Event("turn", 1, card("8c"), ())
    assert hand.table == [*cs("3c 3d Kh 6s Qs 8c")]


# Layout specials.


@pytest.mark.parametrize(
    ("rank_letter", "classic", "red_frog"),
    [("5", 10, 10), ("T", 20, 20), ("J", 20, 20), ("Q", 20, 20), ("K", 20, 20)],
)
def test_dealer_takes_a_layout_four_of_a_kind(
    rank_letter: str, classic: int, red_frog: int
) -> None:
    four = cs(" ".join(rank_letter + s for s in "cdhs"))
    deal = make_deal(layout=" ".join(map(str, four)))
    for variant, points in ((Variant.CLASSIC, classic), (Variant.RED_FROG, red_frog)):
        hand = Hand(deal, dealer=2, variant=variant)
        assert hand.events == [Event("take", 2, None, four)]
        assert hand.captured == [[], [], list(four)]
        assert hand.table == []
        assert hand.scores() == [0, 0, points]
        assert hand.to_move == 0
        assert hand.turn == 0


def test_the_dealer_of_the_match_hand_takes_the_four_of_a_kind() -> None:
    match = Match(3, target=10**6)
    first = match.new_hand(Deal.from_seed(3, 1))
    play_first(first)
    match.finish_hand(first)
    second = match.new_hand(make_deal(layout="Qc Qd Qh Qs"))
    assert second.dealer == 1
    assert second.captured[1] == list(cs("Qc Qd Qh Qs"))


@pytest.mark.parametrize("rank_letter", ["A", "2", "3", "4", "6", "7", "8", "9"])
def test_other_layout_fours_of_a_kind_stay_on_the_table(rank_letter: str) -> None:
    layout = " ".join(rank_letter + s for s in "cdhs")
    hand = Hand(make_deal(layout=layout), dealer=0)
    assert hand.events == []
    assert hand.table == list(cs(layout))
    assert hand.captured == [[], [], []]


def test_four_layout_threes_are_captured_one_at_a_time_by_sevens() -> None:
    hand = Hand(make_deal(hands=["", "7c"], layout="3c 3d 3h 3s", stock="7d"), dealer=0)
    assert hand.legal_moves().count(Move(card("7c"), card("3c"))) == 1
    event = hand.play(card("7c"), card("3c"))
    assert event.captured == cs("3c")
    assert hand.pick_options == cs("3d 3h 3s")
    hand.pick(card("3h"))
    assert hand.table == list(cs("3d 3s"))
    assert hand.captured[1] == list(cs("7c 3c 7d 3h"))


SWEEP_RANKS = ["5", "T", "J", "Q", "K"]


def three_on_the_table(rank_letter: str) -> tuple[tuple[Card, ...], Card, Hand]:
    """Three of a kind laid out (beside 2c), the fourth in seat 1's hand, seat 1 to play."""
    three = cs(f"{rank_letter}c {rank_letter}d {rank_letter}h")
    fourth = card(rank_letter + "s")
    deal = make_deal(hands=["", str(fourth)], layout=f"{rank_letter}c {rank_letter}d "
                     f"{rank_letter}h 2c", stock="Ah")
    return three, fourth, Hand(deal, dealer=0)


@pytest.mark.parametrize("rank_letter", SWEEP_RANKS)
def test_layout_three_of_a_kind_is_swept_by_the_fourth_card_played(rank_letter: str) -> None:
    three, fourth, hand = three_on_the_table(rank_letter)
    assert hand.targets(fourth) == three
    assert [m for m in hand.legal_moves() if m.card == fourth] == [Move(fourth)]
    event = hand.play(fourth)
    assert event == Event("play", 1, fourth, three)
    assert hand.pick_card is None
    assert hand.captured[1] == [fourth, *three]
    assert hand.table == list(cs("2c Ah"))


@pytest.mark.parametrize("rank_letter", SWEEP_RANKS)
def test_naming_one_of_the_three_still_sweeps_all_three(rank_letter: str) -> None:
    three, fourth, hand = three_on_the_table(rank_letter)
    event = hand.play(fourth, three[1])
    assert event.captured == three
    assert hand.captured[1] == [fourth, *three]


@pytest.mark.parametrize("rank_letter", SWEEP_RANKS)
def test_layout_three_of_a_kind_is_swept_by_the_fourth_card_turned(rank_letter: str) -> None:
    three = cs(f"{rank_letter}s {rank_letter}h {rank_letter}c")
    fourth = card(rank_letter + "d")
    deal = make_deal(hands=["", "2s"], layout=f"{rank_letter}s {rank_letter}h "
                     f"{rank_letter}c 3c", stock=str(fourth))
    hand = Hand(deal, dealer=0)
    hand.play(card("2s"))
    assert hand.pick_card is None
    assert hand.pick_options == ()
    assert hand.events[-1] == Event("turn", 1, fourth, three)
    assert hand.captured[1] == [fourth, *three]
    assert hand.table == list(cs("3c 2s"))
    assert hand.to_move == 2


def test_three_layout_threes_are_not_swept() -> None:
    deal = make_deal(hands=["", "7h"], layout="3c 3d 3s Kd", stock="Qs 7c")
    hand = Hand(deal, dealer=0)
    assert [m for m in hand.legal_moves() if m.card == card("7h")] == [
        Move(card("7h"), card("3c")), Move(card("7h"), card("3d")), Move(card("7h"), card("3s"))]
    with pytest.raises(IllegalMoveError):
        hand.play(card("7h"))
    event = hand.play(card("7h"), card("3d"))
    assert event.captured == cs("3d")
    assert hand.table == list(cs("3c 3s Kd Qs"))


def test_three_layout_threes_turned_seven_asks_for_a_pick() -> None:
    hand = Hand(make_deal(hands=["", "Qs"], layout="3c 3d 3s Kd", stock="7c"), dealer=0)
    hand.play(card("Qs"))
    assert hand.pick_options == cs("3c 3d 3s")


def test_a_layout_pair_of_kings_is_not_swept() -> None:
    hand = Hand(make_deal(hands=["", "Kh"], layout="Kc Kd 2h 3h"), dealer=0)
    with pytest.raises(IllegalMoveError):
        hand.play(card("Kh"))
    assert hand.play(card("Kh"), card("Kd")).captured == cs("Kd")
    assert card("Kc") in hand.table


def test_three_of_a_kind_built_after_the_deal_is_not_swept() -> None:
    # Two 5s in the layout; the third 5 captures one of them, so no three of a kind can form.
    hand = Hand(make_deal(hands=["", "5h"], layout="5c 5d Kc Qc", stock="Js"), dealer=0)
    assert hand.sweep == frozenset()
    assert hand.play(card("5h"), card("5c")).captured == cs("5c")
    assert hand.table == list(cs("5d Kc Qc Js"))


# Scoring.

CLASSIC_POINTS = [
    ("2h", 2), ("2d", 2), ("5h", 5), ("8d", 8), ("8h", 8),
    ("9h", 10), ("Td", 10), ("Jh", 10), ("Qd", 10), ("Kh", 10), ("9d", 10),
    ("Ah", 20), ("Ad", 20),
    ("As", 30),
    ("Ac", 0), ("2c", 0), ("8s", 0), ("9s", 0), ("Tc", 0), ("Ks", 0), ("5s", 0),
]

RED_FROG_POINTS = [
    ("2c", 2), ("2s", 2), ("5c", 5), ("8s", 8), ("9s", 9), ("9c", 9),
    ("Tc", 10), ("Js", 10), ("Qc", 10), ("Ks", 10), ("Ts", 10),
    ("As", 50),
    ("Ah", 0), ("Ad", 0), ("2h", 0), ("9d", 0), ("Kh", 0), ("5d", 0), ("Td", 0),
    ("Ac", 0),
]


@pytest.mark.parametrize(("text", "points"), CLASSIC_POINTS)
def test_classic_card_points(text: str, points: int) -> None:
    assert Variant.CLASSIC.points[card(text)] == points


@pytest.mark.parametrize(("text", "points"), RED_FROG_POINTS)
def test_red_frog_card_points(text: str, points: int) -> None:
    assert Variant.RED_FROG.points[card(text)] == points


def test_points_in_a_hand() -> None:
    assert Variant.CLASSIC.hand_total == 240
    assert Variant.RED_FROG.hand_total == 218
    assert sum(Variant.CLASSIC.points) == 240
    assert sum(Variant.RED_FROG.points) == 218
    assert len(Variant.CLASSIC.points) == len(Variant.RED_FROG.points) == 52


def test_variant_names() -> None:
    assert Variant("classic") is Variant.CLASSIC
    assert Variant("red-frog-black-frog") is Variant.RED_FROG


@pytest.mark.parametrize(
    ("variant", "expected"),
    [(Variant.CLASSIC, [0, 30 + 0 + 7 + 3, 0]), (Variant.RED_FROG, [0, 50 + 9 + 0 + 0, 0])],
)
def test_scores_count_each_seats_captured_cards(variant: Variant, expected: list[int]) -> None:
    # Seat 1 plays As onto 9s, then turns 7h onto 3h.
    deal = make_deal(hands=["", "As"], layout="9s 3h Kc 2s", stock="7h")
    hand = Hand(deal, dealer=0, variant=variant)
    hand.play(card("As"))
    assert hand.captured[1] == list(cs("As 9s 7h 3h"))
    assert hand.scores() == expected


def test_scores_follow_the_table_in_red_frog() -> None:
    deal = make_deal(hands=["", "As"], layout="9s 3s Kc 2h", stock="7c")
    hand = Hand(deal, dealer=0, variant=Variant.RED_FROG)
    hand.play(card("As"))
    assert hand.scores() == [0, 50 + 9 + 7 + 3, 0]
    hand = Hand(deal, dealer=0, variant=Variant.CLASSIC)
    hand.play(card("As"))
    assert hand.scores() == [0, 30, 0]


# Players, deals and turns.


@pytest.mark.parametrize(("players", "size"), [(2, 12), (3, 8), (4, 6)])
def test_deal_sizes_and_24_turns(players: int, size: int) -> None:
    deal = Deal.from_seed(players, "sizes")
    assert deal.players == players
    assert [len(h) for h in deal.hands] == [size] * players
    assert len(deal.layout) == 4
    assert len(deal.stock) == 24
    dealt = [c for h in deal.hands for c in h] + list(deal.layout) + list(deal.stock)
    assert sorted(dealt) == list(DECK)
    for dealer in range(players):
        hand = Hand(deal, dealer=dealer)
        seats = play_out(hand, random.Random(dealer))
        assert len(seats) == 24
        assert seats == [(dealer + 1 + t) % players for t in range(24)]
        assert hand.turn == 24
        assert hand.is_over()
        assert hand.table == []
        assert hand.stock == []
        assert all(h == [] for h in hand.hands)
        assert sum(hand.scores()) == 240


@pytest.mark.parametrize("players", [2, 4])
def test_hand_built_deals_for_two_and_four_players(players: int) -> None:
    deal = make_deal(hands=["", "7h"], layout="3c 3d Kh 6s", players=players)
    hand = Hand(deal, dealer=0)
    assert len(hand.hands[1]) == 24 // players
    assert hand.play(card("7h"), card("3d")).captured == cs("3d")


def test_the_same_seed_gives_the_same_deal() -> None:
    assert Deal.from_seed(3, 42) == Deal.from_seed(3, 42)
    assert Deal.from_seed(3, 42) != Deal.from_seed(3, 43)


def _valid_parts(players: int = 3) -> tuple[list[list[Card]], list[Card], list[Card]]:
    deal = make_deal(players=players)
    return [list(h) for h in deal.hands], list(deal.layout), list(deal.stock)


def test_deal_error_for_a_duplicate_card() -> None:
    hands, layout, stock = _valid_parts()
    stock[5] = hands[0][0]
    with pytest.raises(DealError, match="twice"):
        Deal.from_cards(hands, layout, stock)


@pytest.mark.parametrize("where", ["short hand", "long hand", "layout", "stock"])
def test_deal_error_for_wrong_sizes(where: str) -> None:
    hands, layout, stock = _valid_parts()
    if where == "short hand":
        stock.append(hands[1].pop())
        stock.pop(0)
    elif where == "long hand":
        hands[2].append(stock.pop())
    elif where == "layout":
        stock.append(layout.pop())
        stock.pop(0)
    else:
        stock.pop()
    with pytest.raises(DealError):
        Deal.from_cards(hands, layout, stock)


@pytest.mark.parametrize("players", [1, 5])
def test_deal_error_for_one_or_five_players(players: int) -> None:
    deck = list(DECK)
    size = TURNS_PER_HAND // players
    hands = [deck[i * size:(i + 1) * size] for i in range(players)]
    rest = deck[players * size:]
    with pytest.raises(DealError, match="players"):
        Deal.from_cards(hands, rest[:4], rest[4:28])
    with pytest.raises(DealError):
        Deal.from_seed(players, 1)
    with pytest.raises(ValueError):
        Match(players)


def test_deal_error_for_a_card_outside_the_deck() -> None:
    hands, layout, stock = _valid_parts()
    with pytest.raises(DealError):
        Deal.from_cards(hands, layout, [*stock[:-1], 52])
    with pytest.raises(DealError):
        Deal.from_cards(hands, layout, [*stock[:-1], -1])
    bad = Deal(tuple(tuple(h) for h in hands), tuple(layout), (*stock[:-1], Card(52)))
    with pytest.raises(DealError):
        bad.validate()


def test_deal_from_text_cards() -> None:
    hands, layout, stock = _valid_parts()
    deal = Deal.from_cards([[str(c).lower() for c in h] for h in hands],
                           [str(c) for c in layout], [str(c) for c in stock])
    assert deal == Deal.from_cards(hands, layout, stock)


def test_hand_rejects_a_dealer_that_is_not_a_seat() -> None:
    with pytest.raises(ValueError):
        Hand(make_deal(), dealer=3)


def test_no_move_after_the_hand_is_over() -> None:
    hand = Hand(Deal.from_seed(3, 5), dealer=0)
    play_first(hand)
    assert hand.legal_moves() == []
    with pytest.raises(IllegalMoveError):
        hand.play(card("As"))
    with pytest.raises(IllegalMoveError):
        hand.pick(card("As"))


# A match.


@pytest.mark.parametrize("players", [2, 3, 4])
def test_dealer_rotation(players: int) -> None:
    match = Match(players, target=10**6)
    for k in range(1, 2 * players + 2):
        assert match.hand_number == k
        assert match.dealer == (k - 1) % players
        hand = match.new_hand(Deal.from_seed(players, k))
        assert hand.dealer == (k - 1) % players
        assert hand.to_move == k % players
        seats = play_out(hand, random.Random(k))
        assert seats[0] == k % players
        match.finish_hand(hand)
    assert not match.is_over()


def _first_policy_scores(seed: int) -> list[int]:
    hand = Hand(Deal.from_seed(3, seed), dealer=0)
    play_first(hand)
    return hand.scores()


def test_match_ends_when_a_total_reaches_the_target_after_a_hand() -> None:
    top = max(_first_policy_scores(7))
    match = Match(3, target=top)
    hand = match.new_hand(Deal.from_seed(3, 7))
    play_first(hand)
    assert max(hand.scores()) >= match.target
    assert not match.is_over()  # totals change only when the hand is finished
    match.finish_hand(hand)
    assert match.is_over()
    with pytest.raises(RulesError, match="over"):
        match.new_hand(Deal.from_seed(3, 8))


def test_match_goes_on_while_no_total_has_reached_the_target() -> None:
    top = max(_first_policy_scores(7))
    match = Match(3, target=top + 1)
    hand = match.new_hand(Deal.from_seed(3, 7))
    play_first(hand)
    match.finish_hand(hand)
    assert match.totals == hand.scores()
    assert not match.is_over()
    hands = 1
    while not match.is_over():
        assert max(match.totals) < match.target
        hand = match.new_hand(Deal.from_seed(3, 100 + hands))
        play_first(hand)
        before = list(match.totals)
        assert match.finish_hand(hand) == hand.scores()
        assert match.totals == [b + s for b, s in zip(before, hand.scores(), strict=True)]
        hands += 1
    assert max(match.totals) >= match.target
    assert len(match.hand_scores) == hands


def test_an_unfinished_hand_cannot_be_finished() -> None:
    match = Match(3)
    hand = match.new_hand(Deal.from_seed(3, 1))
    with pytest.raises(RulesError, match="not over"):
        match.finish_hand(hand)
    with pytest.raises(DealError):
        match.new_hand(Deal.from_seed(4, 1))


def test_two_players_reaching_the_target_in_the_same_hand() -> None:
    seed = next(s for s in range(100) if len({x for x in _first_policy_scores(s) if x}) == 3)
    scores = _first_policy_scores(seed)
    second = sorted(scores)[1]
    match = Match(3, target=second)
    hand = match.new_hand(Deal.from_seed(3, seed))
    play_first(hand)
    match.finish_hand(hand)
    assert match.is_over()
    assert sum(t >= match.target for t in match.totals) == 2
    expected = [sorted(scores, reverse=True).index(s) + 1 for s in scores]
    assert match.ranks() == expected


@pytest.mark.parametrize(
    ("totals", "faulted", "expected"),
    [
        ([10, 10, 5], [], [1, 1, 3]),
        ([5, 10, 10], [], [3, 1, 1]),
        ([7, 7, 7], [], [1, 1, 1]),
        ([1000, 990, 1200, 0], [], [2, 3, 1, 4]),
        ([1010, 1010], [], [1, 1]),
        ([1200, 10, 500], [0], [3, 2, 1]),
        ([1200, 10, 500], [0, 2], [2, 1, 3]),
        ([5, 5, 100], [0, 1], [2, 2, 1]),
        ([0, 1200, 1200, 3], [1], [3, 4, 1, 2]),
    ],
)
def test_ranks(totals: list[int], faulted: list[int], expected: list[int]) -> None:
    assert rank(totals, faulted) == expected
    match = Match(len(totals))
    match.totals = list(totals)
    assert match.ranks(faulted) == expected


def test_match_rejects_a_target_that_is_not_positive() -> None:
    with pytest.raises(ValueError):
        Match(3, target=0)


# What a seat sees.


def _cards_in(value: object) -> set[Card]:
    """Every card anywhere inside a view (recursively through its fields)."""
    if isinstance(value, Card):
        return {value}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return set().union(*(_cards_in(getattr(value, f.name)) for f in dataclasses.fields(value)))
    if isinstance(value, tuple | list | set | frozenset):
        return set().union(set(), *(_cards_in(v) for v in value))
    return set()


def test_a_view_holds_its_own_hand_and_public_information_only() -> None:
    deal = make_deal(hands=["Jc", "Qs", "8d"], layout="3c 3d Kh 6s", stock="7c")
    hand = Hand(deal, dealer=0)
    hand.play(card("Qs"))
    assert hand.pick_card == card("7c")
    public = set(deal.layout) | {card("Qs"), card("7c")}
    for seat in range(3):
        view = hand.view(seat)
        assert isinstance(view, SeatView)
        assert list(vars(view)) == [f.name for f in dataclasses.fields(SeatView)]
        assert SeatView(**vars(view)) == view  # built as the dataclass's own __init__ would
        assert view.seat == seat
        assert view.hand == tuple(hand.hands[seat])
        assert view.table == tuple(hand.table)
        assert view.stock_count == 23
        assert view.to_move == 1
        assert view.dealer == 0
        assert view.players == 3
        assert view.variant is Variant.CLASSIC
        assert _cards_in(view) <= set(hand.hands[seat]) | public
        for other in range(3):
            if other != seat:
                assert not set(hand.hands[other]) & _cards_in(view)
        assert not set(hand.stock) & _cards_in(view)
    assert hand.view(1).pick_card == card("7c")
    assert hand.view(1).pick_options == cs("3c 3d")
    assert hand.view(0).pick_card is None
    assert hand.view(0).pick_options == ()
    assert card("Jc") in hand.view(0).hand
    assert card("Jc") not in _cards_in(hand.view(2))


def test_views_show_captures_and_events() -> None:
    deal = make_deal(hands=["", "7h"], layout="3c 9d Kh 6s", stock="Qs")
    hand = Hand(deal, dealer=0)
    hand.play(card("7h"))
    for seat in range(3):
        view = hand.view(seat)
        assert view.captured == ((), cs("7h 3c"), ())
        assert view.events == (Event("play", 1, card("7h"), cs("3c")),
                               Event("turn", 1, card("Qs"), ()))


def test_moves_from_the_cards_alone_are_the_hands_moves() -> None:
    """What a seat can work out from a ``go`` line (its cards and the table) is exactly what the
    hand allows, sweeps of a layout three of a kind included, at every turn of many hands."""
    rng = random.Random(11)
    sweeps = 0
    for i in range(300):
        layout = "5c 5d 5h" if i % 3 == 0 else ""
        hand = Hand(make_deal(layout=layout) if layout else Deal.from_seed(3, f"on:{i}"),
                    dealer=i % 3)
        while not hand.is_over():
            if hand.pick_card is not None:
                hand.pick(rng.choice(hand.pick_options))
                continue
            mine = hand.hands[hand.to_move]
            moves = hand.legal_moves()
            assert legal_moves_on(mine, hand.table) == moves
            for c in mine:
                assert targets_on(c, hand.table) == hand.targets(c)
            sweeps += sum(1 for c in mine if len(hand.targets(c)) == 3 and c.rank in hand.sweep)
            hand.play(*rng.choice(moves))
    assert sweeps
