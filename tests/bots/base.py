"""A minimal legal bot for the ``check`` tests; each sibling script breaks it in one way.

Not a package: the scripts run as ``python3 tests/bots/<name>.py`` and import this file
from their own folder.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

RANKS = "A23456789TJQK"


def cards_after(tokens: list[str], key: str) -> list[str]:
    out: list[str] = []
    for token in tokens[tokens.index(key) + 1:] if key in tokens else []:
        if len(token) != 2 or token[0] not in RANKS:
            break
        out.append(token)
    return out


def captures(card: str, target: str) -> bool:
    a, b = RANKS.index(card[0]) + 1, RANKS.index(target[0]) + 1
    if a <= 9 and b <= 9:
        return a + b == 10
    return card[0] == target[0]


def legal_move(hand: list[str], table: list[str]) -> str:
    card = hand[0]
    targets = [t for t in table if captures(card, t)]
    return f"{card} {targets[0]}" if targets else card


def write(line: str, flush: bool = True) -> None:
    sys.stdout.write(line + "\n")
    if flush:
        sys.stdout.flush()


def run(
    *,
    answer: Callable[[list[str], list[str]], str] = legal_move,
    say: Callable[[str, bool], None] = write,
    flush_answers: bool = True,
    on_line: Callable[[str], None] | None = None,
) -> None:
    """The protocol loop: ``ready``, answers to ``go`` and ``pick``, exit at ``quit``."""
    for raw in sys.stdin:
        tokens = raw.split()
        if not tokens:
            continue
        if on_line is not None:
            on_line(tokens[0])
        if tokens[0] == "chinese-ten":
            write("ready checkbot")
        elif tokens[0] == "go":
            say(answer(cards_after(tokens, "hand"), cards_after(tokens, "table")), flush_answers)
        elif tokens[0] == "pick":
            say(cards_after(tokens, "from")[0], flush_answers)
        elif tokens[0] == "quit":
            return


if __name__ == "__main__":
    run()
