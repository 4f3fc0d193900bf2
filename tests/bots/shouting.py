"""Legal, but writes cards in upper case and tens as ``10``: accepted, with a warning."""

from base import legal_move, run


def answer(hand: list[str], table: list[str]) -> str:
    return legal_move(hand, table).upper().replace("T", "10")


run(answer=answer)
