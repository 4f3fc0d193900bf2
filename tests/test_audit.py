"""The fair-play audit (issue 18): the seatings of a set are played in an order drawn from the
deal secret; an entrant whose later seatings beat its first-played one beyond chance is flagged.
Honest play over many secrets is flagged at no more than the stated rate (in-process: the
processes are not the point); the page-cache bot, unsandboxed, is flagged (real processes,
240 sets)."""

from __future__ import annotations

import hashlib
import json
import random

import pytest
from test_sealed import World, cheater

from referee.bots import hygiene
from referee.game.rules import Hand, Variant
from referee.match.job import MatchSpec
from referee.tournament.audit import Audit, play_key, play_order
from referee.tournament.config import load_config
from referee.tournament.run import run
from referee.tournament.stopping import interval

ALPHA = 0.05
SECRET = bytes(range(32))


def specs(secret: bytes, sets: int) -> list[MatchSpec]:
    """Two entrants, ``sets`` duplicate sets of two seatings each."""
    out = []
    for g in range(1, sets + 1):
        for s, seats in enumerate(((0, 1), (1, 0)), 1):
            out.append(MatchSpec(f"r1-g{g:03d}-s{s:02d}", len(out), 1, g, s, seats, f"1:1:{g}",
                                 secret))
    return out


def honest_tournament(secret: bytes, sets: int = 20, hands: int = 2) -> bool:
    """Random-move bots (their play depends on the seat and the deal, never on the order the
    seatings are played in): whether the audit flags either."""
    audit = Audit(["a", "b"], bound=Variant.CLASSIC.hand_total, per_set=2)
    for spec in play_order(specs(secret, sets)):
        rng = random.Random(f"{secret.hex()}:{spec.id}")  # the bots' own randomness
        scores = [Hand(spec.deal(k), dealer=0).rollout(rng) for k in range(1, hands + 1)]
        audit.add(spec, scores)
    return any(v.flag for v in audit.result(alpha=ALPHA).values())


def test_the_audit_does_not_depend_on_the_order_matches_finish_in() -> None:
    # At concurrency 2 sets finish in another order than at 1: the standings must not change.
    matches = []
    for spec in play_order(specs(SECRET, 12)):
        rng = random.Random(spec.id)
        matches.append((spec, [Hand(spec.deal(k), dealer=0).rollout(rng) for k in (1, 2)]))
    verdicts = []
    for order in (matches, matches[::-1]):
        audit = Audit(["a", "b"], bound=Variant.CLASSIC.hand_total, per_set=2)
        for spec, scores in order:
            audit.add(spec, scores)
        verdicts.append({n: v.to_json() for n, v in audit.result(alpha=ALPHA).items()})
    assert verdicts[0] == verdicts[1]


def test_honest_bots_over_many_secrets_are_flagged_at_most_at_the_stated_rate() -> None:
    runs = 300
    flagged = sum(honest_tournament(hashlib.sha256(f"t{i}".encode()).digest())
                  for i in range(runs))
    assert flagged <= ALPHA * runs, f"{flagged} of {runs} honest tournaments flagged"


def test_the_play_order_is_drawn_from_the_secret() -> None:
    firsts = set()
    for i in range(40):
        order = play_order(specs(hashlib.sha256(bytes([i])).digest(), 1))
        assert {s.id for s in order} == {"r1-g001-s01", "r1-g001-s02"}
        firsts.add(order[0].seating)
    assert firsts == {1, 2}  # either seating may come first, as the secret says
    mixed = play_order(specs(SECRET, 3))
    assert [s.group for s in mixed] == [1, 1, 2, 2, 3, 3]  # groups stay in schedule order
    assert play_key(mixed[0]) < play_key(mixed[1])


def test_a_bot_better_in_later_seatings_is_flagged() -> None:
    """In-process: an entrant that gains 30 points a hand whenever it has seen the deals, over
    120 sets. (The interval holds for any values within ±240, so it cannot flag +30 in 20 sets:
    20 values of +30 are also what a mean-0 distribution with an 11 % chance of -240 shows 10 %
    of the time, more than the 2.5 % allowed; docs/statistics.md.)"""
    audit = Audit(["cheat", "honest"], bound=240, per_set=2)
    seen: set[tuple[int, int]] = set()
    for spec in play_order(specs(SECRET, 120)):
        rng = random.Random(spec.id)
        gain = 30 if spec.deals_key in seen else 0
        seen.add(spec.deals_key)
        cheat = spec.seats.index(0)
        hands = []
        for _ in range(2):
            pts = [rng.randint(100, 140), 0]
            pts[1] = 240 - pts[0]
            pts[cheat] = min(240, pts[cheat] + gain)
            pts[1 - cheat] = 240 - pts[cheat]
            hands.append(pts)
        audit.add(spec, hands)
    result = audit.result(alpha=ALPHA)
    assert result["cheat"].flag and not result["honest"].flag
    assert result["cheat"].later_minus_first == pytest.approx(30, abs=15)
    assert set(result["cheat"].to_json()) == {"later_minus_first", "low", "high", "flag",
                                              "sets"}


def test_the_interval_needs_a_few_values_and_stays_within_the_bound() -> None:
    assert interval([], alpha=0.05, bound=240).diff is None
    few = interval([100.0] * 3, alpha=0.05, bound=240)
    assert (few.low, few.high) == (-240, 240)
    many = interval([10.0, -10.0] * 20, alpha=0.05, bound=240)
    assert -240 < many.low < 0 < many.high < 240


@pytest.mark.process
@pytest.mark.slow
def test_the_page_cache_bot_is_flagged_and_an_honest_one_is_not(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Unsandboxed (the control: its channel works), 240 sets against greedy: the page-cache
    bot plays better in every later seating (by about 25 points a hand) and the audit flags it;
    random_bot over the same deals is not flagged. (The interval holds for any values within
    ±240, so it flags such a gain only after about 150 sets: at 120, its lower end was -0.8;
    at 240, +14.7.)"""
    monkeypatch.setattr(hygiene, "can_drop", lambda *_: False)  # a root referee's drop erases it
    world = World()
    try:
        run(load_config(cheater(world, "none", rounds=240)), deal_secret=SECRET)
        rows = {r["name"]: r for r in json.loads(
            (world.output / "standings.json").read_text())["standings"]}
        audit = rows["attacker"]["audit"]
        assert audit["sets"] == 240
        assert audit["flag"] is True and audit["low"] > 0, audit
        assert rows["victim"]["audit"]["flag"] is False
        config = world.config.read_text().replace("pagecache.py", "random_bot.py")
        world.config.write_text(config)
        run(load_config(world.config), fresh=True, deal_secret=SECRET)
        rows = {r["name"]: r for r in json.loads(
            (world.output / "standings.json").read_text())["standings"]}
        assert not rows["attacker"]["audit"]["flag"] and not rows["victim"]["audit"]["flag"]
    finally:
        import shutil
        shutil.rmtree(world.root, ignore_errors=True)
