"""Legal, and writes ``info`` comments before its answers and between requests: allowed."""

from base import run, write
from legal import first_move


def answer(hand: list[str], table: list[str]) -> str:
    move = first_move(hand, table)
    write(f"info considering {len(hand)} cards, table {' '.join(table) or 'empty'}")
    return move


def on_line(keyword: str) -> None:
    if keyword == "score":
        write("info hand over")  # no request pending: still fine, it is a comment


run(answer=answer, on_line=on_line)
