"""The command line's lazy imports: the group lists every command without importing it, its
help lines are click's own, and a command's module is imported only when it runs."""

from __future__ import annotations

import subprocess

import click
import pytest

from conftest import PY
from referee.cli import COMMANDS, load_command, main, short_help


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_each_listed_help_line_is_the_commands_own(name: str) -> None:
    command = load_command(name)
    assert command.name == name
    for limit in range(20, 80):
        assert short_help(name, limit) == command.get_short_help_str(limit), limit


def test_the_group_lists_every_command_of_the_package() -> None:
    ctx = click.Context(main)
    assert main.list_commands(ctx) == sorted(COMMANDS)
    assert all(main.get_command(ctx, n) is not None for n in COMMANDS)


@pytest.mark.process
def test_the_groups_help_imports_no_command() -> None:
    code = ("import sys; from referee.cli import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.startswith('referee.') and "
            "m.count('.') > 1 or m in ('rich', 'yaml', 'referee.tournament')))")
    done = subprocess.run([PY, "-c", code], capture_output=True, text=True, timeout=60,
                          check=True)
    assert "Commands:" in done.stdout
    assert done.stdout.splitlines()[-1] == "['referee.protocol.escape']", done.stdout
