"""Shell syntax in a bot command is named, with the ``sh -c`` form to use instead."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from conftest import CLI, EXAMPLES, PY
from referee.bots.command_hints import shell_syntax_warning
from referee.tournament.config import load_config


@pytest.mark.parametrize(("command", "found"), [
    ("python3 bot.py | tee log", "'|'"),
    ("python3 bot.py > out.txt", "'>'"),
    ("python3 bot.py 2> err.log", "'2>'"),
    ("python3 bot.py 2>err.log", "'2>err.log'"),
    ("python3 bot.py 2>&1", "'2>&1'"),
    ("cd bots && python3 bot.py", "'&&'"),
    ("python3 bot.py >> log", "'>>'"),
    ("python3 bot.py < in.txt", "'<'"),
    ("python3 bot.py ; echo done", "';'"),
    ("python3 bot.py &", "'&'"),
    (["python3", "bot.py", "2>", "err.log"], "'2>'"),
])
def test_shell_syntax_is_named_with_the_sh_c_form(command: str | list[str], found: str) -> None:
    warning = shell_syntax_warning(command)
    assert warning is not None and warning.startswith(f"{found} is shell syntax")
    assert "not run by a shell" in warning and "sh -c '" in warning
    assert "\n" not in warning


def test_the_sh_c_form_is_the_command_as_written() -> None:
    warning = shell_syntax_warning("python3 bot.py 2> err.log")
    assert warning is not None
    assert warning.split("write: ", 1)[1].startswith("sh -c 'python3 bot.py 2> err.log'")
    assert "stderr" in warning


@pytest.mark.parametrize("command", [
    "python3 bot.py", "python3 bot.py --depth 3 --name a-b", ["node", "bot.js", "x>y"],
    "sh -c 'python3 bot.py 2> err.log'", "/bin/bash -c 'a | b'", "python3 'unclosed",
    "java -cp out:lib/* Bot",
])
def test_ordinary_commands_get_no_warning(command: str | list[str]) -> None:
    assert shell_syntax_warning(command) is None


def test_a_tournament_file_warns_with_the_line_and_key(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_text(f"""\
entrants:
  - {{name: a, command: {PY} {EXAMPLES}/random_bot.py}}
  - name: b
    command: {PY} {EXAMPLES}/greedy_bot.py 2> err.log
players: 2
""")
    config = load_config(path)
    assert len(config.warnings) == 1
    assert config.warnings[0].startswith(f"{path}:4: entrants[2].command: '2>' is shell syntax")


@pytest.mark.process
def test_check_warns_before_it_starts(tmp_path: Path) -> None:
    done = subprocess.run([CLI, "check", f"{PY} {EXAMPLES}/random_bot.py | cat", "--sandbox",
                           "none", "--startup-ms", "3000", "--move-ms", "300", "--ascii"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.stderr.startswith("warning: '|' is shell syntax"), done.stderr
    assert f"sh -c '{PY} {EXAMPLES}/random_bot.py | cat'" in done.stderr
