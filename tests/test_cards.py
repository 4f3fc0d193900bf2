"""Card notation: parsing, the one canonical form, ranks, suits and values."""

from __future__ import annotations

import pytest

from referee.game.cards import (
    DECK,
    RANKS,
    SUITS,
    Card,
    CardError,
    card,
    format_cards,
    parse_cards,
)


@pytest.mark.parametrize("text", ["Ts", "10s", "TS", "ts", "10S", "tS"])
def test_parse_accepts_every_spelling_of_the_ten_of_spades(text: str) -> None:
    c = Card.parse(text)
    assert c.rank == RANKS.index("T")
    assert c.suit == SUITS.index("s")
    assert str(c) == "Ts"


@pytest.mark.parametrize(
    ("text", "canonical"),
    [("ah", "Ah"), ("AH", "Ah"), ("kD", "Kd"), ("9c", "9c"), ("10h", "Th"), ("jS", "Js")],
)
def test_output_is_always_the_canonical_form(text: str, canonical: str) -> None:
    c = Card.parse(text)
    assert str(c) == canonical
    assert f"{c}" == canonical
    assert repr(c) == f"Card.parse({canonical!r})"


@pytest.mark.parametrize(
    "text",
    ["1s", "Tx", "", "11h", "T", "s", "Tss", " Ts", "Ts ", "0s", "Xh", "10", "1h", "01s", "As,"],
)
def test_parse_rejects_junk(text: str) -> None:
    with pytest.raises(CardError):
        Card.parse(text)


def test_card_error_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="not a card"):
        card("Zz")


def test_every_card_round_trips_in_every_case() -> None:
    for c in DECK:
        text = str(c)
        assert len(text) == 2
        assert Card.parse(text) is c
        assert Card.parse(text.lower()) is c
        assert Card.parse(text.upper()) is c


def test_deck_is_52_distinct_cards_in_index_order() -> None:
    assert len(DECK) == 52
    assert [int(c) for c in DECK] == list(range(52))
    assert len({str(c) for c in DECK}) == 52
    assert {(c.rank, c.suit) for c in DECK} == {(r, s) for r in range(13) for s in range(4)}


@pytest.mark.parametrize(
    ("text", "value"),
    [("Ac", 1), ("2d", 2), ("5h", 5), ("9s", 9), ("Tc", None), ("Jd", None), ("Qh", None),
     ("Ks", None)],
)
def test_capture_value(text: str, value: int | None) -> None:
    assert card(text).value == value


@pytest.mark.parametrize(("suit", "red"), [("c", False), ("d", True), ("h", True), ("s", False)])
def test_red_suits_are_diamonds_and_hearts(suit: str, red: bool) -> None:
    for r in RANKS:
        assert card(r + suit).is_red is red


def test_symbol_uses_suit_symbols() -> None:
    assert card("Ah").symbol() == "A♥"
    assert card("10s").symbol() == "T♠"
    assert card("2c").symbol() == "2♣"
    assert card("Kd").symbol() == "K♦"


def test_parse_cards_and_format_cards() -> None:
    cards = parse_cards("Ah 10s kd 2C")
    assert cards == [card("Ah"), card("Ts"), card("Kd"), card("2c")]
    assert parse_cards(["ah", "TS"]) == [card("Ah"), card("Ts")]
    assert format_cards(cards) == "Ah Ts Kd 2c"
    assert parse_cards("") == []
    with pytest.raises(CardError):
        parse_cards("Ah 1s")
