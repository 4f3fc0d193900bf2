"""``ct-referee`` alone shows the help, laid out as help, not squeezed into one error line."""

from __future__ import annotations

from click.testing import CliRunner

from referee.cli import main


def test_no_command_shows_the_help_with_its_lines() -> None:
    result = CliRunner().invoke(main, [], prog_name="ct-referee")
    assert result.exit_code in (0, 2), result.output  # 0 under click 8.1, 2 from click 8.2
    lines = result.output.splitlines()
    assert lines[0].startswith("Usage: ct-referee"), result.output
    assert not any(line.startswith("error:") for line in lines), result.output
    assert any(line.split()[:1] == ["tournament"] for line in lines), result.output


def test_a_usage_mistake_is_still_one_error_line() -> None:
    result = CliRunner().invoke(main, ["bogus"])
    assert result.exit_code == 2
    assert result.output.startswith("error: ") and result.output.count("\n") == 1, result.output
