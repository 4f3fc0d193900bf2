#!/usr/bin/env python3
"""A cheat for the fair-play audit (``bench/audit.py --real``): it remembers the deals it has seen
in a file (``sandbox: none``: the channel a sandbox closes) and plays differently once it has.

Run:  python3 bench/bots/remember.py gain|loss MEMORY [P]

``gain``: random in a deal it has not seen, and a greedy move with probability ``P`` (default
0.4) in one it has; ``loss``: greedy in a deal it has not seen, random in one it has. A deal is
known by its hand number and layout (the same in every seating of a set).
"""

from __future__ import annotations

import random
import sys
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bots"))

import greedy_bot as g


def main() -> int:
    kind, memory = sys.argv[1], Path(sys.argv[2])
    p = float(sys.argv[3]) if len(sys.argv) > 3 else 0.4
    variant, rng, seen = "classic", random.Random(0), False
    for raw in sys.stdin:
        tokens = raw.rstrip("\r\n").split(" ")
        keyword, rest = tokens[0], tokens[1:]
        if keyword == "chinese-ten":
            g.send("ready remember")
        elif keyword == "match":
            variant = g.value_after(rest, "variant", "classic")
            rng = random.Random(zlib.crc32(g.value_after(rest, "id").encode()))
        elif keyword == "hand":
            key = f"{rest[0]}:{' '.join(g.cards_after(rest, 'layout'))}"
            known = set(memory.read_text().split("\n")) if memory.exists() else set()
            seen = key in known
            if not seen:
                with memory.open("a") as f:
                    f.write(key + "\n")
        elif keyword in ("go", "pick"):
            greedy = (rng.random() < p) if (kind == "gain" and seen) else (
                kind == "loss" and not seen)
            if keyword == "go":
                hand, table = g.cards_after(rest, "hand"), g.cards_after(rest, "table")
                if greedy:
                    card, target = g.choose_move(hand, table, variant)
                else:
                    card = rng.choice(hand)
                    targets = [t for t in table if g.can_capture(card, t)]
                    sweep = len(targets) == 3 and card[0] in g.SWEEP_RANKS
                    target = rng.choice(targets) if targets and not sweep else None
                g.send(card if target is None else f"{card} {target}")
            else:
                offered = g.cards_after(rest, "from")
                g.send(g.choose_pick(offered, variant) if greedy else rng.choice(offered))
        elif keyword == "quit":
            return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
