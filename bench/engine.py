"""Engine speed: random legal 3-player classic hands per second, in-process, on one core.

Two figures: hands played through the public move API (``legal_moves``/``play``/``pick``, what the
referee uses), and hands finished by :meth:`Hand.rollout` (the simulation fast path). Both include
the shuffle and deal. The last line is the roll-out figure.
"""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from referee.game.rules import Deal, Hand, Variant


def api_hand(rng: random.Random) -> None:
    hand = Hand(Deal.random(3, rng), dealer=0, variant=Variant.CLASSIC)
    while not hand.is_over():
        if hand.pick_card is not None:
            hand.pick(rng.choice(hand.pick_options))
        else:
            hand.play(*rng.choice(hand.legal_moves()))


def rollout_hand(rng: random.Random) -> None:
    Hand(Deal.random(3, rng), dealer=0, variant=Variant.CLASSIC).rollout(rng)


def measure(fn: Callable[[random.Random], object], seconds: float,
            clock: Callable[[], float] = time.perf_counter) -> float:
    """Calls of ``fn`` a second of ``clock``, in batches of 200 for ``seconds`` at least."""
    rng = random.Random(1)
    n = 0
    start = clock()
    end = start + seconds
    while True:
        for _ in range(200):
            fn(rng)
        n += 200
        now = clock()
        if now >= end:
            return n / (now - start)


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    api = measure(api_hand, seconds)
    print(f"engine (legal_moves/play/pick API): {api:,.0f} hands/s")
    fast = measure(rollout_hand, seconds)
    print(f"engine: {fast:.0f} hands/s")


if __name__ == "__main__":
    main()
