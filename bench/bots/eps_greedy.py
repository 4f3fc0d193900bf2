#!/usr/bin/env python3
"""greedy, except that with probability EPS a move is a uniformly random card of the hand (its
first target): the near-twin of ``bots/greedy_bot.py`` for ``bench/stopping.py --real``.

Run:  python3 bench/bots/eps_greedy.py [EPS]      (default 0.002; seeded by the match id)
"""

from __future__ import annotations

import sys

from common import Seat, g, requests, targets


def main() -> int:
    eps = float(sys.argv[1]) if len(sys.argv) > 1 else 0.002
    seat = Seat()
    for keyword, rest in requests("eps-greedy", seat):
        if keyword == "go":
            hand, table = g.cards_after(rest, "hand"), g.cards_after(rest, "table")
            card, target = g.choose_move(hand, table, seat.variant)
            if seat.rng.random() < eps:
                card = seat.rng.choice(hand)
                named = targets(card, table)
                target = named[0] if named else None
            g.send(card if target is None else f"{card} {target}")
        elif keyword == "pick":
            g.send(g.choose_pick(g.cards_after(rest, "from"), seat.variant))
    return 0


if __name__ == "__main__":
    sys.exit(main())
