"""Hostile record files through the real CLI (``ct-referee replay`` and ``--verify``): each is
refused in one line naming it, and the valid record beside it is still checked."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import CLI, DATA
from referee.records.record import MAX_BYTES, MAX_DEPTH, RecordError, load_json, nesting_depth

pytestmark = pytest.mark.process
HEAD = '{"format": "chinese-ten-record", "version": 1, '


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CLI, "replay", *args], capture_output=True, text=True, timeout=120,
                          check=False)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    shutil.copy(DATA / "two-red.json", tmp_path / "m-valid.json")
    (tmp_path / "a-deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (tmp_path / "b-digits.json").write_text(HEAD + '"target": ' + "9" * 5000 + "}")
    (tmp_path / "c-float.json").write_text(HEAD + '"target": 1.' + "5" * 5000 + "}")
    (tmp_path / "d-deep-object.json").write_text(HEAD + '"x": ' + '{"a": ' * 50_000 + "1"
                                                 + "}" * 50_000 + "}")
    (tmp_path / "e-nan.json").write_text(HEAD + '"target": NaN}')
    (tmp_path / "f-shape.json").write_text(HEAD + '"hands": [[[[1]]]], "players": 7}')
    with open(tmp_path / "g-huge.json", "wb") as f:  # sparse: nothing written past the cap
        f.truncate(MAX_BYTES + 4096)
    return tmp_path


def test_verify_reports_each_hostile_record_in_one_line_and_checks_the_valid_one(
        folder: Path) -> None:
    done = run("--verify", str(folder))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr and done.stderr == "", done.stderr
    lines = done.stdout.splitlines()
    by_name = {Path(line.split()[1].rstrip(":")).name: line for line in lines[:-1]}
    assert by_name["m-valid.json"].startswith("ok  "), lines
    assert "nested 100000 deep" in by_name["a-deep.json"]
    assert "nested 50001 deep" in by_name["d-deep-object.json"]
    assert "a number 5000 characters long" in by_name["b-digits.json"]
    assert "a number 5002 characters long" in by_name["c-float.json"]
    assert "NaN is not a JSON number" in by_name["e-nan.json"]
    assert by_name["f-shape.json"].startswith("BAD ")
    assert "too large" in by_name["g-huge.json"]
    assert lines[-1] == "8 records: 1 ok, 7 bad"
    assert all(line.startswith("BAD ") for name, line in by_name.items() if name != "m-valid.json")


@pytest.mark.parametrize("name", ["a-deep.json", "b-digits.json", "c-float.json",
                                  "d-deep-object.json", "e-nan.json", "g-huge.json"])
def test_replay_of_a_hostile_record_is_one_error_line(folder: Path, name: str) -> None:
    done = run(str(folder / name))
    assert done.returncode == 1
    assert done.stdout == "" and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith(f"error: {folder / name}: "), done.stderr


def test_the_valid_record_still_replays(folder: Path) -> None:
    done = run(str(folder / "m-valid.json"))
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr


def test_the_bounds_leave_real_records_alone() -> None:
    for path in DATA.glob("*.json"):
        data = path.read_bytes()
        assert nesting_depth(data) <= MAX_DEPTH
        assert load_json(data) == json.loads(data)


def test_brackets_inside_strings_do_not_count() -> None:
    assert nesting_depth(b'{"a": "[[[[{{{{\\"[[[", "b": [[1]]}') == 3
    assert nesting_depth(b"") == 0
    with pytest.raises(RecordError, match="nested 33 deep"):
        load_json(b"[" * 33 + b"]" * 33)
    assert load_json(b"[" * 32 + b"]" * 32) is not None
