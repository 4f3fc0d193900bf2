"""TrueSkill standings: order, counts, ties, faults, and P(stronger than the next one)."""

from __future__ import annotations

import math
import random

import pytest
import trueskill

from referee.tournament.ratings import MatchResult, RatingConfig, Standings, p_stronger, standings


def result(players: str, totals: tuple[int, ...], faults: tuple[tuple[int, str], ...] = (),
           hands: int = 4) -> MatchResult:
    from referee.game.rules import rank

    ranks = tuple(rank(totals, [s for s, _ in faults]))
    return MatchResult(tuple(players.split()), totals, ranks, hands=hands, faults=faults)


def test_the_stronger_player_ranks_first_with_counts() -> None:
    results = [result("a b c", (1000, 700, 400)), result("c a b", (300, 1010, 900)),
               result("b c a", (600, 500, 1000)), result("a c b", (1000, 1000, 200))]
    rows = standings(["c", "b", "a"], results)
    assert [r.name for r in rows] == ["a", "b", "c"]
    a = rows[0]
    assert (a.rank, a.matches, a.wins) == (1, 4, 4)  # the shared first place counts as a win
    assert a.mean_rank == 1.0
    assert a.points_per_hand == pytest.approx((1000 + 1010 + 1000 + 1000) / 16)
    c = rows[2]
    assert c.wins == 1 and c.mean_rank == pytest.approx((3 + 3 + 3 + 1) / 4)
    assert rows[-1].p_above_next is None
    assert all(r.score == pytest.approx(r.mu - 3 * r.sigma) for r in rows)
    assert [r.score for r in rows] == sorted((r.score for r in rows), reverse=True)
    assert [r.rank for r in rows] == [1, 2, 3]


def test_ratings_equal_trueskill_in_schedule_order() -> None:
    env = trueskill.TrueSkill(draw_probability=0.02)
    results = [result("x y", (1000, 900)), result("y x", (1000, 200)), result("x y", (500, 1005))]
    r = {"x": env.create_rating(), "y": env.create_rating()}
    for res in results:
        rated = env.rate([(r[p],) for p in res.players], ranks=[k - 1 for k in res.ranks])
        for p, (new,) in zip(res.players, rated, strict=True):
            r[p] = new
    rows = {row.name: row for row in standings(["x", "y"], results)}
    for name in "xy":
        assert rows[name].mu == pytest.approx(r[name].mu)
        assert rows[name].sigma == pytest.approx(r[name].sigma)
    # Order matters in TrueSkill, which is why the tournament rates in schedule order.
    backwards = {row.name: row.mu for row in standings(["x", "y"], results[::-1])}
    assert backwards["x"] != pytest.approx(rows["x"].mu)


def test_faults_are_counted_by_kind_and_rank_last() -> None:
    res = result("a b c", (900, 1000, 300), faults=((1, "timeout"), (2, "crash")))
    assert res.ranks == (1, 2, 3)
    table = Standings(["a", "b", "c"])
    table.add(res)
    table.add(result("a b c", (900, 1000, 300), faults=((1, "timeout"),)))
    rows = {row.name: row for row in table.standings()}
    assert rows["b"].faults["timeout"] == 2 and rows["b"].faults["crash"] == 0
    assert rows["c"].faults["crash"] == 1
    assert rows["a"].wins == 2 and rows["b"].wins == 0
    assert set(rows["a"].faults) >= {"timeout", "illegal", "garbled", "crash", "startup"}


def test_p_stronger_is_phi_of_the_normalised_gap() -> None:
    a, b = trueskill.Rating(30, 3), trueskill.Rating(25, 4)
    want = 0.5 * (1 + math.erf((30 - 25) / 5 / math.sqrt(2)))
    assert p_stronger(a, b) == pytest.approx(want)
    assert p_stronger(b, a) == pytest.approx(1 - want)
    assert p_stronger(a, a) == pytest.approx(0.5)
    rows = standings(["a", "b"], [result("a b", (1000, 0))] * 20)
    assert rows[0].p_above_next is not None and rows[0].p_above_next > 0.99


def test_rating_config_is_used() -> None:
    config = RatingConfig(mu=100, sigma=10, beta=5, tau=0, draw_probability=0.1)
    rows = standings(["a", "b"], [], config)
    assert rows[0].mu == 100 and rows[0].sigma == 10
    assert rows[0].matches == 0 and rows[0].mean_rank is None and rows[0].points_per_hand is None
    assert [r.name for r in rows] == ["a", "b"]  # ties keep entry order


def test_from_json_reads_journal_lines_and_records() -> None:
    line = {"id": "r1-g001-s01", "players": ["a", "b"], "totals": [1000, 500], "ranks": [1, 2],
            "faults": [{"seat": 1, "hand": 2, "fault": "illegal", "detail": "x"}], "hands": 6}
    res = MatchResult.from_json(line)
    assert res == MatchResult(("a", "b"), (1000, 500), (1, 2), hands=6, faults=((1, "illegal"),))
    assert MatchResult.from_json({**line, "hands": [{}, {}]}).hands == 2
    with pytest.raises(ValueError):
        MatchResult.from_json({**line, "ranks": [1]})
    with pytest.raises(KeyError):
        MatchResult.from_json({"players": ["a"]})


def test_many_random_matches_recover_the_true_order() -> None:
    rng = random.Random(5)
    skill = {"weak": 0, "mid": 1, "strong": 2}
    results = []
    for _ in range(60):
        players = rng.sample(sorted(skill), 3)
        totals = tuple(skill[p] * 200 + rng.randrange(300) for p in players)
        results.append(result(" ".join(players), totals))
    rows = standings(sorted(skill), results)
    assert [r.name for r in rows] == ["strong", "mid", "weak"]
    assert rows[0].p_above_next is not None and rows[0].p_above_next > 0.9


def _course(per: str) -> list[tuple[str, float]]:
    """Five duplicate sets of two seatings: ``a`` wins each first seating by 2 points, ``b``
    the second by 1000: one match each, but ``b`` far ahead on points."""
    from referee.match.job import DealSecret
    from referee.tournament.course import TournamentPlan, TournamentProgress
    from referee.tournament.formats import RoundRobin

    course = TournamentProgress(RoundRobin(2, 2), ["a", "b"],
                                TournamentPlan(players=2, seatings="all", seed=1, rounds=5,
                                               secret=DealSecret(bytes(32))),
                                RatingConfig(per=per))
    while specs := course.next_round():
        for spec in specs:
            first = spec.seats == (0, 1)
            hands = [[1001, 999]] if first else [[1500, 500]]
            names = " ".join("ab"[e] for e in spec.seats)
            course.add(spec, result(names, tuple(hands[0]), hands=1), hands)
    return [(r.name, r.mu) for r in course.standings()]


def test_ratings_follow_the_sets_points_unless_asked_per_match() -> None:
    per_set = _course("set")
    assert per_set[0][0] == "b" and per_set[0][1] - per_set[1][1] > 3
    per_match = _course("match")
    assert abs(per_match[0][1] - per_match[1][1]) < 2  # one win each per set
