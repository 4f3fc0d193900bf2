"""The tournament schedule: sizes, seatings, ids, and duplicate deals."""

from __future__ import annotations

import math
from collections import Counter

import pytest

from referee.game.rules import Deal
from referee.tournament.schedule import groups, schedule, seatings, size

KEY = bytes(range(32))


@pytest.mark.parametrize(("entrants", "players", "mode", "rounds"), [
    (2, 2, "all", 1), (3, 2, "all", 2), (4, 3, "all", 1), (5, 3, "rotate", 2),
    (5, 4, "all", 1), (6, 4, "rotate", 3), (7, 3, "all", 1),
])
def test_size_is_groups_times_seatings_times_rounds(
        entrants: int, players: int, mode: str, rounds: int) -> None:
    plan = schedule(entrants, players=players, rounds=rounds, seatings=mode, seed=1, secret=KEY)
    per_group = math.factorial(players) if mode == "all" else players
    assert len(plan) == math.comb(entrants, players) * per_group * rounds
    assert len(plan) == size(entrants, players, rounds, mode)
    assert [m.index for m in plan] == list(range(len(plan)))


def test_every_group_plays_every_seat_order() -> None:
    plan = schedule(5, players=3, rounds=1, seatings="all", seed=1, secret=KEY)
    by_group: dict[int, set[tuple[int, ...]]] = {}
    for m in plan:
        by_group.setdefault(m.group, set()).add(m.seats)
    assert len(by_group) == 10
    for (g, orders), group in zip(sorted(by_group.items()), groups(5, 3), strict=True):
        assert len(orders) == 6 and {tuple(sorted(o)) for o in orders} == {group}, g
    # Duplicate play is fair: each entrant sits in each seat equally often.
    seat_counts = Counter((e, seat) for m in plan for seat, e in enumerate(m.seats))
    assert len(set(seat_counts.values())) == 1


def test_rotate_gives_each_entrant_each_seat_once() -> None:
    orders = seatings((2, 5, 7), "rotate")
    assert orders == [(2, 5, 7), (5, 7, 2), (7, 2, 5)]
    for seat in range(3):
        assert sorted(o[seat] for o in orders) == [2, 5, 7]
    with pytest.raises(ValueError, match="unknown seatings"):
        seatings((0, 1), "shuffle")


def test_ids_are_unique_sortable_and_in_order() -> None:
    plan = schedule(12, players=3, rounds=10, seatings="all", seed=1, secret=KEY)
    ids = [m.id for m in plan]
    assert len(set(ids)) == len(ids)
    assert ids == sorted(ids)
    assert ids[0] == "r01-g001-s01" and ids[-1] == "r10-g220-s06"
    first = schedule(3, players=2, rounds=1, seatings="all", seed=1, secret=KEY)[0]
    assert first.id == "r1-g001-s01"


def test_deals_are_duplicated_across_seatings_only() -> None:
    plan = schedule(4, players=3, rounds=2, seatings="all", seed=7, secret=KEY)
    for k in (1, 2, 5):
        deals: dict[tuple[int, int], set[object]] = {}
        for m in plan:
            deals.setdefault((m.round, m.group), set()).add(m.deal(k))
        assert all(len(d) == 1 for d in deals.values())  # same deal in every seating
        distinct = {next(iter(d)) for d in deals.values()}
        assert len(distinct) == len(deals)  # different across groups and rounds
    m = plan[0]
    assert m.deal(1) != m.deal(2)
    assert m.deal(1).players == 3


def test_deals_depend_on_the_secret_and_the_seed() -> None:
    a = schedule(4, players=2, rounds=1, seatings="all", seed=1, secret=KEY)
    b = schedule(4, players=2, rounds=1, seatings="all", seed=1, secret=KEY)
    c = schedule(4, players=2, rounds=1, seatings="all", seed=2, secret=KEY)
    d = schedule(4, players=2, rounds=1, seatings="all", seed=1, secret=bytes(32))
    assert [m.deal(3) for m in a] == [m.deal(3) for m in b]
    assert a[0].deal(1) != c[0].deal(1)
    assert a[0].deal(1) != d[0].deal(1)  # the same seed, another secret: other deals
    # The seed alone does not give the deals (as it did before deals had a secret).
    assert a[0].deal(1) != Deal.from_seed(2, "1:1:1:1")
    # The same secret and seed give the same deal on every machine and Python version: pin one.
    assert a[0].seed == "1:1:1" and "secret" not in repr(a[0])
    assert [str(c) for c in a[0].deal(1).layout] == ["8c", "4d", "As", "4h"]
    assert a[0].deal(1) == Deal.from_key(2, KEY, "1:1:1:1")


@pytest.mark.parametrize(("entrants", "players", "rounds"), [(2, 3, 1), (4, 5, 1), (4, 2, 0)])
def test_impossible_schedules_are_refused(entrants: int, players: int, rounds: int) -> None:
    with pytest.raises(ValueError):
        schedule(entrants, players=players, rounds=rounds, seatings="all", seed=1, secret=KEY)
