"""Formats: group composition, caps, elimination, and ladder determinism (pure planning)."""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Sequence

import pytest

from referee.game.rules import rank
from referee.match.job import DealSecret
from referee.tournament.course import TournamentPlan, TournamentProgress
from referee.tournament.formats import (
    Format,
    Gauntlet,
    Ladder,
    Prefix,
    RoundRobin,
    State,
    capped_total,
    format_named,
    plan_round,
)
from referee.tournament.ratings import MatchResult
from referee.tournament.schedule import schedule
from referee.tournament.stopping import Stop


def make_format(name: str, entrants: int, players: int, *, seed: int | str,
                candidates: Sequence[int] = ()) -> Format:
    """The format called ``name``, built (:meth:`Format.build`)."""
    return format_named(name).build(entrants, players, seed=seed, candidates=candidates)

KEY = bytes(range(32))

SECRET = DealSecret(bytes(32))
"""The deal secret of these plans (a plan has no default one)."""


def test_round_robin_rounds_are_todays_schedule() -> None:
    """Round by round, the round robin plans exactly the fixed schedule: ids, seats, deal seeds
    and rating order (a tournament without ``stop`` plays what it played before)."""
    old = schedule(5, players=3, rounds=2, seatings="all", seed=9, secret=KEY)
    fmt = RoundRobin(5, 3)
    new = plan_round(fmt, State.initial(5, 1), players=3, seatings="all", seed=9, rounds=2,
                      secret=KEY)
    new += plan_round(fmt, State(5, 2, len(new), tuple(range(5)), (25.0,) * 5, (8.0,) * 5),
                      players=3, seatings="all", seed=9, rounds=2, secret=KEY)
    assert new == old
    assert plan_round(fmt, State.initial(5, 3), players=3, seatings="all", seed=9,
                      rounds=2, secret=KEY) == []


@pytest.mark.parametrize(("entrants", "players", "candidates"), [
    (5, 3, (0,)), (6, 3, (4, 5)), (4, 2, (1,)), (7, 4, (0, 6)),
])
def test_gauntlet_groups_hold_one_candidate_and_others(
        entrants: int, players: int, candidates: tuple[int, ...]) -> None:
    fmt = Gauntlet(entrants, players, candidates)
    specs = plan_round(fmt, State.initial(entrants), players=players, seatings="all", seed=1,
                       rounds=1, secret=KEY)
    others = [e for e in range(entrants) if e not in candidates]
    by_group: dict[int, set[tuple[int, ...]]] = {}
    for s in specs:
        by_group.setdefault(s.group, set()).add(s.seats)
    assert len(by_group) == len(candidates) * math.comb(len(others), players - 1)
    seen = set()
    for orders in by_group.values():
        group = {frozenset(o) for o in orders}
        assert len(group) == 1
        members = next(iter(group))
        assert len(members & set(candidates)) == 1 and len(members) == players
        assert len(orders) == math.factorial(players)  # a full duplicate set
        seen.add(members)
    assert len(seen) == len(by_group)
    assert all(spec.seed == f"1:1:{spec.group}" for spec in specs)


def test_gauntlet_asks_each_candidate_against_each_other_entrant() -> None:
    fmt = Gauntlet(5, 3, [3, 4])
    # order best first: 2, 3 (candidate), 1, 4 (candidate), 0
    assert fmt.questions([2, 3, 1, 4, 0]) == [(2, 3), (2, 4), (3, 1), (3, 0), (1, 4), (4, 0)]
    with pytest.raises(ValueError, match="not candidates"):
        Gauntlet(3, 3, [0, 1])
    with pytest.raises(ValueError, match="at least one candidate"):
        Gauntlet(3, 2, [])


def _ladder_state(n: int, round_: int = 1, **kw: object) -> State:
    mu = tuple(30.0 - i * 0.5 for i in range(n))
    sigma = tuple(2.0 for _ in range(n))
    return State(n, round_, 0, tuple(range(n)), mu, sigma, **kw)  # type: ignore[arg-type]


