"""The PettingZoo environment (:mod:`referee.learning.env`): PettingZoo's own API and seed tests,
the
deals of ``ct-referee play --seed``, rewards, matches, and refusal of illegal actions."""

from __future__ import annotations

import subprocess
import sys
import warnings

import pytest

from conftest import need_extra

need_extra("numpy", "gymnasium", "pettingzoo", extra="rl")
import numpy as np
from pettingzoo.test import api_test, seed_test

from referee.game import encoding
from referee.game.rules import Deal
from referee.learning.env import env, raw_env

CONFIGS = [
    {"players": 3},
    {"players": 2, "target": 300},
    {"players": 4, "variant": "red-frog-black-frog", "dense": True, "match_bonus": 50.0,
     "target": 400},
]


@pytest.mark.parametrize("options", CONFIGS, ids=["3p-hand", "2p-match", "4p-redfrog-dense"])
def test_pettingzoo_api_test(options: dict) -> None:
    with warnings.catch_warnings():
        # PettingZoo warns about every Dict observation space (its own classic games too).
        warnings.simplefilter("ignore", UserWarning)
        api_test(env(**options), num_cycles=1000)
        api_test(raw_env(**options), num_cycles=300)


@pytest.mark.parametrize("options", CONFIGS, ids=["3p-hand", "2p-match", "4p-redfrog-dense"])
def test_pettingzoo_seed_test(options: dict) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        seed_test(lambda: env(**options), num_cycles=300)


def play_out(e, rng: np.random.Generator) -> dict[str, float]:
    """Plays random legal actions to the end; returns each agent's summed rewards."""
    got = dict.fromkeys(e.possible_agents, 0.0)
    for agent in e.agent_iter():
        obs, reward, term, trunc, _ = e.last()
        got[agent] += reward
        if term or trunc:
            e.step(None)
        else:
            e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    return got


def test_reset_with_a_seed_deals_what_play_with_that_seed_deals() -> None:
    e = raw_env(players=3, target=500)
    e.reset(seed=7)
    assert e.hand.deal == Deal.from_seed(3, "7:1")
    assert e.agent_selection == "player_1"  # seat 0 deals hand 1
    first = [e.observe(a)["observation"].copy() for a in e.possible_agents]
    play_out(e, np.random.default_rng(0))
    e.reset(seed=7)
    assert all(np.array_equal(o, e.observe(a)["observation"])
               for o, a in zip(first, e.possible_agents, strict=True))


def test_reset_without_a_seed_follows_the_last_seed() -> None:
    a, b = raw_env(), raw_env()
    a.reset(seed=3)
    b.reset(seed=3)
    a.reset()
    b.reset()
    assert a.hand.deal == b.hand.deal and a.hand.deal != Deal.from_seed(3, "3:1")


@pytest.mark.parametrize("dense", [False, True])
def test_a_single_hand_rewards_each_seat_its_points(dense: bool) -> None:
    for seed in range(5):
        e = raw_env(players=3, dense=dense)
        e.reset(seed=seed)
        hand = e.hand
        got = play_out(e, np.random.default_rng(seed))
        assert [got[a] for a in e.possible_agents] == hand.scores()
        assert sum(got.values()) == 240


def test_a_match_runs_to_its_target_and_pays_the_bonus() -> None:
    e = raw_env(players=2, target=600, match_bonus=100.0)
    e.reset(seed=11)
    last_infos: dict[str, dict] = {}
    got = dict.fromkeys(e.possible_agents, 0.0)
    rng = np.random.default_rng(1)
    for agent in e.agent_iter():
        obs, reward, term, _, info = e.last()
        got[agent] += reward
        if term:
            last_infos[agent] = info
            e.step(None)
        else:
            e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    totals = e.match.totals
    assert max(totals) >= 600 and len(e.match.hand_scores) >= 3
    assert last_infos["player_0"]["totals"] == totals
    winner = "player_0" if totals[0] >= totals[1] else "player_1"
    assert last_infos[winner]["rank"] == 1
    for s, agent in enumerate(e.possible_agents):
        assert got[agent] == totals[s] + (100.0 if agent == winner else 0.0)


def test_observations_carry_the_match_totals() -> None:
    e = raw_env(players=3, target=400)
    e.reset(seed=2)
    rng = np.random.default_rng(2)
    while len(e.match.hand_scores) == 0:
        obs = e.observe(e.agent_selection)
        e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    seat = e.hand.to_move
    obs = e.observe(e.agent_selection)["observation"]
    want = [min(e.match.totals[(seat + k) % 3] / 400, 1.0) for k in range(3)]
    assert obs[encoding.TOTALS:encoding.TOTALS + 3] == pytest.approx(want)


def test_an_illegal_action_is_refused() -> None:
    e = raw_env()
    e.reset(seed=1)
    mask = e.observe(e.agent_selection)["action_mask"]
    bad = int(np.flatnonzero(mask == 0)[0])
    with pytest.raises(encoding.ActionError, match=f"action {bad} is not legal for player_1"):
        e.step(bad)
    with pytest.raises(ValueError, match="players must be 2, 3 or 4"):
        raw_env(players=5)


def test_render_shows_the_table_as_text() -> None:
    e = raw_env(render_mode="ansi")
    e.reset(seed=4)
    text = e.render()
    assert text.startswith("hand 1 dealer 0 turn 0/24 stock 24 classic")
    assert "table:" in text and "> seat 1:" in text


@pytest.mark.process
def test_the_core_package_does_not_import_the_rl_extra() -> None:
    code = ("import sys, referee.cli, referee.game.encoding, referee.learning.policy_bot, "
            "referee.tournament.run; "
            "bad = [m for m in ('numpy', 'gymnasium', 'pettingzoo') if m in sys.modules]; "
            "print(bad); sys.exit(1 if bad else 0)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_environment_module_doctests_pass() -> None:
    # Collected here rather than by --doctest-modules, which cannot import it without the extra.
    import doctest

    from referee.learning import env as module
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0
