"""Lines that wrap under their own text (a hanging indent), for a terminal of any width."""

from __future__ import annotations

import io

from rich.cells import cell_len
from rich.console import Console
from rich.text import Text

_MEASURE = Console(width=100_000, file=io.StringIO(), highlight=False, emoji=False)
ROOM = 16
"""The fewest cells a hanging indent leaves for the text: narrower, the indent shrinks to 2."""


def hang(line: str, width: int, indent: int) -> str:
    """``line`` wrapped to ``width`` cells (a terminal's), every line after the first starting
    ``indent`` spaces in (under the text after its label); a word longer than the room left is
    cut where the line ends. A line that fits is returned as it is."""
    if cell_len(line) <= width or width < 4:
        return line
    if width - indent < ROOM:
        indent = min(2, indent)
    head, rest = line[:indent], line[indent:]
    wrapped = Text(rest).wrap(_MEASURE, width - indent, overflow="fold")
    return "\n".join((head if i == 0 else " " * indent) + part.plain.rstrip()
                     for i, part in enumerate(wrapped))
