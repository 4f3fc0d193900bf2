"""A minimal legal bot for the ``check`` tests; each sibling script breaks it in one way.

The scripts run as ``python3 tests/bots/<name>.py`` and import this file (and :mod:`legal`)
from their own folder. :func:`run` is the protocol loop; :func:`requests` is the same loop for
a bot that misbehaves at some request (``faulty``, ``hostile``, ``blocker``, ``dealfault``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator

from legal import cards_after, first_move, say


def write(line: str, flush: bool = True) -> None:
    sys.stdout.write(line + "\n")
    if flush:
        sys.stdout.flush()


def run(
    *,
    answer: Callable[[list[str], list[str]], str] = first_move,
    say: Callable[[str, bool], None] = write,
    flush_answers: bool = True,
    on_line: Callable[[str], None] | None = None,
) -> None:
    """The protocol loop: ``ready``, answers to ``go`` and ``pick``, exit at ``quit``."""
    for raw in sys.stdin:
        tokens = raw.split()
        if not tokens:
            continue
        if on_line is not None:
            on_line(tokens[0])
        if tokens[0] == "chinese-ten":
            write("ready checkbot")
        elif tokens[0] == "go":
            say(answer(cards_after(tokens, "hand"), cards_after(tokens, "table")), flush_answers)
        elif tokens[0] == "pick":
            say(cards_after(tokens, "from")[0], flush_answers)
        elif tokens[0] == "quit":
            return


def requests(name: str, *, prefixes: tuple[str, ...] = ("go", "pick"),
             until_quit: bool = True) -> Iterator[str]:
    """The protocol loop, for a bot that answers each request itself: says ``ready NAME`` at
    ``chinese-ten``, yields each line that starts with one of ``prefixes`` (the bot writes its
    answer, or does not), and ends at ``quit`` (at the end of its input only, when not
    ``until_quit``)."""
    for line in sys.stdin:
        if line.startswith("chinese-ten"):
            say(f"ready {name}\n")
        elif line.startswith(prefixes):
            yield line
        elif line.startswith("quit") and until_quit:
            return


if __name__ == "__main__":
    run()
