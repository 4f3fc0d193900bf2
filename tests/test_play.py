"""``ct-referee play`` as a user runs it: real subprocesses in a scratch folder that holds the bots,
the record and the logs; bad commands and odd paths are one-line errors, never tracebacks."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import CLI, ROOT, needs_bwrap

pytestmark = pytest.mark.process

PEEK = """\
import os, runpy, sys
logs = os.path.join(os.getcwd(), 'game-logs')  # not named on the command line
print('seen:', sorted(os.listdir(logs)) if os.path.isdir(logs) else 'no folder', file=sys.stderr,
      flush=True)
runpy.run_path(os.path.join(os.path.dirname(__file__), 'random_bot.py'), run_name='__main__')
"""


def play(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CLI, "play", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, check=False)


def test_a_faulting_bot_shows_its_last_stderr_lines_without_a_record(folder: Path) -> None:
    (folder / "bots" / "crash.py").write_text(
        "import sys\n"
        "for line in sys.stdin:\n"
        "    if line.startswith('chinese-ten'):\n"
        "        print('ready crash', flush=True)\n"
        "    elif line.startswith('go'):\n"
        "        raise ValueError('boom in my bot')\n")
    done = play(folder, "python3 bots/crash.py", "python3 bots/random_bot.py", "--seed", "1")
    assert done.returncode == 0, done.stderr
    assert "stderr of crash (last lines):" in done.stdout
    assert "ValueError: boom in my bot" in done.stdout
    assert not list(folder.glob("*logs*"))  # nothing left behind


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A user's folder: ``bots/`` with random_bot.py and a bot that lists the logs folder."""
    bots = tmp_path / "bots"
    bots.mkdir()
    shutil.copy(ROOT / "bots" / "random_bot.py", bots / "random_bot.py")
    (bots / "peek.py").write_text(PEEK)
    return tmp_path


@needs_bwrap
def test_record_in_the_bots_folder_under_bwrap(folder: Path) -> None:
    """The record goes in the current folder, which holds the bots' folder: they must still
    start, while the logs folder is out of sight of every seat, seat 0 included (only the bots'
    own folder is bound)."""
    logs = folder / "game-logs"
    done = play(folder, "python3 bots/peek.py", "python3 bots/peek.py",
                "python3 bots/random_bot.py", "--record", "game.json", "--sandbox", "bwrap",
                "--target", "100", "--seed", "5", "--ascii")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "sandbox bwrap" in done.stdout
    record = json.loads((folder / "game.json").read_text())
    assert record["faults"] == [], record["faults"]
    for seat in (0, 1):
        log = (logs / f"{seat}-peek{'-2' * seat}.stderr").read_text()
        assert log.startswith("seen: no folder\n"), log  # the real one holds .stderr files


def test_record_and_logs_folders_are_made_before_the_match(folder: Path) -> None:
    done = play(folder, "python3 bots/random_bot.py", "python3 bots/random_bot.py",
                "--record", "out/deep/game.json", "--sandbox", "none", "--target", "100", "-q")
    assert done.returncode == 0, done.stdout + done.stderr
    assert (folder / "out" / "deep" / "game.json").is_file()
    assert (folder / "out" / "deep" / "game-logs" / "0-random_bot.stderr").is_file()


def test_a_record_path_with_brackets_is_printed_as_is(folder: Path) -> None:
    done = play(folder, "python3 bots/random_bot.py", "python3 bots/random_bot.py",
                "--record", "[red]x[/].json", "--sandbox", "none", "--target", "100", "-q")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "record: [red]x[/].json" in done.stdout
    assert (folder / "[red]x[/].json").is_file()


@pytest.mark.parametrize("command, message", [
    ("python3 bots/nope.py", "'bots/nope.py' does not exist"),
    ("python3 'bots/random_bot.py", "cannot split the command line: No closing quotation"),
    ("no-such-bot-xyz", "'no-such-bot-xyz' not found or not executable on PATH"),
    ("", "empty bot command"),
])
def test_bad_commands_are_one_line_errors_before_anything_starts(
    folder: Path, command: str, message: str,
) -> None:
    done = play(folder, "python3 bots/random_bot.py", command, "--record", "game.json",
                "--sandbox", "none", "--target", "100")
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout == ""
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert not (folder / "game.json").exists() and not (folder / "game-logs").exists()
