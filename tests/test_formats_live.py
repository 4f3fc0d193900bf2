"""Formats and ``stop`` with real bot processes: a field that settles, and a ladder that is the
same at any concurrency and after a SIGKILL."""

from __future__ import annotations

import csv
import json
import math
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import EXAMPLES, PY
from referee.tournament.run import load_config, run

pytestmark = pytest.mark.process

CLI = [PY, "-c", "from referee.cli import main; main()"]


def entrants(*specs: tuple[str, str]) -> str:
    return "entrants:\n" + "".join(f"  - name: {name}\n    command: {PY} {EXAMPLES}/{cmd}\n"
                                   for name, cmd in specs)


def test_stop_settles_a_clear_field_from_the_command_line(tmp_path: Path) -> None:
    """Two players: the twins (the same deterministic program) mirror each other exactly in
    their duplicate sets, so the test with a margin of 3 calls them a ``tie`` (the interval
    stays wider than a point); greedy is far ahead of random. Every pair is decided before the
    cap."""
    path = tmp_path / "t.yaml"
    path.write_text("name: s\n" + entrants(("random", "random_bot.py"), ("greedy", "greedy_bot.py"),
                                           ("greedy-b", "greedy_bot.py"))
                    + "players: 2\ntarget: 1000\nsandbox: none\n")
    out = tmp_path / "out"
    done = subprocess.run([*CLI, "tournament", str(path), "-o", str(out), "--stop", "0.95:3",
                           "--max-matches", "60", "--seed", "5"], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert "at confidence 0.95, ties within 3\n" in done.stdout
    assert "  stops:     once every adjacent pair is decided" in done.stdout
    assert "forecast: a pair 15 points a hand apart takes about" in done.stdout
    assert "equals tie (within 3)" in done.stdout and "the cap of 60 matches decides" in done.stdout
    assert "s: 3 entrants, at most 60 matches\n" in done.stdout
    doc = json.loads((out / "standings.json").read_text())
    assert doc["stopped"] == "settled" and doc["matches"] < 60
    names = [row["name"] for row in doc["standings"]]
    assert names[2] == "random"
    assert [(p["upper"], p["lower"], p["verdict"]) for p in doc["pairs"]] == [
        (names[0], names[1], "tie"), (names[1], "random", "stronger")]
    twins, clear = doc["pairs"]
    assert twins["diff"] == 0 and twins["low"] < 0 < twins["high"] and twins["sets"] >= 1
    assert clear["diff"] > 20 and clear["llr"] > 0 and clear["sets"] >= 1
    assert clear["evidence"] >= math.log(2 * 3 / 0.05) - math.log(2)  # passed its level
    rows = list(csv.DictReader((out / "standings.csv").open()))
    assert [r["verdict_next"] for r in rows] == ["tie", "stronger", ""]
    assert "stopped: settled" in done.stdout and "P>next: TrueSkill's probability" in done.stdout
    assert "tie +0.0 (" in done.stdout or "tie +0.0/h" in done.stdout, done.stdout


def ladder_config(tmp_path: Path) -> Path:
    path = tmp_path / "ladder.yaml"
    path.write_text("name: l\n" + entrants(
        ("random", "random_bot.py"), ("greedy", "greedy_bot.py"),
        ("random-b", "random_bot.py --seed 7"), ("greedy-b", "greedy_bot.py"),
        ("random-c", "random_bot.py --seed 3"))
        + "players: 3\nseatings: rotate\nformat: ladder\nmax_matches: 45\ntarget: 200\n"
          "sandbox: none\n")
    return path


@pytest.mark.slow
def test_a_ladder_is_the_same_at_any_concurrency_and_after_sigkill(tmp_path: Path) -> None:
    path = ladder_config(tmp_path)
    secret = tmp_path / "secret"
    secret.write_text("ab" * 32 + "\n")
    first = run(load_config(path, output=tmp_path / "one", concurrency=1),
                deal_secret=bytes.fromhex("ab" * 32))
    assert first.finished and first.stopped == "cap" and first.total == 45
    reference = (tmp_path / "one" / "standings.json").read_text()
    ids = sorted(json.loads(x)["id"] for x in
                 (tmp_path / "one" / "results.jsonl").read_text().splitlines())
    assert ids[0] == "r001-g001-s01" and len(ids) == 45 and ids[-1].startswith("r003-")
    out = tmp_path / "two"
    proc = subprocess.Popen([*CLI, "tournament", str(path), "-o", str(out), "-j", "2",
                             "--deal-secret", str(secret)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not (out / "results.jsonl").exists() or \
            (out / "results.jsonl").read_bytes().count(b"\n") < 20:  # into round 2
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=10)
    done = subprocess.run([*CLI, "tournament", str(path), "-o", str(out), "-j", "2"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "already played" in done.stdout
    assert (out / "standings.json").read_text() == reference
    again = sorted(json.loads(x)["id"] for x in (out / "results.jsonl").read_text().splitlines())
    assert again == ids


@pytest.mark.slow
def test_a_ladder_takes_a_late_entrant(tmp_path: Path) -> None:
    """Entrants added at the end (and a higher cap) continue a ladder: the rounds played stay
    as they were, and the newcomer, the most uncertain, seeds the next round's first group."""
    path = ladder_config(tmp_path)
    out = tmp_path / "out"
    assert run(load_config(path, output=out)).stopped == "cap"
    before = (out / "results.jsonl").read_text()
    path.write_text(path.read_text().replace("max_matches: 45", "max_matches: 60").replace(
        "players: 3", f"  - name: late\n    command: {PY} {EXAMPLES}/greedy_bot.py\nplayers: 3"))
    again = run(load_config(path, output=out))
    assert again.stopped == "cap" and again.total == 60 and again.played == 15
    assert (out / "results.jsonl").read_text().startswith(before)
    lines = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    # round 4's first line: a seating of group 1 (which one plays first, the secret says)
    assert "late" in lines[45]["players"] and lines[45]["id"].startswith("r004-g001-")
    assert all("late" not in x["players"] for x in lines[:45])
    assert "late" in {row.name for row in again.standings or []}
    rounds = [json.loads(x)["round"] for x in (out / "rounds.jsonl").read_text().splitlines()]
    assert rounds == [1, 2, 3, 4]


def test_a_gauntlet_with_stop_answers_is_mine_better(tmp_path: Path) -> None:
    """Every group holds the candidate and one other; each candidate-other pair gets a verdict:
    a copy of greedy ties with greedy, and beats both random bots."""
    path = tmp_path / "g.yaml"
    path.write_text("name: g\n" + entrants(
        ("random", "random_bot.py"), ("random-b", "random_bot.py --seed 3"),
        ("greedy", "greedy_bot.py"), ("mine", "greedy_bot.py"))
        + "format: gauntlet\ncandidates: [mine]\nplayers: 2\nsandbox: none\n"
          "stop: {confidence: 0.95, margin: 5}\nmax_matches: 60\n")
    outcome = run(load_config(path, output=tmp_path / "out", concurrency=2))
    assert outcome.stopped == "settled"
    lines = [json.loads(x) for x in (tmp_path / "out" / "results.jsonl").read_text().splitlines()]
    assert all("mine" in x["players"] for x in lines)
    doc = json.loads((tmp_path / "out" / "standings.json").read_text())
    verdicts = {(q["upper"], q["lower"]): q["verdict"] for q in doc["questions"]}
    assert len(verdicts) == 3 and verdicts[("mine", "random")] == "stronger"
    assert verdicts[("mine", "random-b")] == "stronger"
    assert {v for k, v in verdicts.items() if "greedy" in k} == {"tie"}
