"""Strength of the example bots, with real processes: mc-bot passes ``ct-referee check`` within
its time, a short duplicate tournament ranks greedy and mc above random, and
``tournaments/strength.yaml`` is a valid duplicate tournament of the three."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from plans import planned

from conftest import PY, ROOT, tournament_yaml
from referee.tournament.run import load_config, run

CLI = [str(Path(sys.executable).parent / "ct-referee")]


@pytest.mark.process
@pytest.mark.slow
def test_mc_bot_passes_check_within_its_time() -> None:
    """Every situation ``check`` covers (several targets, picks, sweeps, takes, no capture, 2-4
    players, both variants, several matches): legal answers, each well inside ``--move-ms``."""
    done = subprocess.run(
        [*CLI, "check", "python3 bots/mc_bot.py", "--move-ms", "300", "--sandbox", "none",
         "--ascii"], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"^all \d+ steps passed$", done.stdout, re.MULTILINE), done.stdout
    assert "FAIL" not in done.stdout
    # Within --move-ms: an answer later than 300 ms is a timeout, a step that fails. (mc thinks
    # min(ms / 2, ms - 150) = 150 ms: tests/test_mc_bot.py; its answers' times from outside:
    # bench/bot_clock.py.)
    assert re.search(r"slowest [\d.]+ ms", done.stdout), done.stdout


@pytest.mark.process
@pytest.mark.slow
@pytest.mark.deep
def test_short_duplicate_tournament_ranks_mc_and_greedy_above_random(tmp_path: Path) -> None:
    config = tournament_yaml(tmp_path, {
        "random": f"{PY} {ROOT}/bots/random_bot.py",
        "greedy": f"{PY} {ROOT}/bots/greedy_bot.py",
        "mc": f"{PY} {ROOT}/bots/mc_bot.py --max-ms 20",
    }, name="strength-test", players=3, seatings="all", rounds=2, target=500, concurrency=2,
        sandbox="none", limits={"move_ms": 1000})
    outcome = run(load_config(config, output=tmp_path / "out"))
    assert outcome.finished and outcome.total == 12
    assert outcome.standings is not None
    rows = {row.name: row for row in outcome.standings}
    assert outcome.standings[-1].name == "random", [r.name for r in outcome.standings]
    assert rows["mc"].mu > rows["random"].mu and rows["greedy"].mu > rows["random"].mu
    assert all(sum(row.faults.values()) == 0 for row in outcome.standings)  # mc kept its time


def test_strength_tournament_file_is_a_duplicate_tournament_of_the_three() -> None:
    config = load_config(ROOT / "tournaments" / "strength.yaml", output=ROOT / "results" / "x")
    assert [e.name for e in config.entrants] == ["random", "greedy", "mc"]
    assert config.seatings == "all" and config.players == 3
    assert config.limits.move_ms == 1000
    mc = config.entrants[2].command
    argv = shlex.split(mc) if isinstance(mc, str) else list(mc)
    max_ms = float(argv[argv.index("--max-ms") + 1])
    assert 0 < max_ms <= 300  # bounded thinking: strength from more deals, not more time
    assert len(planned(config, secret=bytes(32))) == config.rounds * 6
