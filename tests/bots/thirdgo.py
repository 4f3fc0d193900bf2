"""Plays legally, but answers the third ``go`` of each process with a card it does not hold: a
failure between the checked situations (no step of its own)."""

from base import run
from legal import RANKS, SUITS, first_move

gos = 0


def answer(hand: list[str], table: list[str]) -> str:
    global gos
    gos += 1
    if gos == 3:
        return next(r + s for r in RANKS for s in SUITS if r + s not in hand + table)
    return first_move(hand, table)


run(answer=answer)
