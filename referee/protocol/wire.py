"""Bot protocol v1: every line the referee writes, and parsers for every answer a bot gives.

Pure code, no I/O. Format functions return the line without its ``\\n``. Parsers raise
:class:`GarbledError` for text that is not an answer at all and leave legality to the rules
(:class:`referee.game.rules.IllegalMoveError`), so the two faults stay apart.

>>> format_go([Card.parse("7c"), Card.parse("Kd")], [Card.parse("3h")], 24, 1000)
'go hand 7c Kd table 3h stock 24 ms 1000'
>>> parse_move("10H 3h")
Move(card=Card.parse('Th'), target=Card.parse('3h'))
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from referee.game.cards import Card, CardError, format_cards
from referee.game.faults import Fault
from referee.game.rules import Event, Move, Variant
from referee.protocol.escape import quote

PROTOCOL = "chinese-ten"
VERSION = 1
HELLO = f"{PROTOCOL} {VERSION}"
"""The first line ever sent to a bot."""

class GarbledError(ValueError):
    """Raised for a bot line that is not a valid answer."""


def format_match(
    match_id: str, seat: int, players: int, variant: Variant, target: int, names: Sequence[str]
) -> str:
    """The ``match`` line that opens a match for ``seat``."""
    return (f"match id {match_id} seat {seat} players {players} variant {variant.value} "
            f"target {target} names {' '.join(names)}")


def format_hand(number: int, dealer: int, cards: Iterable[int], layout: Iterable[int]) -> str:
    """The ``hand`` line: a seat's own cards and the face-up layout."""
    return (f"hand {number} dealer {dealer} cards {format_cards(cards)} "
            f"layout {format_cards(layout)}")


def format_event(event: Event) -> str:
    """The ``take``, ``play`` or ``turn`` line of a table event."""
    if event.card is None:
        return f"{event.kind} {event.seat} {format_cards(event.captured)}"
    if event.captured:
        return f"{event.kind} {event.seat} {event.card} {format_cards(event.captured)}"
    return f"{event.kind} {event.seat} {event.card}"


def format_go(
    holding: Iterable[int], table: Iterable[int], stock: int, ms: int, *, bank: int | None = None
) -> str:
    """The ``go`` request. ``bank`` (extra time left this match) is sent only when there is one."""
    cards = format_cards(table)
    table_text = f"table {cards} " if cards else "table "  # empty table: `table stock N`
    line = f"go hand {format_cards(holding)} {table_text}stock {stock} ms {ms}"
    return line if bank is None else f"{line} bank {bank}"


def format_pick(card: int, options: Iterable[int], ms: int, *, bank: int | None = None) -> str:
    """The ``pick`` request for a turned card with several targets."""
    line = f"pick {Card(card)} from {format_cards(options)} ms {ms}"
    return line if bank is None else f"{line} bank {bank}"


def format_score(scores: Sequence[int], totals: Sequence[int]) -> str:
    """The ``score`` line at the end of a hand."""
    return f"score {' '.join(map(str, scores))} totals {' '.join(map(str, totals))}"


def format_end(totals: Sequence[int], ranks: Sequence[int]) -> str:
    """The ``end`` line at the end of a match."""
    return f"end totals {' '.join(map(str, totals))} ranks {' '.join(map(str, ranks))}"


def format_forfeit(fault: Fault) -> str:
    """The ``forfeit`` line sent to a bot that faulted."""
    return f"forfeit {fault}"


def parse_ready(line: str) -> str:
    """Parses ``ready [<name>]`` and returns the name (possibly empty).

    :raises GarbledError: if the line is not a ``ready`` line.
    """
    keyword, _, name = line.partition(" ")
    if keyword != "ready":
        raise GarbledError(f"expected 'ready [name]', got {quote(line)}")
    return name.strip()


def parse_move(line: str) -> Move:
    """Parses an answer to ``go``: ``<card>`` or ``<card> <target>``.

    :raises GarbledError: unless the line is one or two cards.
    """
    tokens = line.split()
    if not 1 <= len(tokens) <= 2:
        raise GarbledError(f"expected '<card> [<target>]', got {quote(line)}")
    try:
        cards = [Card.parse(t) for t in tokens]
    except CardError as err:
        raise GarbledError(f"{err} in {quote(line)}") from None
    return Move(cards[0], cards[1] if len(cards) == 2 else None)


def parse_pick(line: str) -> Card:
    """Parses an answer to ``pick``: one card.

    :raises GarbledError: unless the line is exactly one card.
    """
    tokens = line.split()
    if len(tokens) != 1:
        raise GarbledError(f"expected '<target>', got {quote(line)}")
    try:
        return Card.parse(tokens[0])
    except CardError as err:
        raise GarbledError(f"{err} in {quote(line)}") from None


# -- reading the referee's lines back -----------------------------------------------------------
# For a seat that keeps its own view from what it is told (the policy bridge, a person at the
# terminal): the referee wrote these lines, so they are read leniently.


def cards_after(tokens: Sequence[str], key: str) -> list[Card]:
    """The cards that follow the word ``key`` in a line's ``tokens``, up to the next token that
    is not a card (``[]`` without ``key``).

    >>> cards_after("go hand 7c Kd table 3h stock 24".split(), "hand")
    [Card.parse('7c'), Card.parse('Kd')]
    """
    if key not in tokens:
        return []
    cards: list[Card] = []
    for token in tokens[tokens.index(key) + 1:]:
        try:
            cards.append(Card.parse(token))
        except CardError:
            break
    return cards


def ints_after(tokens: Sequence[str], key: str) -> list[int]:
    """The integers that follow the word ``key``, up to the next token that is not one.

    >>> ints_after("score 10 -5 0 totals 10 -5 0".split(), "score")
    [10, -5, 0]
    """
    if key not in tokens:
        return []
    out: list[int] = []
    for token in tokens[tokens.index(key) + 1:]:
        if not token.lstrip("-").isdigit():
            break
        out.append(int(token))
    return out


def value_after(tokens: Sequence[str], key: str, default: str = "") -> str:
    """The token after the word ``key`` (``default`` without one)."""
    at = tokens.index(key) + 1 if key in tokens else len(tokens)
    return tokens[at] if at < len(tokens) else default


def int_after(tokens: Sequence[str], key: str, default: int) -> int:
    """The integer after the word ``key`` (``default`` without one).

    >>> int_after("match id x seat 2 players 3".split(), "seat", 0)
    2
    """
    found = ints_after(tokens, key)[:1]
    return found[0] if found else default
