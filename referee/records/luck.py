"""The luck of the stock flips in a recorded hand: points a seat took from the turned cards,
measured against what an average card of the stock would have given it (``luck of the flip =
f(card turned) - mean of f over the cards still in the stock``: mean 0 whatever the bots do).

Pure code, no I/O; computed when the record is made and again by :mod:`referee.records.verify`.
Why and how much it helps: ``docs/statistics.md``, "The luck of the stock flips".

>>> entry = {"dealer": 0, "hands": [["5h"], ["5d"]], "layout": ["5s", "Kc"],
...          "stock": ["5c", "2c"], "turns": [
...     {"seat": 1, "play": "5d", "capture": ["5s"], "turn": "5c", "turn_capture": []},
...     {"seat": 0, "play": "5h", "capture": ["5c"], "turn": "2c", "turn_capture": []}]}
>>> hand_luck(entry, 2, Variant.CLASSIC)
[0.0, 0.0]
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from referee.game.cards import Card
from referee.game.rules import PARTNER, SWEEP_RANKS, Variant

DIGITS = 4
"""Places the recorded luck is rounded to (verification compares the rounded figures)."""


def _start(entry: Mapping[str, Any]) -> tuple[list[int], frozenset[int], list[int]]:
    """A recorded hand's table after the layout specials (a dealer's four of a kind taken), the
    ranks a layout three of a kind sweeps, and the stock in order."""
    table: list[int] = [Card.parse(c) for c in entry["layout"]]
    counts = [0] * 13
    for c in table:
        counts[c >> 2] += 1
    sweep = frozenset(r for r in SWEEP_RANKS if counts[r] == 3)
    table = [c for c in table if not (counts[c >> 2] == 4 and (c >> 2) in SWEEP_RANKS)]
    return table, sweep, [Card.parse(c) for c in entry["stock"]]


def _lander(table: list[int]) -> Callable[[int, Sequence[str]], None]:
    """Lands a card on ``table``: the cards it captured leave, or it stays."""

    def land(card: int, captured: Sequence[str]) -> None:
        if captured:
            for c in captured:
                table.remove(Card.parse(c))
        else:
            table.append(card)

    return land


def hand_luck(entry: Mapping[str, Any], players: int, variant: Variant) -> list[float]:
    """The luck of the stock flips of one recorded hand, by seat (rounded to :data:`DIGITS`).

    The record's turns are taken at their word (verify them first).

    :raises KeyError, TypeError, ValueError: for a malformed hand entry.
    """
    pts = variant.points
    table, sweep, stock = _start(entry)
    luck = [0.0] * players
    land = _lander(table)

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


# -- the luck model: a control variate from the state after each flip ----------------------------

FEATURES = ("taken", "own_mover", "own_next", "own_later", "next_threat",
            "table_mover", "table_next", "table_later", "flip_next", "flip_other")
"""What :func:`flip_features` measures for a seat at each flip, on the table as the turned card
leaves it (with its best target taken, as :func:`hand_luck` assumes): ``taken``, the points the
mover takes with it (the seat is the mover); ``own_*``, the most points the seat could take next
with one card of its hand, for a seat that is the mover, the next to move, or later;
``next_threat``, the most the next to move could take (for every other seat); ``table_*``, the
points lying on the table, by the seat's place as for ``own_*``; ``flip_*``, what the next card
of the stock would take on average on that table (the next to move turns it), for the next to
move and for the others."""
NONE = -1


def _rank_tables(table: Sequence[int], pts: Sequence[int]) -> tuple[list[int], list[int],
                                                                     list[int], list[int]]:
    """Per rank: the table's count of it, its best and second-best points and their sum."""
    cnt, best, second, total = [0] * 13, [NONE] * 13, [NONE] * 13, [0] * 13
    for c in table:
        r, p = c >> 2, pts[c]
        cnt[r] += 1
        total[r] += p
        if p > best[r]:
            best[r], second[r] = p, best[r]
        elif p > second[r]:
            second[r] = p
    return cnt, best, second, total


