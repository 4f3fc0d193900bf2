"""The standings as a table on the terminal (:func:`standings_table`): the live table's top
during a tournament and the final table, as wide as the terminal lets them be."""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence

from rich import box
from rich.cells import cell_len
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table as RichTable
from rich.text import Text

from referee.protocol.escape import escape_controls
from referee.tournament.ratings import Standing
from referee.tournament.stopping import Pair
from referee.web.folder import hand_bound, pair_text

__all__ = ["DROPPED", "standings_table", "verdict_words"]


DROPPED = ("sigma", "mu", "avg#", "P>next", "games", "wins", "faults", "pts/h")
"""The columns a narrow terminal leaves out, first to last (an empty ``faults`` first of all):
``#``, ``name``, ``mu-3σ`` and ``vs next`` stay, each cell on one line (a long name is cut)."""


def standings_table(rows: list[Standing], *, title: str | None = None, limit: int | None = None,
                    compact: bool = False, pairs: Sequence[Pair] = (),
                    legend: Mapping[str, str] | None = None, bound: float | None = None,
                    width: int | None = None, confidence: float | None = None,
                    below: Sequence[str] = ()) -> RichTable:
    """The standings as a rich table (the first ``limit`` rows; ``compact``: ratings only;
    ``pairs``: a ``vs next`` column with each row's verdict on the next). ``width``: the
    columns it has room for (:data:`DROPPED` says which go first), every cell on one line;
    a name too long for what is left is cut with an ellipsis (to no fewer than 8 characters).
    ``legend``: a sentence on each column that needs one, the caption (of the columns shown,
    and which were left out). ``confidence``: the verdicts' confidence, said with a decided one
    (:func:`referee.web.folder.interval_confidence`). ``below``: lines under the rows, before
    the legend (a left-out entrant's row of its own)."""
    cols = ["#", "name", "mu", "sigma", "mu-3σ", "games", "wins", "avg#", "pts/h", "faults",
            "P>next", "vs next"]
    if compact:
        cols = [c for c in cols if c not in ("avg#", "pts/h", "faults")]
    if not pairs:
        cols.remove("vs next")
    verdicts = {p.upper: p for p in pairs}
    bound = hand_bound(None) if bound is None else bound
    cells = []
    for row in rows[:limit]:
        cells.append({
            "#": str(row.rank), "name": row.name, "mu": f"{row.mu:.2f}",
            "sigma": f"{row.sigma:.2f}", "mu-3σ": f"{row.score:.2f}", "games": str(row.matches),
            "wins": str(row.wins),
            "avg#": "-" if row.mean_rank is None else f"{row.mean_rank:.2f}",
            "pts/h": "-" if row.points_per_hand is None else f"{row.points_per_hand:.1f}",
            "faults": ", ".join(f"{k} {n}" for k, n in row.faults.items() if n) or "-",
            "P>next": "" if row.p_above_next is None else f"{row.p_above_next:.0%}",
            "vs next": verdict_words(verdicts.get(row.name), bound, confidence=confidence),
        })

    all_cols = list(cols)
    empty = all(c["faults"] == "-" for c in cells)

    def build(shown: list[str], name_width: int | None = None,
              rows: list[dict[str, str]] = cells) -> RichTable:
        caption = None
        if legend:
            gone = [c for c in all_cols if c not in shown and not (c == "faults" and empty)]
            caption = " ".join(legend[c] for c in shown if c in legend) + (
                f" Left out at this width: {', '.join(gone)} (standings.csv has every column)."
                if gone else "") + (" No faults." if empty and "faults" not in shown else "")
        if below:
            caption = "\n".join(below) + ("\n\n" + caption if caption else "")
        table = RichTable(title=title, title_justify="left", box=box.SIMPLE_HEAD,
                          caption=caption, caption_justify="left")
        for col in shown:
            table.add_column(col, justify="left" if col in ("name", "faults", "vs next")
                             else "right", no_wrap=True,
                             max_width=name_width if col == "name" else None,
                             overflow="ellipsis" if col == "name" else "fold")
        for row_cells in rows:
            table.add_row(*(Text(row_cells[c]) for c in shown))
        return table

    if width is None:
        return build(cols)
    order = (["faults"] if empty else []) + [c for c in DROPPED if c != "faults" or not empty]
    # measured on one row of each column's widest cell: the same widths, at any number of rows
    widest = [{c: max((r[c] for r in cells), key=cell_len, default="") for c in all_cols}]
    order = [c for c in order if c in cols]  # the compact table has fewer to leave out
    while order and _natural_width(build(cols, rows=widest)) > width:
        cols.remove(order.pop(0))
    excess = _natural_width(build(cols, rows=widest)) - width
    if excess <= 0:
        return build(cols)
    # the names give way, down to 8 cells: no other cell is cut
    longest = max([cell_len("name"), *(cell_len(c["name"]) for c in cells)])
    return build(cols, name_width=max(8, longest - excess))


def _natural_width(table: RichTable) -> int:
    """The width ``table`` takes with no cell wrapped nor cut (its title and caption aside)."""
    console = Console(width=100_000, file=io.StringIO())
    saved = table.title, table.caption
    table.title = table.caption = None
    try:
        return Measurement.get(console, console.options, table).maximum
    finally:
        table.title, table.caption = saved


def verdict_words(pair: Pair | None, bound: float, *, short: bool = True,
             confidence: float | None = None) -> str:
    """The verdict in words (:func:`referee.web.folder.pair_text`): ``too early to tell``
    while its interval measures nothing yet."""
    return "" if pair is None else escape_controls(
        pair_text(pair.to_json(), bound, short=short, confidence=confidence))
