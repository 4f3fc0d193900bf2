"""``referee.cli.hang``: a line wrapped under its own text, by cells, nothing lost."""

from __future__ import annotations

from rich.cells import cell_len

from referee.cli.hang import hang

RUNNING = ("  running:   concurrency 2; the seatings of a set never at once, each match on one "
           "CPU (affinity: 0, 1)")


def words(text: str) -> list[str]:
    return text.split()


def test_a_long_line_hangs_under_its_text_and_keeps_every_word() -> None:
    assert hang(RUNNING, 80, 13) == (
        "  running:   concurrency 2; the seatings of a set never at once, each match on\n"
        "             one CPU (affinity: 0, 1)")
    for width in (30, 40, 60):
        lines = hang(RUNNING, width, 13).splitlines()
        assert all(cell_len(line) <= width and line == line.rstrip() for line in lines), lines
        assert all(line.startswith(" " * 13) for line in lines[1:]), lines
        assert words("\n".join(lines)) == words(RUNNING)


def test_a_line_that_fits_is_left_as_it_is() -> None:
    assert hang("  stops:     when every planned match is played  ", 80, 13) == \
        "  stops:     when every planned match is played  "


def test_cells_not_characters_and_no_markup() -> None:
    line = "fault: m1 名前名前名前名前名前 (seat 0) crash in hand 1: [red]exited[/] with code 3"
    lines = hang(line, 30, 7).splitlines()
    assert all(cell_len(x) <= 30 for x in lines), lines
    assert "[red]exited[/]" in " ".join(lines)


def test_a_terminal_too_narrow_for_the_indent_keeps_two_spaces() -> None:
    lines = hang(RUNNING, 24, 13).splitlines()
    assert all(cell_len(x) <= 24 for x in lines) and all(x.startswith("  ") for x in lines)
    assert not any(x.startswith(" " * 3) for x in lines[1:]), lines
    assert words("\n".join(lines)) == words(RUNNING)
