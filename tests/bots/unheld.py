"""Answers ``go`` with a card it does not hold."""

from base import run
from legal import RANKS, SUITS


def answer(hand: list[str], table: list[str]) -> str:
    return next(r + s for r in RANKS for s in SUITS if r + s not in hand + table)


run(answer=answer)