def test_ladder_seeds_every_entrant_once_near_its_rating() -> None:
    n = 40
    fmt = Ladder(n, 3, seed=5)
    groups = fmt.groups(_ladder_state(n))
    assert len(groups) == n and len(set(groups)) == n
    assert all(len(set(g)) == 3 for g in groups)
    # each entrant seeded one group (the seeding order is by sigma, then rating)
    spans = [max(g) - min(g) for g in groups]
    assert sorted(spans)[n // 2] <= 6  # most groups are near neighbours in rating
    assert max(spans) > 6  # and the heavy tail lets some meet the far field
    # deterministic, and another round differs
    assert fmt.groups(_ladder_state(n)) == groups
    assert fmt.groups(_ladder_state(n, 2)) != groups


def test_ladder_never_repeats_last_rounds_groups_and_widens_for_uncertain_entrants() -> None:
    n = 30
    fmt = Ladder(n, 3, seed=1)
    first = fmt.groups(_ladder_state(n))
    second = fmt.groups(_ladder_state(n, 2, last=frozenset(first)))
    assert not set(first) & set(second)
    mu = (*(30.0 - i * 0.5 for i in range(n)), 25.0)
    late = State(n + 1, 2, 0, tuple(range(n + 1)), mu, (*(2.0,) * n, 25.0 / 3))
    groups = Ladder(n + 1, 3, seed=1).groups(late)
    assert n in groups[0]  # the most uncertain entrant seeds first


def test_ladder_with_stop_seeds_only_entrants_of_open_pairs_with_their_partner() -> None:
    n = 12
    open_pairs = frozenset({(3, 4), (7, 8)})
    state = _ladder_state(n, open=open_pairs)
    specs = plan_round(Ladder(n, 3, seed=2), state, players=3, seatings="rotate", seed=2,
                       secret=KEY)
    groups = {s.group: set(s.seats) for s in specs}
    assert len(groups) == 4
    assert all({3, 4} <= g or {7, 8} <= g for g in groups.values())


def test_ladder_plans_500_entrants() -> None:
    n = 500
    groups = Ladder(n, 3, seed=1).groups(_ladder_state(n))
    assert len(groups) == n and len(set(groups)) == n


def test_caps_cut_whole_sets_and_stop_drops_decided_groups() -> None:
    fmt = RoundRobin(4, 3)
    specs = plan_round(fmt, State.initial(4), players=3, seatings="all", seed=1,
                       max_matches=20, secret=KEY)
    assert len(specs) == 18 and sorted(Counter(s.group for s in specs).values()) == [6, 6, 6]
    every = list(itertools.combinations(range(4), 3))
    assert all(tuple(sorted(s.seats)) == every[s.group - 1] for s in specs)  # numbered as uncapped
    assert capped_total(fmt, players=3, seatings="all", rounds=2, max_matches=None) == 48
    assert capped_total(fmt, players=3, seatings="all", rounds=2, max_matches=40) == 36
    # with stop, only groups holding an open pair play; none open: nothing
    state = State(4, 1, 0, (0, 1, 2, 3), (25.0,) * 4, (8.0,) * 4, frozenset({(2, 3)}))
    specs = plan_round(fmt, state, players=3, seatings="all", seed=1, secret=KEY)
    groups = {tuple(sorted(s.seats)) for s in specs}
    assert groups == {g for g in itertools.combinations(range(4), 3) if {2, 3} <= set(g)}
    state = State(4, 1, 0, (0, 1, 2, 3), (25.0,) * 4, (8.0,) * 4, frozenset())
    assert plan_round(fmt, state, players=3, seatings="all", seed=1, secret=KEY) == []
    with pytest.raises(ValueError, match="unknown format"):
        make_format("swiss", 4, 3, seed=1)


def _fake(spec_seats: tuple[int, ...], strengths: list[int]) -> tuple[MatchResult,
                                                                        list[list[int]]]:
    hands = [[strengths[e] + k for e in spec_seats] for k in range(10)]
    totals = tuple(sum(h[s] for h in hands) for s in range(len(spec_seats)))
    return (MatchResult(tuple(f"e{e}" for e in spec_seats), totals, tuple(rank(totals)),
                        hands=10), hands)


def test_a_course_is_the_same_whatever_order_matches_finish_in() -> None:
    """Results fed in any order within a round give the same rounds, table and evidence (the
    core of "the same at any concurrency")."""
    strengths = [3, 9, 1, 7, 5, 2]

    def drive(reverse: bool) -> tuple[list[list[str]], list[tuple[str, float]]]:
        course = TournamentProgress(Ladder(6, 3, seed=4), [f"e{i}" for i in range(6)],
                        TournamentPlan(players=3, seatings="rotate", seed=4, rounds=4,
                                       secret=SECRET))
        rounds = []
        while specs := course.next_round():
            rounds.append([s.id + str(s.seats) for s in specs])
            for spec in (reversed(specs) if reverse else specs):
                course.add(spec, *_fake(spec.seats, strengths))
        assert course.stopped == "complete"
        return rounds, [(r.name, r.mu) for r in course.standings()]

    assert drive(False) == drive(True)


@pytest.mark.parametrize(("entrants", "players", "cap"), [(100, 3, 6000), (13, 4, 600), (7, 2, 40)])
def test_a_capped_round_robin_is_balanced(entrants: int, players: int, cap: int) -> None:
    """Cut short by max_matches, a round robin plays distinct groups in which every entrant
    sits within one group of every other (combination order gave one entrant 1,000 groups of
    6,000 matches among 100 entrants, the median 11)."""
    fmt = RoundRobin(entrants, players)
    specs = plan_round(fmt, State.initial(entrants), players=players, seatings="all", seed=3,
                       max_matches=cap, secret=KEY)
    size = math.factorial(players)
    assert len(specs) == cap // size * size
    groups = {s.group: tuple(sorted(s.seats)) for s in specs}
    assert len(set(groups.values())) == len(groups) == cap // size
    seated = Counter(e for g in groups.values() for e in g)
    assert max(seated.values()) - min(seated[e] for e in range(entrants)) <= 1
    assert specs == plan_round(fmt, State.initial(entrants), players=players, seatings="all",
                               seed=3, max_matches=cap, secret=KEY)  # the same on a resume


def test_a_round_robin_round_is_computed_as_it_is_read() -> None:
    """970,200 matches (100 entrants, 3 seats, every seating) are planned without being
    stored: the round's length, any match by position, and the first ones in order."""
    fmt = RoundRobin(100, 3)
    specs = plan_round(fmt, State.initial(100), players=3, seatings="all", seed=1, rounds=1,
                       secret=KEY)
    assert len(specs) == 970_200
    first = list(itertools.islice(iter(specs), 12))
    assert [s.id for s in first[:2]] == ["r1-g000001-s01", "r1-g000001-s02"]
    assert first == specs[:12] and specs[-1].seats == (99, 98, 97)
    assert specs[500_000].index == 500_000
    assert tuple(sorted(specs[500_000].seats)) == fmt.all[500_000 // 6]


@pytest.mark.parametrize(("fmt", "cap"), [("round-robin", None), ("round-robin", 90),
                                          ("gauntlet", None)])
def test_a_plan_no_result_changes_is_planned_ahead_and_rated_in_schedule_order(
        fmt: str, cap: int | None) -> None:
    """A round robin or gauntlet without ``stop`` plans every round before any match of the
    one before has finished (their matches then play side by side); results fed in reverse,
    the last round's first, give the rounds, table and evidence of round-by-round play (a
    cap counts the matches planned, as it counted the matches played)."""
    strengths = [3, 9, 1, 7, 5]
    names = [f"e{i}" for i in range(5)]

    def course() -> TournamentProgress:
        return TournamentProgress(make_format(fmt, 5, 3, seed=2, candidates=[1]), names,
                                  TournamentPlan(players=3, seatings="all", seed=2, rounds=3,
                                                 max_matches=cap, secret=SECRET))

    step = course()
    rounds = []
    while specs := step.next_round():
        rounds.append(list(specs))
        for spec in specs:
            step.add(spec, *_fake(spec.seats, strengths))
    ahead = course()
    assert ahead.ahead()
    planned = []
    while specs := ahead.next_round():
        planned.append(list(specs))
        assert not ahead.complete()  # planned before any result of the rounds before
    assert planned == rounds and len(rounds) == (2 if cap else 3)
    assert ahead.stopped == step.stopped == ("cap" if cap else "complete")
    everything = [spec for specs in planned for spec in specs]
    for spec in reversed(everything[1:]):
        ahead.add(spec, *_fake(spec.seats, strengths))
    assert ahead.matches == 0  # rated in schedule order: all wait on the first
    ahead.add(everything[0], *_fake(everything[0].seats, strengths))
    assert ahead.complete() and ahead.matches == step.matches == len(everything)
    assert ahead.standings() == step.standings()
    assert ahead.pairs() == step.pairs()


def test_a_plan_results_change_waits_for_its_round() -> None:
    """The ladder seeds a round from the ratings, and ``stop`` drops the pairs it decided:
    the next round is planned only once the one before is rated (the ladder: all but its
    last sets, :data:`~referee.tournament.course.EARLY_SETS`; ``test_pipeline.py``)."""
    for fmt, stop in (("ladder", None), ("round-robin", Stop())):
        course = TournamentProgress(make_format(fmt, 5, 3, seed=2), [f"e{i}" for i in range(5)],
                                    TournamentPlan(players=3, seatings="all", seed=2, rounds=3,
                                                   stop=stop, secret=SECRET))
        assert not course.ahead()
        course.next_round()
        with pytest.raises(RuntimeError, match="not complete"):
            course.next_round()


def test_a_prefix_hands_matches_back_in_schedule_order_across_rounds_added_late() -> None:
    fmt = RoundRobin(3, 2)
    one = list(plan_round(fmt, State.initial(3, 1), players=2, seatings="all", seed=1,
                          secret=KEY))
    two = list(plan_round(fmt, State(3, 2, len(one)), players=2, seatings="all", seed=1,
                          secret=KEY))
    prefix: Prefix[int] = Prefix()
    prefix.add_round(one)
    assert prefix.finish(one[1].id, 1) == []  # the first is still out
    prefix.add_round([])  # an empty round (a cap) changes nothing
    prefix.add_round(two)
    assert prefix.finish(two[0].id, 10) == []
    assert prefix.finish(one[0].id, 0) == [(one[0], 0), (one[1], 1)]
    for k, spec in enumerate(one[2:], 2):
        assert prefix.finish(spec.id, k) == ([(spec, k), (two[0], 10)] if spec is one[-1]
                                             else [(spec, k)])
    assert prefix.next == two[1]
