"""The policy-to-bot bridge (:mod:`referee.learning.policy_bot`, ``ct-referee bot``): the tracked
view is
the engine's view, a policy plays the same moves through the bridge as in the environment on
the same deals, and the bridge passes ``ct-referee check``."""

from __future__ import annotations

import io
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import CLI, ROOT, assert_passes_check, need_extra

need_extra("numpy", "gymnasium", "pettingzoo", extra="rl")
import numpy as np

from referee.game import encoding
from referee.game.rules import Deal, Hand, Match, Variant
from referee.learning.env import raw_env
from referee.learning.policy_bot import PolicyError, SeatTracker, load_policy, run
from referee.protocol import wire as protocol
from referee.records.record import read_record

POLICIES = "tests/policies/hashed.py"
sys.path.insert(0, str(ROOT / "tests" / "policies"))
from hashed import hashed_random


@pytest.mark.parametrize(("players", "variant"), [(2, Variant.CLASSIC), (3, Variant.RED_FROG),
                                                  (4, Variant.CLASSIC)])
def test_the_tracked_view_is_the_engines_view_at_every_decision(
        players: int, variant: Variant) -> None:
    """Every seat's tracker, fed the lines the referee sends it, rebuilds exactly the
    :class:`SeatView` the engine gives that seat at each of its decisions."""
    rng = random.Random(players)
    match = Match(players, variant=variant, target=500)
    trackers = [SeatTracker() for _ in range(players)]
    for s, t in enumerate(trackers):
        t.feed(protocol.format_match("m", s, players, variant, 500, ["x"] * players))
    decisions = 0
    while not match.is_over():
        hand = match.new_hand(Deal.random(players, rng))
        for s, t in enumerate(trackers):
            t.feed(protocol.format_hand(match.hand_number, hand.dealer, hand.hands[s],
                                        hand.deal.layout))
            for e in hand.events:
                t.feed(protocol.format_event(e))
        while not hand.is_over():
            seat = hand.to_move
            got = trackers[seat].feed(protocol.format_go(hand.hands[seat], hand.table,
                                                         len(hand.stock), 1000))
            assert got is not None and got.view == hand.view(seat)
            assert got.totals == tuple(match.totals)
            decisions += 1
            seen = len(hand.events)
            hand.play(*rng.choice(hand.legal_moves()))
            new = hand.events[seen:]
            for t in trackers:
                t.feed(protocol.format_event(new[0]))
            if hand.pick_card is not None:
                got = trackers[seat].feed(protocol.format_pick(hand.pick_card, hand.pick_options,
                                                               1000))
                assert got is not None and got.view == hand.view(seat)
                decisions += 1
                new = [hand.events[-1], hand.pick(rng.choice(hand.pick_options))]
                for t in trackers:
                    t.feed(protocol.format_event(new[1]))
            else:
                for t in trackers:
                    t.feed(protocol.format_event(new[1]))
        match.finish_hand(hand)
        for t in trackers:
            t.feed(protocol.format_score(match.hand_scores[-1], match.totals))
    assert decisions > 50


def env_turns(players: int, seed: int, target: int) -> list[list[tuple]]:
    """Each hand's turns when ``hashed_random`` plays every seat in the environment."""
    e = raw_env(players=players, target=target)
    e.reset(seed=seed)
    hands: list[list[tuple]] = []
    current = e.hand
    for _agent in e.agent_iter():
        obs, _, term, _, _ = e.last()
        if term:
            e.step(None)
            continue
        e.step(hashed_random(obs["observation"], obs["action_mask"]))
        if e.hand is not current or current.is_over():
            hands.append(turns_of(current))
            current = e.hand
    return hands


def turns_of(hand: Hand) -> list[tuple]:
    events = [e for e in hand.events if e.kind != "take"]
    return [(p.seat, str(p.card), sorted(map(str, p.captured)), str(t.card),
             sorted(map(str, t.captured))) for p, t in zip(events[::2], events[1::2], strict=True)]


