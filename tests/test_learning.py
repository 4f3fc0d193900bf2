"""The learning example (docs/learning.md): bots/linear_policy.py's learned weights beat random
play, the training script runs, the bot passes ``check`` through the bridge, and (slow) wins
against random in tournaments/learning.yaml."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import CLI, ROOT, assert_passes_check, need_extra

need_extra("numpy", extra="rl")

from referee.tournament.run import load_config, run

pytestmark = pytest.mark.process

sys.path.insert(0, str(ROOT / "bots"))
import train_linear
from linear_policy import load_weights


def test_the_learned_weights_beat_random_play_in_the_environment() -> None:
    """In the same seat of the same 150 deals, against the same two random opponents, the
    learned policy scores far more than a random one (about 103 against 80 points a hand)."""
    env = train_linear.raw_env(players=3)
    seeds = list(range(150))
    learned = train_linear.seat_points(env, train_linear.linear(load_weights()),
                                       train_linear.uniform(2), seeds)
    rand = train_linear.seat_points(env, train_linear.uniform(1), train_linear.uniform(2), seeds)
    assert learned > rand + 12, (learned, rand)


def test_the_training_script_runs_and_writes_weights(tmp_path: Path) -> None:
    out = tmp_path / "w.json"
    done = subprocess.run(
        [sys.executable, "bots/train_linear.py", "--generations", "1", "--population", "4",
         "--hands", "3", "--eval-hands", "3", "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "generation  1:" in done.stdout and "learned_vs_greedy:" in done.stdout
    saved = json.loads(out.read_text())
    assert set(saved["weights"]) == set(train_linear.FEATURES)
    assert saved["trained_by"].startswith("python bots/train_linear.py --generations 1")
    assert len(load_weights(out)) == len(train_linear.FEATURES)


def test_the_learned_bot_passes_check() -> None:
    assert_passes_check(f"{CLI} bot bots/linear_policy.py:act")


@pytest.mark.slow
def test_the_learning_tournament_ranks_the_learned_bot_above_random(tmp_path: Path) -> None:
    """tournaments/learning.yaml as the docs run it (12 matches, about a minute)."""
    outcome = run(load_config(ROOT / "tournaments" / "learning.yaml", output=tmp_path / "out"))
    assert outcome.finished and outcome.total == 12
    assert outcome.standings is not None
    names = [row.name for row in outcome.standings]
    assert names[-1] == "random" and names.index("linear") < names.index("random")
    rows = {row.name: row for row in outcome.standings}
    assert not any(rows["linear"].faults.values()), rows["linear"].faults
    assert rows["linear"].mu > rows["random"].mu
