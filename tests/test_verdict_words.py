"""How a verdict on a pair is worded, from the records of real tournaments of the example bots
(greedy against random, through the command line, the defaults): two sets decide it, and the
words say so (``95% sure``, the difference and its interval's ends); ``open`` with its interval
while a pair is not yet told apart, ``too early to tell`` only while the interval measures
nothing. The ends printed are the interval's own: it is not centred on the difference."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import PY, ROOT, tournament_yaml
from referee.web.folder import headline, interval_confidence, interval_words, pair_text

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
    ends = interval_words(pair["diff"], pair["low"], pair["high"])  # rounded outward
    assert row_words(data, "greedy") == f"stronger {ends} pts/hand, 95% sure, 2 sets"
    assert f"stronger {ends}/h, 2 sets" in shown, shown
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
    ``open`` where the interval says ``weaker``; the words say what it says, with or without its
    ends."""
    wide = {"upper": "cand", "lower": "a", "verdict": "open", "diff": -70.0, "low": -138.0,
            "high": -2.0, "sets": 2}
    assert pair_text(wide, 240, confidence=0.95) == (
        "weaker -70.0 pts/hand (at most -2.0), 95% sure, 2 sets")
    assert pair_text(wide, 240, short=True, confidence=0.95) == (
        "weaker -70.0/h (at most -2.0), 2 sets")
    assert pair_text(wide, 240).startswith("open: too early to tell")  # confidence unknown
    narrow = wide | {"diff": -7.0, "low": -12.0, "high": -2.0, "sets": 9}
    assert pair_text(narrow, 240, confidence=0.95) == (
        "weaker -7.0 (-12.0 to -2.0) pts/hand, 95% sure, 9 sets")
    spans = narrow | {"diff": 5.5, "low": -20.0, "high": 31.0}
    assert pair_text(spans, 240, confidence=0.95) == "open +5.5 (-20.0 to +31.0) pts/hand, 9 sets"
    assert pair_text(spans, 240) == "open +5.5 (-20.0 to +31.0) pts/hand, 9 sets"


def printed_ends(words: str) -> tuple[float, float]:
    """The two ends an interval is printed with: ``(+0.1 to +20.9)``, the first such."""
    found = re.search(r"([+-]\d+\.\d+) to ([+-]\d+\.\d+)", words)
    assert found is not None, words
    return float(found[1]), float(found[2])


def test_the_printed_bounds_are_the_intervals_for_a_skewed_interval() -> None:
    """An anytime-valid interval is not centred on the observed difference: +6.7 with the
    interval [+0.07, +20.9]. Printed as ``+6.7 ± 10.4`` a reader would take it for -3.7 to
    +17.1, across 0 for a verdict that says stronger; every place that words a verdict prints
    the interval's own ends instead."""
    skewed = {"upper": "mc", "lower": "greedy", "verdict": "stronger", "diff": 6.7,
              "low": 0.07, "high": 20.9, "sets": 4}
    ends = (0.07, 20.9)  # rounded outward; an end that would read 0.0 keeps two digits
    said = {
        "page": pair_text(skewed, 240, confidence=0.95),
        "terminal": pair_text(skewed, 240, short=True, confidence=0.95),
        "headline": headline([{"name": "mc"}, {"name": "greedy"}], [skewed], 16, final=True,
                             stopped="settled"),
        "live headline": headline([{"name": "mc"}, {"name": "greedy"}], [skewed], 16,
                                  final=False, stopped=None),
    }
    for where, words in said.items():
        assert printed_ends(words) == ends, (where, words)
        assert "±" not in words, (where, words)
    assert said["page"] == "stronger +6.7 (+0.07 to +20.9) pts/hand, 95% sure, 4 sets"
    assert said["terminal"] == "stronger +6.7 (+0.07 to +20.9)/h, 4 sets"
    assert said["headline"] == ("mc wins: stronger than greedy by 6.7 points a hand (+0.07 to "
                                "+20.9, adjusted for luck), decided after 16 matches")
    # the other way, and not yet told apart: skewed below the difference
    still = skewed | {"verdict": "open", "diff": -1.5, "low": -30.2, "high": 2.4}
    words = headline([{"name": "mc"}, {"name": "greedy"}], [still], 16, final=True,
                     stopped="cap")
    assert words.endswith("(-1.5 points a hand, -30.2 to +2.4, adjusted for luck)"), words
    words = pair_text(still, 240)  # the league's page says the same (league/page.py)
    assert printed_ends(words) == (-30.2, 2.4) and "±" not in words, words