def _takes(r: int, n: int, best: int, total: int, sweep: frozenset[int]) -> int:
    """What a card pairing with table rank ``r`` takes beside itself, with ``n`` of it on the
    table (``NONE``: nothing)."""
    if n == 0:
        return NONE
    return total if (n == 3 and r in sweep) else best


_Flip = tuple[int, list[int], int, float]
"""What :func:`flip_features` measures for one candidate card of the stock: the points the mover
takes, per seat the most it could take next with one card of its hand, the points on the
table, and what the next card of the stock would take on average."""


def _own_best(hand: Sequence[int], base: Sequence[int], pts: Sequence[int]
              ) -> tuple[list[int], tuple[int, int, int]]:
    """A seat's best card's points per table rank it pairs with, and the two best values of own
    card plus what it takes, over the ranks (value, its rank, the runner-up)."""
    held = [NONE] * 13
    for y in hand:
        p = PARTNER[y >> 2]
        held[p] = max(held[p], pts[y])
    b1 = b2 = NONE
    r1 = -1
    for r in range(13):
        if held[r] != NONE and base[r] != NONE:
            v = held[r] + base[r]
            if v > b1:
                b1, b2, r1 = v, b1, r
            elif v > b2:
                b2 = v
    return held, (b1, r1, b2)


def _candidates(table: Sequence[int], hands: Sequence[Sequence[int]], left: Sequence[int],
                sweep: frozenset[int], pts: Sequence[int]) -> dict[tuple[int, int], _Flip]:
    """:data:`_Flip` of every kind of card of ``left`` (the stock) turned on ``table``, by
    (rank, points): cards of one kind measure the same. Each needs O(seats) work: the card
    changes one rank of the table, the rest is worked out once."""
    cnt, best, second, total = _rank_tables(table, pts)
    tp = sum(total)
    base = [_takes(r, cnt[r], best[r], total[r], sweep) for r in range(13)]
    owns = [_own_best(h, base, pts) for h in hands]
    cnt_s, sum_s = [0] * 13, [0] * 13  # the stock's cards by the table rank they take
    for y in left:
        cnt_s[PARTNER[y >> 2]] += 1
        sum_s[PARTNER[y >> 2]] += pts[y]
    terms = [sum_s[p] + cnt_s[p] * base[p] if base[p] != NONE else 0 for p in range(13)]
    all_terms = sum(terms)
    rest = max(1, len(left) - 1)
    out: dict[tuple[int, int], _Flip] = {}
    for x in left:
        r, px = x >> 2, pts[x]
        if (r, px) in out:
            continue
        p = PARTNER[r]
        if cnt[p] and cnt[p] == 3 and p in sweep:
            taken, changed, new, table_after = px + total[p], p, NONE, tp - total[p]
        elif cnt[p]:
            taken, changed = px + best[p], p
            new = _takes(p, cnt[p] - 1, second[p], total[p] - best[p], sweep)
            table_after = tp - best[p]
        else:
            taken, changed = 0, r
            new = _takes(r, cnt[r] + 1, max(best[r], px), total[r] + px, sweep)
            table_after = tp + px
        own = []
        for held, (b1, r1, b2) in owns:
            h = held[changed]
            here = h + new if h != NONE and new != NONE else NONE
            own.append(max(b2 if r1 == changed else b1, here, 0))
        after = all_terms - terms[changed] + (
            sum_s[changed] + cnt_s[changed] * new if new != NONE else 0)
        own_take = new if p == changed else base[p]
        if own_take != NONE:  # the card itself is no longer in the stock
            after -= px + own_take
        out[(r, px)] = (taken, own, table_after, after / rest)
    return out


