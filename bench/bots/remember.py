#!/usr/bin/env python3
"""A cheat for the fair-play audit (``bench/audit.py --real``): it remembers the deals it has seen
in a file (``sandbox: none``: the channel a sandbox closes) and plays differently once it has.

Run:  python3 bench/bots/remember.py gain|loss MEMORY [P]

``gain``: random in a deal it has not seen, and a greedy move with probability ``P`` (default
0.4) in one it has; ``loss``: greedy in a deal it has not seen, random in one it has. A deal is
known by its hand number and layout (the same in every seating of a set).
"""

from __future__ import annotations

import sys
from pathlib import Path

from common import Seat, g, requests, targets


def main() -> int:
    kind, memory = sys.argv[1], Path(sys.argv[2])
    p = float(sys.argv[3]) if len(sys.argv) > 3 else 0.4
    seat, seen = Seat(), False
    for keyword, rest in requests("remember", seat):
        if keyword == "hand":
            key = f"{rest[0]}:{' '.join(g.cards_after(rest, 'layout'))}"
            known = set(memory.read_text().split("\n")) if memory.exists() else set()
            seen = key in known
            if not seen:
                with memory.open("a") as f:
                    f.write(key + "\n")
        elif keyword in ("go", "pick"):
            greedy = (seat.rng.random() < p) if (kind == "gain" and seen) else (
                kind == "loss" and not seen)
            if keyword == "go":
                hand, table = g.cards_after(rest, "hand"), g.cards_after(rest, "table")
                if greedy:
                    card, target = g.choose_move(hand, table, seat.variant)
                else:
                    card = seat.rng.choice(hand)
                    named = targets(card, table)
                    target = seat.rng.choice(named) if named else None
                g.send(card if target is None else f"{card} {target}")
            else:
                offered = g.cards_after(rest, "from")
                g.send(g.choose_pick(offered, seat.variant) if greedy
                       else seat.rng.choice(offered))
    return 0


if __name__ == "__main__":
    sys.exit(main())
