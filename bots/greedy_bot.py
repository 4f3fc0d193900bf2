#!/usr/bin/env python3
"""greedy-bot: a Chinese Ten bot that takes the most points it can on this move.

Run:  python3 bots/greedy_bot.py

Heuristic (deterministic): score every legal move by the points it captures under the match's
variant (played card + captured cards; a sweep counts all three). If nothing beats zero, throw the
card that gives away the fewest points, preferring one that fewer unseen cards can capture.
`pick`: take the most valuable offered card. Ties go to the earliest card in the request.

Protocol in short (protocol.md): answer `ready <name>` to the greeting, `<card> [<target>]` to `go`,
`<target>` to `pick`; stay silent on everything else. Flush after each line, log to stderr only.

Self-contained, like random_bot.py: either file copied alone starts a bot
(docs/writing-a-bot.md), so the protocol helpers (`send`, `cards_after`, ...) stand in both.
"""

from __future__ import annotations

import sys

NAME = "greedy-bot 1.0"
RANKS = "A23456789TJQK"
SUITS = "cdhs"
SWEEP_RANKS = "5TJQK"  # three of these on the table can only be a layout three of a kind


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def send(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def is_card(token: str) -> bool:
    return len(token) == 2 and token[0] in RANKS and token[1] in SUITS


def cards_after(tokens: list[str], key: str) -> list[str]:
    """The cards that follow `key` in a key/value line (unknown keys are simply skipped)."""
    if key not in tokens:
        return []
    cards = []
    for token in tokens[tokens.index(key) + 1 :]:
        if not is_card(token):
            break
        cards.append(token)
    return cards


def value_after(tokens: list[str], key: str, default: str = "") -> str:
    if key in tokens and tokens.index(key) + 1 < len(tokens):
        return tokens[tokens.index(key) + 1]
    return default


def sum_value(card: str) -> int:
    """A=1, 2..9 face value, T/J/Q/K 0 (no sum value)."""
    return RANKS.index(card[0]) + 1 if card[0] in "A23456789" else 0


def can_capture(card: str, target: str) -> bool:
    a, b = sum_value(card), sum_value(target)
    if a and b:
        return a + b == 10
    return card[0] == target[0]  # T, J, Q, K capture the same rank only


def points(card: str, variant: str) -> int:
    """What a captured card scores (rules.md, 'Scoring a hand')."""
    rank, suit = card[0], card[1]
    if card == "As":
        return 50 if variant == "red-frog-black-frog" else 30
    if variant == "red-frog-black-frog":
        if suit not in "cs" or rank == "A":
            return 0
        return sum_value(card) or 10  # black 2-9 face value, black T-K 10
    if suit not in "dh":
        return 0
    if rank == "A":
        return 20
    return sum_value(card) if rank in "2345678" else 10  # red 9, T, J, Q, K: 10


def choose_move(hand: list[str], table: list[str], variant: str) -> tuple[str, str | None]:
    best: tuple[int, int, int] | None = None
    best_move: tuple[str, str | None] = (hand[0], None)
    for card in hand:
        targets = [t for t in table if can_capture(card, t)]
        if len(targets) == 3 and card[0] in SWEEP_RANKS and all(t[0] == card[0] for t in targets):
            options = [(targets[0], targets)]  # sweep: the fourth card takes all three
        else:
            options = [(t, [t]) for t in targets]
        for target, captured in options:
            gain = points(card, variant) + sum(points(c, variant) for c in captured)
            key = (gain, 1, 0)  # a capture also beats an equally cheap throw
            if best is None or key > best:
                best, best_move = key, (card, target)
        if not targets:
            # A throw joins the table: count how many unseen cards could capture it.
            capturers = [f"{r}{s}" for r in RANKS for s in SUITS if can_capture(f"{r}{s}", card)]
            unseen = [c for c in capturers if c != card and c not in hand]
            key = (-points(card, variant), 0, -len(unseen))
            if best is None or key > best:
                best, best_move = key, (card, None)
    return best_move


def choose_pick(offered: list[str], variant: str) -> str:
    return max(offered, key=lambda c: points(c, variant))  # max() keeps the first of equals


def main() -> int:
    variant = "classic"
    for raw in sys.stdin:
        line = raw.rstrip("\r\n")
        tokens = line.split(" ")
        keyword, rest = tokens[0], tokens[1:]
        if keyword == "chinese-ten":
            send(f"ready {NAME}")
        elif keyword == "match":
            variant = value_after(rest, "variant", "classic")
            log(f"match {value_after(rest, 'id')}: variant {variant}")
        elif keyword == "go":
            hand, table = cards_after(rest, "hand"), cards_after(rest, "table")
            card, target = choose_move(hand, table, variant)
            send(card if target is None else f"{card} {target}")
        elif keyword == "pick":
            send(choose_pick(cards_after(rest, "from"), variant))
        elif keyword == "forfeit":
            log(f"forfeited: {line}")
        elif keyword == "quit":
            return 0
        # hand, take, play, turn, score, end and unknown keywords: nothing to answer
    return 0  # EOF


if __name__ == "__main__":
    sys.exit(main())
