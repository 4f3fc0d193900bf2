"""The wire (:mod:`referee.protocol.wire`) directly: every parser on answers a bot may give,
well-formed or not, and the readers of the referee's own lines."""

from __future__ import annotations

import pytest

from referee.game.cards import Card
from referee.game.rules import Move
from referee.protocol.wire import (
    HELLO,
    GarbledError,
    cards_after,
    format_go,
    format_pick,
    format_score,
    int_after,
    ints_after,
    parse_move,
    parse_pick,
    parse_ready,
    value_after,
)

C = Card.parse


def test_hello_is_protocol_one() -> None:
    assert HELLO == "chinese-ten 1"


@pytest.mark.parametrize(("line", "name"), [
    ("ready", ""), ("ready greedy 1.2", "greedy 1.2"), ("ready  spaced  ", "spaced"),
])
def test_parse_ready(line: str, name: str) -> None:
    assert parse_ready(line) == name


@pytest.mark.parametrize("line", ["", "Ready x", "readyx", "ok ready", "7c"])
def test_parse_ready_refuses(line: str) -> None:
    with pytest.raises(GarbledError, match=r"expected 'ready \[name\]', got "):
        parse_ready(line)


@pytest.mark.parametrize(("line", "move"), [
    ("7c", Move(C("7c"), None)), ("7c 3h", Move(C("7c"), C("3h"))),
    ("10H 3h", Move(C("Th"), C("3h"))), ("  kd\tqs ", Move(C("Kd"), C("Qs"))),
])
def test_parse_move(line: str, move: Move) -> None:
    assert parse_move(line) == move


@pytest.mark.parametrize(("line", "message"), [
    ("", "expected '<card> [<target>]', got ''"),
    ("7c 3h 4d", "expected '<card> [<target>]', got '7c 3h 4d'"),
    ("zz", "not a card: 'zz' in 'zz'"),
    ("7c 1x", "in '7c 1x'"),
    ("7c " * 50, "got '" + ("7c " * 50)[:80] + "'..."),  # cut, and said to be
])
def test_parse_move_refuses(line: str, message: str) -> None:
    with pytest.raises(GarbledError) as e:
        parse_move(line)
    assert message in str(e.value)


def test_parse_move_leaves_legality_to_the_rules() -> None:
    """A card no one holds, or a target it cannot take, still parses: that is an illegal move,
    not a garbled one."""
    assert parse_move("Ks 2c") == Move(C("Ks"), C("2c"))


@pytest.mark.parametrize(("line", "card"), [("7h", C("7h")), (" 10s ", C("Ts"))])
def test_parse_pick(line: str, card: Card) -> None:
    assert parse_pick(line) == card


@pytest.mark.parametrize("line", ["", "7h 7d", "seven"])
def test_parse_pick_refuses(line: str) -> None:
    with pytest.raises(GarbledError):
        parse_pick(line)


def test_the_readers_read_back_what_the_referee_writes() -> None:
    go = format_go([C("7c"), C("Kd")], [C("3h")], 24, 1000, bank=500).split()
    assert cards_after(go, "hand") == [C("7c"), C("Kd")]
    assert cards_after(go, "table") == [C("3h")]
    assert (int_after(go, "stock", 0), int_after(go, "ms", 0), int_after(go, "bank", 0)) == (
        24, 1000, 500)
    empty = format_go([C("7c")], [], 3, 1000).split()
    assert cards_after(empty, "table") == [] and int_after(empty, "bank", -1) == -1
    pick = format_pick(C("7c"), [C("7h"), C("7d")], 500).split()
    assert cards_after(pick, "from") == [C("7h"), C("7d")]
    score = format_score([10, -5, 0], [110, 5, 40]).split()
    assert ints_after(score, "score") == [10, -5, 0] and ints_after(score, "totals") == [110, 5, 40]
    assert value_after(score, "totals") == "110" and value_after(score, "nope", "-") == "-"
    assert value_after(["match", "id"], "id", "none") == "none"  # nothing after the key
