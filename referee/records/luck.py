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

import math
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


# -- the luck model: a control variate from the state after each flip ----------------------------

FEATURES = ("taken", "own_mover", "own_next", "own_later", "next_threat",
            "table_mover", "table_next", "table_later", "flip_next", "flip_other")
"""What :func:`flip_features` measures for a seat at each flip, on the table as the turned card
leaves it (with its best target taken, as :func:`hand_luck` assumes): ``taken``, the points the
mover takes with it (the seat is the mover); ``own_*``, the most points the seat could take next
with one card of its hand, for a seat that is the mover, the next to move, or later; ``next_threat``,
the most the next to move could take (for every other seat); ``table_*``, the points lying on the
table, by the seat's place as for ``own_*``."""
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


def flip_features(entry: Mapping[str, Any], players: int,
                  variant: Variant) -> list[list[float]]:
    """For every seat, the sum over the hand's flips of each of :data:`FEATURES` for the card
    turned minus its mean over the cards then in the stock: each term has expectation exactly 0
    given everything before the flip, whatever the bots do (the turned card is uniform among
    them), so any fixed weighting of them is a valid control variate (:func:`hand_luck_model`).

    The record's turns are taken at their word (verify them first).

    :raises KeyError, TypeError, ValueError: for a malformed hand entry.
    """
    pts = variant.points
    k = len(FEATURES)
    out = [[0.0] * k for _ in range(players)]
    table: list[int] = [Card.parse(c) for c in entry["layout"]]
    counts = [0] * 13
    for c in table:
        counts[c >> 2] += 1
    sweep = frozenset(r for r in SWEEP_RANKS if counts[r] == 3)
    table = [c for c in table if not (counts[c >> 2] == 4 and (c >> 2) in SWEEP_RANKS)]
    hands = [[Card.parse(c) for c in h] for h in entry["hands"]]
    stock = [Card.parse(c) for c in entry["stock"]]

    def land(card: int, captured: Sequence[str]) -> None:
        if captured:
            for c in captured:
                table.remove(Card.parse(c))
        else:
            table.append(card)

    for j, turn in enumerate(entry["turns"]):
        mover = int(turn["seat"])
        played = Card.parse(turn["play"])
        hands[mover].remove(played)
        land(played, turn["capture"])
        left = stock[j:]
        if not left:
            raise ValueError("more turns than stock cards")
        cnt, best, second, total = _rank_tables(table, pts)
        tp = sum(total)

        def tval(r: int, n: int, b: int, s: int) -> int:
            """What a card pairing with rank ``r`` takes beside itself (``NONE``: nothing)."""
            if n == 0:
                return NONE
            return s if (n == 3 and r in sweep) else b

        base = [tval(r, cnt[r], best[r], total[r]) for r in range(13)]
        # per seat: the best own card's points for each table rank it pairs with, and the two
        # best (value, rank) of own card + table over the ranks
        own: list[list[int]] = []
        tops: list[tuple[int, int, int]] = []
        for q in range(players):
            hv = [NONE] * 13
            for y in hands[q]:
                p = PARTNER[y >> 2]
                if pts[y] > hv[p]:
                    hv[p] = pts[y]
            own.append(hv)
            b1 = b2 = NONE
            r1 = -1
            for r in range(13):
                if hv[r] != NONE and base[r] != NONE:
                    v = hv[r] + base[r]
                    if v > b1:
                        b1, b2, r1 = v, b1, r
                    elif v > b2:
                        b2 = v
            tops.append((b1, r1, b2))
        nxt = (mover + 1) % players
        cnt_s, sum_s = [0] * 13, [0] * 13  # the stock's cards by the table rank they take
        for y in left:
            cnt_s[PARTNER[y >> 2]] += 1
            sum_s[PARTNER[y >> 2]] += pts[y]

        def term(p: int, value: int) -> int:
            return sum_s[p] + cnt_s[p] * value if value != NONE else 0

        all_terms = sum(term(p, base[p]) for p in range(13))
        feats: list[tuple[int, list[int], int, float]] = []
        for x in left:
            r = x >> 2
            p = PARTNER[r]
            if cnt[p]:
                if cnt[p] == 3 and p in sweep:
                    taken, changed, new = pts[x] + total[p], p, NONE
                    table_after = tp - total[p]
                else:
                    taken, changed = pts[x] + best[p], p
                    new = tval(p, cnt[p] - 1, second[p], total[p] - best[p])
                    table_after = tp - best[p]
            else:
                taken, changed = 0, r
                new = tval(r, cnt[r] + 1, max(best[r], pts[x]), total[r] + pts[x])
                table_after = tp + pts[x]
            g = []
            for q in range(players):
                b1, r1, b2 = tops[q]
                rest = b2 if r1 == changed else b1
                held = own[q][changed]
                here = held + new if held != NONE and new != NONE else NONE
                g.append(max(rest, here, 0))
            after = all_terms - term(changed, base[changed]) + term(changed, new)
            own_take = new if p == changed else base[p]
            if own_take != NONE:
                after -= pts[x] + own_take
            feats.append((taken, g, table_after,
                          after / (len(left) - 1) if len(left) > 1 else 0.0))
        turned = Card.parse(turn["turn"])
        index = left.index(turned)
        n_left = len(left)
        for q in range(players):
            o = (q - mover) % players
            slot = 1 if o == 0 else 2 if o == 1 else 3
            tslot = 5 if o == 0 else 6 if o == 1 else 7
            mean_own = sum(f[1][q] for f in feats) / n_left
            row = out[q]
            row[slot] += feats[index][1][q] - mean_own
            mean_tp = sum(f[2] for f in feats) / n_left
            row[tslot] += feats[index][2] - mean_tp
            if o == 0:
                row[0] += feats[index][0] - sum(f[0] for f in feats) / n_left
            if q != nxt:
                row[4] += feats[index][1][nxt] - sum(f[1][nxt] for f in feats) / n_left
            row[8 if o == 1 else 9] += feats[index][3] - sum(f[3] for f in feats) / n_left
        land(turned, turn["turn_capture"])
    return out


WEIGHTS: tuple[float, ...] = (1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
"""The frozen weights of :data:`FEATURES` (fitted by ``bench/luck_fit.py`` on sets the
tournaments it judges never played: docs/statistics.md)."""


def model_luck(entry: Mapping[str, Any], players: int, variant: Variant,
               weights: Sequence[float] = WEIGHTS) -> list[float]:
    """The luck of the stock flips of one recorded hand by the luck model: ``weights`` (the
    frozen :data:`WEIGHTS` unless given) times :func:`flip_features`, by seat, rounded to
    :data:`DIGITS`. Its expectation is exactly 0 whatever the bots do.

    :raises KeyError, TypeError, ValueError: for a malformed hand entry.
    """
    return [round(math.fsum(w * f for w, f in zip(weights, row, strict=True)), DIGITS) + 0.0
            for row in flip_features(entry, players, variant)]
