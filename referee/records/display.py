"""Cards and turns as rich text for the terminal: suit symbols, red suits in red.

With ``ascii_only=True`` everything is plain ``Ah Ts`` text, for logs and for terminals without
Unicode.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rich.text import Text

from referee.game.cards import Card
from referee.protocol.escape import escape_controls

RED = "bold red"
BLACK = "bold"


def card_text(card: int, *, ascii_only: bool = False) -> Text:
    """One card: ``A♥`` in red, ``T♠`` in the default colour (or ``Ah`` with ``ascii_only``)."""
    c = Card(card)
    if ascii_only:
        return Text(str(c))
    return Text(c.symbol(), style=RED if c.is_red else BLACK)


def cards_text(cards: Iterable[int], *, ascii_only: bool = False, empty: str = "-") -> Text:
    """Cards separated by spaces; ``empty`` when there are none."""
    items = [card_text(c, ascii_only=ascii_only) for c in cards]
    if not items:
        return Text(empty, style="dim")
    return Text(" ").join(items)


def move_text(
    names: Sequence[str],
    seat: int,
    play: int,
    capture: Sequence[int],
    turn: int,
    turn_capture: Sequence[int],
    *,
    ascii_only: bool = False,
) -> Text:
    """One turn in words: ``bob plays 7♣ takes 3♥; turns K♠ takes K♥``."""
    text = Text(escape_controls(names[seat]), style="cyan")
    text.append(" plays ")
    text.append_text(card_text(play, ascii_only=ascii_only))
    if capture:
        text.append(" takes ")
        text.append_text(cards_text(capture, ascii_only=ascii_only))
    text.append("; turns ")
    text.append_text(card_text(turn, ascii_only=ascii_only))
    if turn_capture:
        text.append(" takes ")
        text.append_text(cards_text(turn_capture, ascii_only=ascii_only))
    return text
