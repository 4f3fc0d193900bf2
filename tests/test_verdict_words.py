"""How a verdict on a pair is worded, from the records of real tournaments of the example bots
(greedy against random, through the command line, the defaults): two sets decide it, and the
words say so (``95% sure``, the difference and its ±); ``open`` with its ± while a pair is not
yet told apart, ``too early to tell`` only while the ± measures nothing."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import PY, ROOT, tournament_yaml
from referee.web.folder import interval_confidence, pair_text

CLI = [PY, "-c", "from referee.cli import main; main()"]


def played(tmp_path: Path, rounds: int) -> tuple[dict[str, Any], dict[str, Any], str]:
    """greedy against random, 2 seats, ``rounds`` duplicate sets of the same fixed deals
    (a fixed deal secret; the random bot seeds itself from the match id): the pair of
    ``standings.json``, the report's data and what the command printed (piped)."""
    config = tournament_yaml(tmp_path, {
        "random": [PY, str(ROOT / "bots" / "random_bot.py")],
        "greedy": [PY, str(ROOT / "bots" / "greedy_bot.py")],
    }, name="gr", players=2, target=1000, sandbox="none", concurrency=2)
    secret = tmp_path / "secret"
    secret.write_text(f"{7:064x}\n")
    out = tmp_path / f"out{rounds}"
    done = subprocess.run([*CLI, "tournament", str(config), "-o", str(out), "--rounds",
                           str(rounds), "--deal-secret", str(secret)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    [pair] = json.loads((out / "standings.json").read_text())["pairs"]
    text = (out / "report" / "data.js").read_text()
    data = json.loads(text[len("window.CT_REPORT = "):-2])
    return pair, data, done.stdout


def row_words(data: dict[str, Any], name: str) -> str:
    [row] = [r for r in data["rows"] if r[data["columns"].index("name")] == name]
    words = row[data["columns"].index("verdict")][5]
    assert isinstance(words, str)
    return words


@pytest.mark.process
def test_without_stop_two_sets_decide_greedy_over_random_and_the_words_say_so(
        tmp_path: Path) -> None:
    # 2 sets: greedy ahead by some 30 points a hand, a deal's difference varying by about 10:
    # decided, and the words say how sure
    pair, data, shown = played(tmp_path, 2)
    assert pair["verdict"] == "stronger" and pair["low"] > 0 and pair["diff"] > 20, pair
    half = (pair["high"] - pair["low"]) / 2
    assert row_words(data, "greedy") == (
        f"stronger {pair['diff']:+.1f} ± {half:.1f} pts/hand, 95% sure, 2 sets")
    assert f"stronger {pair['diff']:+.1f} ± {half:.1f}/h, 2 sets" in shown, shown
    said = " ".join(shown.split())
    assert "vs next: the verdict on the next row at confidence 0.95 (stronger: decided; open: " \
           "not yet told apart)" in said, shown
    assert "order: TrueSkill's mu-3σ" in said, shown


def test_the_confidence_of_the_verdicts_is_the_stops_or_the_default() -> None:
    assert interval_confidence({"name": "t"}) == 0.95
    assert interval_confidence({"stop": {"confidence": 0.99, "margin": 0}}) == 0.99
    assert interval_confidence({"stop": {"confidence": 0.9, "margin": 3}}) == 0.9
    assert interval_confidence(None) is None  # unknown: the words of old
    assert interval_confidence({"stop": "nonsense"}) is None


def test_an_interval_below_0_says_weaker_not_too_early() -> None:
    """A gauntlet's question asked out of order (the candidate below): ``judge`` reports
    ``open`` where the interval says ``weaker``; the words say what it says, with or without a ±
    figure."""
    wide = {"upper": "cand", "lower": "a", "verdict": "open", "diff": -70.0, "low": -138.0,
            "high": -2.0, "sets": 2}
    assert pair_text(wide, 240, confidence=0.95) == (
        "weaker -70.0 pts/hand (at most -2.0), 95% sure, 2 sets")
    assert pair_text(wide, 240, short=True, confidence=0.95) == (
        "weaker -70.0/h (at most -2.0), 2 sets")
    assert pair_text(wide, 240).startswith("open: too early to tell")  # confidence unknown
    narrow = wide | {"diff": -7.0, "low": -12.0, "high": -2.0, "sets": 9}
    assert pair_text(narrow, 240, confidence=0.95) == "weaker -7.0 ± 5.0 pts/hand, 95% sure, 9 sets"
    spans = narrow | {"diff": 5.5, "low": -20.0, "high": 31.0}
    assert pair_text(spans, 240, confidence=0.95) == "open +5.5 ± 25.5 pts/hand, 9 sets"
    assert pair_text(spans, 240) == "open +5.5 ± 25.5 pts/hand, 9 sets"
