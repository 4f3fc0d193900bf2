"""The fixture bots' one legal-move helper, written from rules.md (not from the referee).

The fixture bots in this folder run as scripts (``python3 tests/bots/<name>.py``), so Python
puts this folder first on their path and they ``import legal``. Each plays the first legal move:
the first card in hand, capturing the first table card it can take; at a pick, the first card
offered.
"""

from __future__ import annotations

import sys

RANKS = "A23456789TJQK"
SUITS = "cdhs"


def say(text: str) -> None:
    """Writes ``text`` to stdout and flushes."""
    sys.stdout.write(text)
    sys.stdout.flush()


def cards_after(words: list[str], key: str) -> list[str]:
    """The cards that follow the word ``key`` in a request, up to the next non-card word."""
    out: list[str] = []
    for word in words[words.index(key) + 1:] if key in words else []:
        if len(word) != 2 or word[0] not in RANKS:
            break
        out.append(word)
    return out


def captures(card: str, target: str) -> bool:
    """Whether ``card`` takes ``target``: A-9 sum to ten, T/J/Q/K pair by rank."""
    a, b = RANKS.index(card[0]) + 1, RANKS.index(target[0]) + 1
    if a <= 9 and b <= 9:
        return a + b == 10
    return card[0] == target[0]


def first_move(hand: list[str], table: list[str]) -> str:
    """The first card in ``hand``, with the first table card it captures if any."""
    card = hand[0]
    targets = [t for t in table if captures(card, t)]
    return f"{card} {targets[0]}" if targets else card


def answer(line: str) -> str:
    """The first legal answer to a ``go`` or ``pick`` request line."""
    words = line.split()
    if words[0] == "pick":
        return cards_after(words, "from")[0]
    return first_move(cards_after(words, "hand"), cards_after(words, "table"))


def unheld(line: str) -> str:
    """A card that is neither in the hand nor on the table of a ``go`` request line."""
    words = line.split()
    seen = set(cards_after(words, "hand")) | set(cards_after(words, "table"))
    return next(r + s for r in RANKS for s in SUITS if r + s not in seen)
