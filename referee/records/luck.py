"""The luck of the stock flips in a recorded hand: points a seat took from the turned cards,
measured against what an average card of the stock would have given it.

Pure code, no I/O. Duplicate seating cancels the luck of the dealt cards; what is left is the
order of the stock. For each turn, the card turned is drawn uniformly from the cards still in the
stock (no bot can see their order), so with ``f(c)`` the points the mover would take if ``c`` were
turned on the table as it is just before the flip (the card plus its best target, or the three
swept; 0 when it captures nothing),

    luck of the flip = f(card turned) - mean of f over the cards still in the stock

has conditional mean exactly 0 given everything before the flip, whatever the bots do. Summed per
seat over a hand it is the record's ``hands[i].luck``; points minus luck (the *adjusted* points)
have the same expectation as the points and, on real duplicate sets, 1.5-2 times less variance
per deal (docs/statistics.md). It is computed when the record is made and again by
:mod:`referee.records.verify`.

>>> entry = {"dealer": 0, "hands": [["5h"], ["5d"]], "layout": ["5s", "Kc"],
...          "stock": ["5c", "2c"], "turns": [
...     {"seat": 1, "play": "5d", "capture": ["5s"], "turn": "5c", "turn_capture": []},
...     {"seat": 0, "play": "5h", "capture": ["5c"], "turn": "2c", "turn_capture": []}]}
>>> hand_luck(entry, 2, Variant.CLASSIC)
[0.0, 0.0]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from referee.game.cards import Card
from referee.game.rules import PARTNER, SWEEP_RANKS, Variant

DIGITS = 4
"""Places the recorded luck is rounded to (verification compares the rounded figures)."""


def hand_luck(entry: Mapping[str, Any], players: int, variant: Variant) -> list[float]:
    """The luck of the stock flips of one recorded hand, by seat (rounded to :data:`DIGITS`).

    The record's turns are taken at their word (verify them first).

    :raises KeyError, TypeError, ValueError: for a malformed hand entry.
    """
    pts = variant.points
    table: list[int] = [Card.parse(c) for c in entry["layout"]]
    counts = [0] * 13
    for c in table:
        counts[c >> 2] += 1
    sweep = frozenset(r for r in SWEEP_RANKS if counts[r] == 3)
    table = [c for c in table if not (counts[c >> 2] == 4 and (c >> 2) in SWEEP_RANKS)]
    stock = [Card.parse(c) for c in entry["stock"]]
    luck = [0.0] * players

    def land(card: int, captured: Sequence[str]) -> None:
        if captured:
            for c in captured:
                table.remove(Card.parse(c))
        else:
            table.append(card)

    def value(card: int) -> int:
        p = PARTNER[card >> 2]
        found = [pts[t] for t in table if t >> 2 == p]
        if not found:
            return 0
        if len(found) == 3 and (card >> 2) in sweep:
            return pts[card] + sum(found)
        return pts[card] + max(found)

    for j, turn in enumerate(entry["turns"]):
        land(Card.parse(turn["play"]), turn["capture"])
        left = stock[j:]
        if not left:
            raise ValueError("more turns than stock cards")
        turned = Card.parse(turn["turn"])
        luck[int(turn["seat"])] += value(turned) - sum(value(c) for c in left) / len(left)
        land(turned, turn["turn_capture"])
    return [round(x, DIGITS) + 0.0 for x in luck]


def record_luck(record: Mapping[str, Any]) -> list[list[float]]:
    """:func:`hand_luck` of every hand of a record."""
    variant = Variant(record["variant"])
    n = len(record["players"])
    return [hand_luck(h, n, variant) for h in record["hands"]]
