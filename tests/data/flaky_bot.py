#!/usr/bin/env python3
"""A bot that plays the first legal move for N answers, then misbehaves.

Run:  python3 flaky_bot.py MODE N   (MODE: exit, illegal, garbled or sleep)
"""

import sys
import time

RANKS = "A23456789TJQK"


def value(card: str) -> int:
    return RANKS.index(card[0]) + 1 if card[0] in "A23456789" else 0


def captures(card: str, target: str) -> bool:
    a, b = value(card), value(target)
    return a + b == 10 if a and b else card[0] == target[0]


def after(tokens: list[str], key: str) -> list[str]:
    out = []
    for token in tokens[tokens.index(key) + 1:]:
        if len(token) != 2:
            break
        out.append(token)
    return out


def main(mode: str, good: int) -> None:
    answered = 0
    for line in sys.stdin:
        tokens = line.split()
        if tokens[0] == "chinese-ten":
            print("ready flaky", flush=True)
        elif tokens[0] == "quit":
            return
        elif tokens[0] in ("go", "pick"):
            if answered == good:
                if mode == "exit":
                    sys.exit(0)
                if mode == "sleep":
                    time.sleep(30)
                print("hello" if mode == "garbled" else "As Ks", flush=True)  # Ks: never legal
                continue
            answered += 1
            if tokens[0] == "pick":
                print(after(tokens, "from")[0], flush=True)
                continue
            hand, table = after(tokens, "hand"), after(tokens, "table")
            card = hand[0]
            found = [t for t in table if captures(card, t)]
            print(f"{card} {found[0]}" if found else card, flush=True)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
