"""A bot that plays legally but crashes in the matches whose deal gives it an unlucky first hand.

Usage: ``dealfault.py [MODULUS]``: at its first ``go``, it exits (code 3) when the sum of its hand's
ranks is divisible by MODULUS (default 2), so whether it faults depends on the deal alone: the
same match faults the same way at any concurrency and when played again.
"""

import sys

from base import requests
from legal import RANKS, answer, cards_after, say


def main() -> None:
    modulus = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    first = True
    for line in requests("dealfault", prefixes=("go ", "pick ")):
        if first and line.startswith("go "):
            first = False
            hand = cards_after(line.split(), "hand")
            if sum(RANKS.index(c[0]) + 1 for c in hand) % modulus == 0:
                sys.exit(3)
        say(answer(line) + "\n")


if __name__ == "__main__":
    main()
