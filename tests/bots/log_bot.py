#!/usr/bin/env python3
"""A bot that writes every line it receives to the file named by its first argument and plays
the first legal move (the first offered card for a pick)."""

import sys

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


def main(path: str) -> None:
    with open(path, "w") as log:
        for line in sys.stdin:
            log.write(line)
            log.flush()
            tokens = line.split()
            if tokens[0] == "chinese-ten":
                print("ready log", flush=True)
            elif tokens[0] == "quit":
                return
            elif tokens[0] == "pick":
                print(after(tokens, "from")[0], flush=True)
            elif tokens[0] == "go":
                card = after(tokens, "hand")[0]
                found = [t for t in after(tokens, "table") if captures(card, t)]
                print(f"{card} {found[0]}" if found else card, flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
