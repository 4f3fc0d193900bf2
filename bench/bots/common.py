"""What the bench's variants of ``bots/greedy_bot.py`` share: its helpers (as ``g``), the
referee's lines after the greeting and the match line, and a card's possible targets."""

from __future__ import annotations

import random
import sys
import zlib
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bots"))

import greedy_bot as g


class Seat:
    """The match being played: its variant, and a generator seeded by its id."""

    def __init__(self) -> None:
        self.variant = "classic"
        self.rng = random.Random(0)


def requests(name: str, seat: Seat) -> Iterator[tuple[str, list[str]]]:
    """The referee's lines as ``(keyword, rest)`` until ``quit`` or the end of input; the
    greeting is answered ``ready <name>`` and a ``match`` line read into ``seat`` here."""
    for raw in sys.stdin:
        tokens = raw.rstrip("\r\n").split(" ")
        keyword, rest = tokens[0], tokens[1:]
        if keyword == "chinese-ten":
            g.send(f"ready {name}")
        elif keyword == "match":
            seat.variant = g.value_after(rest, "variant", "classic")
            seat.rng = random.Random(zlib.crc32(g.value_after(rest, "id").encode()))
        elif keyword == "quit":
            return
        else:
            yield keyword, rest


def targets(card: str, table: list[str]) -> list[str]:
    """The targets ``card`` may name: none where it captures nothing, or sweeps (a sweep names
    no target)."""
    found = [t for t in table if g.can_capture(card, t)]
    return [] if len(found) == 3 and card[0] in g.SWEEP_RANKS else found
