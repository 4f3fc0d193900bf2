"""Legal, but writes cards in upper case and tens as ``10``: accepted, with a warning."""

from base import run
from legal import first_move


def answer(hand: list[str], table: list[str]) -> str:
    return first_move(hand, table).upper().replace("T", "10")


run(answer=answer)
