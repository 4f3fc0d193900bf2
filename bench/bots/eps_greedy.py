#!/usr/bin/env python3
"""greedy, except that with probability EPS a move is a uniformly random card of the hand (its
first target): the near-twin of ``bots/greedy_bot.py`` for ``bench/stopping.py --real``.

Run:  python3 bench/bots/eps_greedy.py [EPS]      (default 0.002; seeded by the match id)
"""

from __future__ import annotations

import random
import sys
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bots"))

import greedy_bot as g


def main() -> int:
    eps = float(sys.argv[1]) if len(sys.argv) > 1 else 0.002
    variant, rng = "classic", random.Random(0)
    for raw in sys.stdin:
        tokens = raw.rstrip("\r\n").split(" ")
        keyword, rest = tokens[0], tokens[1:]
        if keyword == "chinese-ten":
            g.send("ready eps-greedy")
        elif keyword == "match":
            variant = g.value_after(rest, "variant", "classic")
            rng = random.Random(zlib.crc32(g.value_after(rest, "id").encode()))
        elif keyword == "go":
            hand, table = g.cards_after(rest, "hand"), g.cards_after(rest, "table")
            card, target = g.choose_move(hand, table, variant)
            if rng.random() < eps:
                card = rng.choice(hand)
                targets = [t for t in table if g.can_capture(card, t)]
                sweep = len(targets) == 3 and card[0] in g.SWEEP_RANKS
                target = targets[0] if targets and not sweep else None
            g.send(card if target is None else f"{card} {target}")
        elif keyword == "pick":
            g.send(g.choose_pick(g.cards_after(rest, "from"), variant))
        elif keyword == "quit":
            return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