def _add_flip(out: list[list[float]], flips: Mapping[tuple[int, int], _Flip],
              left: Sequence[int], turned: int, mover: int, pts: Sequence[int]) -> None:
    """Adds each seat's features of the card turned minus their mean over the stock."""
    players = len(out)
    n = len(left)
    kinds = [flips[(x >> 2, pts[x])] for x in left]
    taken, own, table, next_flip = flips[(turned >> 2, pts[turned])]
    nxt = (mover + 1) % players
    mean_own = [sum(f[1][q] for f in kinds) / n for q in range(players)]
    d_taken = taken - sum(f[0] for f in kinds) / n
    d_table = table - sum(f[2] for f in kinds) / n
    d_flip = next_flip - sum(f[3] for f in kinds) / n
    for q in range(players):
        o = (q - mover) % players
        role = 0 if o == 0 else 1 if o == 1 else 2
        row = out[q]
        if o == 0:
            row[0] += d_taken
        row[1 + role] += own[q] - mean_own[q]
        if q != nxt:
            row[4] += own[nxt] - mean_own[nxt]
        row[5 + role] += d_table
        row[8 if o == 1 else 9] += d_flip


def flip_features(entry: Mapping[str, Any], players: int,
                  variant: Variant) -> list[list[float]]:
    """For every seat, the sum over the hand's flips of each of :data:`FEATURES` for the card
    turned minus its mean over the cards then in the stock: each term has expectation exactly 0
    given everything before the flip, whatever the bots do (the turned card is uniform among
    them), so any fixed weighting of them is a valid control variate (:func:`model_luck`).

    The record's turns are taken at their word (verify them first).

    :raises KeyError, TypeError, ValueError: for a malformed hand entry.
    """
    pts = variant.points
    out = [[0.0] * len(FEATURES) for _ in range(players)]
    table, sweep, stock = _start(entry)
    hands = [[Card.parse(c) for c in h] for h in entry["hands"]]
    land = _lander(table)

    for j, turn in enumerate(entry["turns"]):
        mover = int(turn["seat"])
        played = Card.parse(turn["play"])
        hands[mover].remove(played)
        land(played, turn["capture"])
        left = stock[j:]
        if not left:
            raise ValueError("more turns than stock cards")
        turned = Card.parse(turn["turn"])
        _add_flip(out, _candidates(table, hands, left, sweep, pts), left, turned, mover, pts)
        land(turned, turn["turn_capture"])
    return out


WEIGHTS: tuple[float, ...] = (0.394, 0.213, 0.225, 0.281, -0.225, -0.394, 0.157, 0.238, 0.399,
                              -0.399)
"""The frozen weights of :data:`FEATURES` (fitted by ``bench/luck_fit.py`` on sets the
tournaments it judges never played: docs/statistics.md)."""


MODEL = 2
"""The luck model new records are made with (the record's ``luck_model``): 1, the immediate points
of each flip (:func:`hand_luck`, records before 2026-12-02, which name no model); 2,
:data:`WEIGHTS` times :func:`flip_features`."""
IMMEDIATE: tuple[float, ...] = (1.0,) + (0.0,) * (len(FEATURES) - 1)
"""Model 1 as weights of :data:`FEATURES`: the immediate points alone."""


def weights_of(model: int) -> tuple[float, ...]:
    """The weights of luck model ``model``.

    :raises ValueError: for a model this version does not know.
    """
    if model == 1:
        return IMMEDIATE
    if model == 2:
        return WEIGHTS
    raise ValueError(f"unknown luck model {model!r} (this version knows 1 and 2)")


def model_luck(entry: Mapping[str, Any], players: int, variant: Variant,
               weights: Sequence[float] = WEIGHTS) -> list[float]:
    """The luck of the stock flips of one recorded hand by the luck model: ``weights`` (the
    frozen :data:`WEIGHTS` unless given) times :func:`flip_features`, by seat, rounded to
    :data:`DIGITS`. Its expectation is exactly 0 whatever the bots do.

    :raises KeyError, TypeError, ValueError: for a malformed hand entry.
    """
    return [round(math.fsum(w * f for w, f in zip(weights, row, strict=True)), DIGITS) + 0.0
            for row in flip_features(entry, players, variant)]
