"""The cost of ``Hand.view(seat)`` and of a request line built on it (``narration.Ask``): the
referee builds one of each per decision. Prints microseconds per call (best of several runs)
on 200 positions of 4-player hands, 0 to 19 turns in."""

from __future__ import annotations

import random
import sys
import timeit
from pathlib import Path

sys.path[0] = str(Path(__file__).resolve().parent.parent)  # not bench/: bench/referee.py

from referee.game.rules import Deal, Hand  # noqa: E402
from referee.protocol import narration  # noqa: E402


def positions() -> list[Hand]:
    rng = random.Random(1)
    hands = []
    for i in range(200):
        hand = Hand(Deal.from_seed(4, f"view:{i}"), dealer=0)
        for _ in range(rng.randrange(20)):
            if hand.pick_card is not None:
                hand.pick(hand.pick_options[0])
            else:
                hand.play(*rng.choice(hand.legal_moves()))
        hands.append(hand)
    return hands


def main() -> None:
    hands = positions()

    def views() -> None:
        for h in hands:
            h.view(h.to_move)

    def requests() -> None:
        for h in hands:
            narration.Ask("go", h.view(h.to_move)).line(1000)

    for name, run in (("Hand.view", views), ("view + request line", requests)):
        best = min(timeit.repeat(run, number=50, repeat=15)) / (50 * len(hands))
        print(f"{name}: {best * 1e6:.2f} us")


if __name__ == "__main__":
    main()
