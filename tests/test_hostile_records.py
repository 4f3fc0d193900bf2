"""Hostile record files through the real CLI (``ct-referee replay`` and ``--verify``): each is
refused in one line naming it, and the valid record beside it is still checked."""

from __future__ import annotations

import gzip
import json
import resource
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
    # compressed (a tournament's games/<id>.json.gz): a valid one, a bomb of 1 GiB of text in
    # about 1 MiB, one cut short, one damaged, one whose text is too deep
    valid = (DATA / "two-red.json").read_bytes()
    (tmp_path / "n-valid.json.gz").write_bytes(gzip.compress(valid))
    (tmp_path / "h-bomb.json.gz").write_bytes(bomb(1 << 30))
    (tmp_path / "i-cut.json.gz").write_bytes(gzip.compress(valid)[:200])
    damaged = bytearray(gzip.compress(valid))
    damaged[40:60] = b"\xff" * 20
    (tmp_path / "j-damaged.json.gz").write_bytes(bytes(damaged))
    (tmp_path / "k-deep.json.gz").write_bytes(gzip.compress(b"[" * 100_000 + b"]" * 100_000))
    return tmp_path


def bomb(size: int) -> bytes:
    """gzip of a record's head then ``size`` bytes of spaces: one member a MiB, repeated (a
    file of several members is gzip too)."""
    mib = gzip.compress(b" " * (1 << 20), 9)
    return gzip.compress(HEAD.encode()) + mib * (size >> 20)


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
    assert by_name["n-valid.json.gz"].startswith("ok  "), lines
    assert "decompresses to more than 64 MiB" in by_name["h-bomb.json.gz"]
    assert "compressed, and cut short" in by_name["i-cut.json.gz"]
    assert "compressed, and damaged" in by_name["j-damaged.json.gz"]
    assert "nested 100000 deep" in by_name["k-deep.json.gz"]
    assert lines[-1] == "13 records: 2 ok, 11 bad"
    valid = ("m-valid.json", "n-valid.json.gz")
    assert all(line.startswith("BAD ") for name, line in by_name.items() if name not in valid)


def test_a_zip_bomb_is_refused_within_the_size_cap(folder: Path) -> None:
    """1 GiB of text in a 1 MiB file: read no further than the cap (64 MiB) and refused."""
    assert (folder / "h-bomb.json.gz").stat().st_size < 2 << 20
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    done = run(str(folder / "h-bomb.json.gz"))
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KiB, the largest child
    assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr
    assert "too large (it decompresses to more than 64 MiB" in done.stderr
    assert peak == before or peak < 400 << 10, peak  # never the gigabyte


@pytest.mark.parametrize("name", ["a-deep.json", "b-digits.json", "c-float.json",
                                  "d-deep-object.json", "e-nan.json", "g-huge.json",
                                  "h-bomb.json.gz", "i-cut.json.gz", "j-damaged.json.gz",
                                  "k-deep.json.gz"])
def test_replay_of_a_hostile_record_is_one_error_line(folder: Path, name: str) -> None:
    done = run(str(folder / name))
    assert done.returncode == 1
    assert done.stdout == "" and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith(f"error: {folder / name}: "), done.stderr


def test_the_valid_record_still_replays(folder: Path) -> None:
    done = run(str(folder / "m-valid.json"))
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    compressed = run(str(folder / "n-valid.json.gz"))
    assert compressed.returncode == 0 and compressed.stdout == done.stdout, compressed.stderr


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
