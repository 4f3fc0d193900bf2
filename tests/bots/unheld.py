"""Answers ``go`` with a card it does not hold."""

from base import RANKS, run


def answer(hand: list[str], table: list[str]) -> str:
    return next(r + s for r in RANKS for s in "cdhs" if r + s not in hand + table)


run(answer=answer)