@pytest.mark.process
@pytest.mark.parametrize(("players", "seed"), [(3, 7), (2, 12)])
def test_a_policy_plays_the_same_moves_through_the_bridge_as_in_the_environment(
        tmp_path: Path, players: int, seed: int) -> None:
    """``hashed_random`` draws from a generator seeded by the observation's and the mask's bytes,
    so any difference between the two encodings shows as a different move."""
    record = tmp_path / "r.json"
    bot = f"{CLI} bot {POLICIES}:hashed_random"
    done = subprocess.run(
        [CLI, "play", *[bot] * players, "--seed", str(seed), "--target", "300",
         "--sandbox", "none", "--record", str(record), "-q"],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    rec = read_record(record)
    assert not rec["faults"]
    played = [[(t["seat"], t["play"], sorted(t["capture"]), t["turn"], sorted(t["turn_capture"]))
               for t in h["turns"]] for h in rec["hands"]]
    expected = env_turns(players, seed, 300)
    assert len(played) >= 2
    assert played == expected


@pytest.mark.process
def test_the_bridge_passes_check() -> None:
    assert_passes_check(f"{CLI} bot {POLICIES}:hashed_random")


def test_an_illegal_policy_still_answers_legally_and_says_so() -> None:
    lines = io.StringIO("chinese-ten 1\n"
                        "match id m seat 1 players 3 variant classic target 1000 names a b c\n"
                        "hand 1 dealer 0 cards 2c 3c 4c 5c 6c 7c 8c 9c layout Th Jh Qh Kh\n"
                        "go hand 2c 3c 4c 5c 6c 7c 8c 9c table Th Jh Qh Kh stock 24 ms 1000\n"
                        "quit\n")
    out, err = io.StringIO(), io.StringIO()
    policy = load_policy(f"{POLICIES}:illegal", base=ROOT)
    assert run(policy, name="x", stdin=lines, stdout=out, stderr=err) == 0
    assert out.getvalue() == "ready x\n2c\n"
    assert "the policy chose an illegal action" in err.getvalue()


def test_a_policy_that_raises_still_answers_legally_and_says_so() -> None:
    def broken(observation: np.ndarray, action_mask: np.ndarray) -> int:
        raise KeyError("weights")

    lines = io.StringIO("match id m seat 1 players 3 variant classic target 1000 names a b c\n"
                        "hand 1 dealer 0 cards 2c 3c 4c 5c 6c 7c 8c 9c layout Th Jh Qh Kh\n"
                        "go hand 2c 3c 4c 5c 6c 7c 8c 9c table Th Jh Qh Kh stock 24 ms 1000\n")
    out, err = io.StringIO(), io.StringIO()
    assert run(broken, name="x", stdin=lines, stdout=out, stderr=err) == 0
    assert out.getvalue() == "2c\n"
    assert "the policy raised KeyError: 'weights'" in err.getvalue()


def test_a_go_that_does_not_fit_the_tracked_hand_is_answered_from_the_request() -> None:
    lines = io.StringIO("go hand 7c Kd table 3h stock 20 ms 1000\n")
    out, err = io.StringIO(), io.StringIO()
    run(lambda o, m: 0, name="x", stdin=lines, stdout=out, stderr=err)
    assert out.getvalue() == "7c 3h\n"
    assert "answering from the request alone" in err.getvalue()


@pytest.mark.process
@pytest.mark.parametrize(("spec", "message"), [
    ("nocolon", "expected MODULE:FUNCTION or FILE.py:FUNCTION, got 'nocolon'"),
    ("missing.py:act", "does not exist"),
    ("no_such_module_xyz:act", "cannot import 'no_such_module_xyz': ModuleNotFoundError"),
    (f"{POLICIES}:nothing", "has no callable 'nothing'"),
])
def test_a_bad_policy_spec_is_one_line(spec: str, message: str) -> None:
    with pytest.raises(PolicyError, match=re.escape(message)):
        load_policy(spec, base=ROOT)
    done = subprocess.run([CLI, "bot", spec], cwd=ROOT, capture_output=True, text=True,
                          input="", timeout=60, check=False)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("error: "), done.stderr


def test_encoding_arrays_match_the_plain_lists() -> None:
    hand = Hand(Deal.from_seed(4, "arrays"), dealer=3)
    view = hand.view(hand.to_move)
    obs, mask = encoding.arrays(view, (10, 20, 30, 40), 100)
    assert obs.dtype == np.float32 and mask.dtype == np.int8
    assert obs.tolist() == pytest.approx(encoding.dense(view, (10, 20, 30, 40), 100))
    assert mask.tolist() == encoding.mask_list(view)
