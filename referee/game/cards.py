"""Cards: notation, values and the deck.

A :class:`Card` is an :class:`int` from 0 to 51 (``rank * 4 + suit``), so the rules engine can
index tables with it, while ``str(card)`` gives the one canonical form, rank then suit:

>>> Card.parse("10h"), Card.parse("TS"), str(Card.parse("ah"))
(Card.parse('Th'), Card.parse('Ts'), 'Ah')

There are exactly 52 card objects (:data:`DECK`); :meth:`Card.parse` and :func:`card` return them.
"""

from __future__ import annotations

from collections.abc import Iterable

RANKS = "A23456789TJQK"
"""Rank letters, lowest first. Index 0 is the ace, 9 the ten."""

SUITS = "cdhs"
"""Suit letters: clubs, diamonds, hearts, spades."""

SUIT_SYMBOLS = "♣♦♥♠"
"""Unicode suit symbols, in the order of :data:`SUITS`."""

TEN, JACK, QUEEN, KING = 9, 10, 11, 12
FIVE = 4


class CardError(ValueError):
    """Raised for text that is not a card."""


class Card(int):
    """One of the 52 cards. Compare, hash and index it like the int it is."""

    __slots__ = ()

    @property
    def rank(self) -> int:
        """Rank index 0..12 (ace .. king)."""
        return self >> 2

    @property
    def suit(self) -> int:
        """Suit index 0..3 (clubs, diamonds, hearts, spades)."""
        return self & 3

    @property
    def is_red(self) -> bool:
        """Whether the suit is diamonds or hearts."""
        return (self & 3) in (1, 2)

    @property
    def value(self) -> int | None:
        """Capture value 1..9, or ``None`` for T, J, Q and K."""
        r = self >> 2
        return r + 1 if r < TEN else None

    @classmethod
    def parse(cls, text: str) -> Card:
        """Parses ``Ts``, ``10s``, ``TS`` or ``ts``.

        :raises CardError: if the text is not a card.
        """
        found = _BY_TEXT.get(text.lower())
        if found is None:
            raise CardError(f"not a card: {text!r}")
        return found

    def symbol(self) -> str:
        """The card with a suit symbol, like ``A♥`` (``10`` is written ``T``)."""
        return RANKS[self >> 2] + SUIT_SYMBOLS[self & 3]

    def __str__(self) -> str:
        return _TEXT[self]

    def __repr__(self) -> str:
        return f"Card.parse({_TEXT[self]!r})"

    def __format__(self, spec: str) -> str:
        return format(_TEXT[self], spec)


DECK: tuple[Card, ...] = tuple(Card(i) for i in range(52))
"""All 52 cards, in index order."""

_TEXT: tuple[str, ...] = tuple(RANKS[i >> 2] + SUITS[i & 3] for i in range(52))
_BY_TEXT: dict[str, Card] = {}
for _c in DECK:
    _r, _s = RANKS[_c >> 2], SUITS[_c & 3]
    _BY_TEXT[(_r + _s).lower()] = _c
    if _r == "T":
        _BY_TEXT["10" + _s] = _c
del _c, _r, _s


def card(text: str) -> Card:
    """Shorthand for :meth:`Card.parse`."""
    return Card.parse(text)


def parse_cards(text: str | Iterable[str]) -> list[Card]:
    """Parses space-separated cards, or an iterable of card texts.

    >>> parse_cards("Ah 10s kd")
    [Card.parse('Ah'), Card.parse('Ts'), Card.parse('Kd')]
    """
    items = text.split() if isinstance(text, str) else text
    return [Card.parse(t) for t in items]


def format_cards(cards: Iterable[int]) -> str:
    """Space-separated canonical text of the cards."""
    return " ".join([_TEXT[c] for c in cards])
