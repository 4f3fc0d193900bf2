#!/usr/bin/env python3
"""random-bot: a Chinese Ten starter bot that plays a uniformly random LEGAL move.

Run:  python3 bots/random_bot.py [--seed N]

Copy this file to start your own Python bot: only `choose_move` and `choose_pick` need to change.
The protocol (see protocol.md) in short: the referee writes one line per message to our stdin; we
answer `ready <name>` to the greeting, `<card> [<target>]` to `go`, `<target>` to `pick`, and stay
silent on every other line. Logging goes to stderr only; stdout carries answers and nothing else.

Seeding: with `--seed N` the seed is N; otherwise it is crc32("<match id>:<seat>") from the
`match` line (never Python's hash(), which changes between runs). Every decision draws from a
generator seeded with that seed plus the request line itself, so the same bot asked the same
question in the same match always gives the same answer, even if earlier requests were skipped
(the referee's replay can re-ask a single decision).
"""

from __future__ import annotations

import argparse
import random
import sys
import zlib

NAME = "random-bot 1.0"
RANKS = "A23456789TJQK"
SUITS = "cdhs"


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def send(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()  # the referee waits for the line: always flush


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
        return a + b == 10  # A+9, 2+8, 3+7, 4+6, 5+5
    return card[0] == target[0]  # T, J, Q, K capture the same rank only


def legal_moves(hand: list[str], table: list[str]) -> list[tuple[str, str | None]]:
    """Every legal answer to `go`: (card, target) if the card can capture, else (card, None)."""
    moves: list[tuple[str, str | None]] = []
    for card in hand:
        targets = [t for t in table if can_capture(card, t)]
        moves.extend((card, t) for t in targets)
        if not targets:
            moves.append((card, None))
    return moves


def choose_move(hand: list[str], table: list[str], rng: random.Random) -> tuple[str, str | None]:
    return rng.choice(legal_moves(hand, table))


def choose_pick(offered: list[str], rng: random.Random) -> str:
    return rng.choice(offered)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=None, help="fixed seed for every match")
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else 0

    for raw in sys.stdin:
        line = raw.rstrip("\r\n")
        tokens = line.split(" ")
        keyword, rest = tokens[0], tokens[1:]
        if keyword == "chinese-ten":
            send(f"ready {NAME}")
        elif keyword == "match":
            match_id, seat = value_after(rest, "id"), value_after(rest, "seat")
            if args.seed is None:
                seed = zlib.crc32(f"{match_id}:{seat}".encode())
            log(f"match {match_id} seat {seat}: seed {seed}")
        elif keyword == "go":
            rng = random.Random(f"{seed}|{line}")
            card, target = choose_move(cards_after(rest, "hand"), cards_after(rest, "table"), rng)
            send(card if target is None else f"{card} {target}")
        elif keyword == "pick":
            rng = random.Random(f"{seed}|{line}")
            send(choose_pick(cards_after(rest, "from"), rng))
        elif keyword == "forfeit":
            log(f"forfeited: {line}")
        elif keyword == "quit":
            return 0
        # hand, take, play, turn, score, end and unknown keywords: nothing to answer
    return 0  # EOF


if __name__ == "__main__":
    sys.exit(main())
