"""Every error of the command line is one line, in one style: ``error: <lowercase message>``,
with no Python in it (no ``None``, no ``[Errno …]``, no traceback)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from conftest import CLI, EXAMPLES, PY

pytestmark = pytest.mark.process
BOT = f"{PY} {EXAMPLES / 'random_bot.py'}"


def cases(tmp: Path) -> list[list[str]]:
    (tmp / "folder").mkdir()
    (tmp / "standings.json").write_text(json.dumps({"standings": []}))
    (tmp / "other.json").write_text(json.dumps({"format": "pgn"}))
    (tmp / "binary.json").write_bytes(b"\xff\xfe\x00")
    (tmp / "bad.yaml").write_text("entrants: 3\nplayers: 9\n")
    return [
        ["play"],
        ["play", BOT],
        ["play", "--seed", "x", BOT, BOT],
        ["bogus"],
        ["tournament", str(tmp / "folder")],
        ["tournament", str(tmp / "missing.yaml")],
        ["tournament", str(tmp / "bad.yaml")],
        ["replay", str(tmp / "folder")],
        ["replay", str(tmp / "standings.json")],
        ["replay", str(tmp / "other.json")],
        ["replay", str(tmp / "binary.json")],
        ["replay", str(tmp / "missing.json")],
        ["replay", str(tmp / "standings.json"), "--html", str(tmp / "folder")],
        ["play", BOT, BOT, "--record", str(tmp / "folder")],
        ["check", BOT, "--transcript", str(tmp / "folder")],
        ["check", "no-such-program-xyz"],
        ["report", str(tmp / "folder")],
    ]


@pytest.mark.parametrize("index", range(17))
def test_an_error_is_one_line_in_one_style(tmp_path: Path, index: int) -> None:
    args = cases(tmp_path)[index]
    done = subprocess.run([CLI, *args], capture_output=True, text=True, timeout=60,
                          check=False, cwd=tmp_path)
    assert done.returncode in (1, 2), done
    lines = done.stderr.splitlines()
    assert lines and all(line.startswith("error: ") for line in lines), done.stderr
    if args[0] != "tournament":  # a configuration says every mistake, one line each
        assert len(lines) == 1, done.stderr
    text = done.stderr
    for leak in ("Errno", "None", "Traceback", "Error:", "Usage:"):
        assert leak not in text, text
    assert all(line[7:8].islower() or not line[7:8].isalpha() for line in lines), text
