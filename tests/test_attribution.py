"""Who the fair-play audit names (referee/tournament/attribution.py): an entrant only on
evidence about that entrant, whatever the size of a cheat beside it.

Every test runs on fixed seeds (deterministic). Where a test asserts that an honest entrant is
not named, it judges at a level of 1e-4: the attribution's promise bounds the chance of naming
any honest entrant by that level, so a seed on which it fails would be a 1-in-10,000 draw, not
noise the assertion tolerates.
"""

from __future__ import annotations

import random

from referee.tournament.attribution import FieldAudit, SetStat
from referee.tournament.audit import Verdict, flags

STRICT = 1e-4


def a_set(rng: random.Random, members: tuple[int, ...], gain: float,
          sd: float = 12.0) -> dict[int, SetStat]:
    """Each member's ``T`` in one set (2 seatings for a pair, 6 for three), the points of a
    seating zero-sum, entrant 0 gaining ``gain`` in every seating after the first-played one,
    taken evenly from the others."""
    seatings = 2 if len(members) == 2 else 6
    first = rng.randrange(seatings)
    points = []
    for s in range(seatings):
        noise = [rng.gauss(0, sd) for _ in members]
        y = [x - sum(noise) / len(noise) for x in noise]
        if s != first and 0 in members:
            y = [v + (gain if e == 0 else -gain / (len(members) - 1))
                 for v, e in zip(y, members, strict=True)]
        points.append(y)
    out = {}
    for k, e in enumerate(members):
        ys = [p[k] for p in points]
        alts = tuple((sum(ys) - y) / (seatings - 1) - y for y in ys)
        out[e] = SetStat(tuple(sorted(members)), alts[first], alts)
    return out


def field_of_three(seed: int, gain: float, sets: int, seats: int) -> FieldAudit:
    rng = random.Random(seed)
    field = FieldAudit(lambda e: 1 / 3, closed=3)
    groups = [(0, 1, 2)] if seats == 3 else [(0, 1), (0, 2), (1, 2)]
    for _ in range(sets):
        for g in groups:
            field.add(a_set(rng, g, gain))
    return field


def test_a_large_cheat_is_named_and_its_victims_are_not() -> None:
    """+60 a hand over 40 sets a pair: every victim's later seatings lean 30 the other way in
    the sets it shared with the cheat, yet only the cheat is named (at 1e-4)."""
    for seed in range(5):
        field = field_of_three(seed, 60.0, 40, seats=2)
        assert flags(field, 3, STRICT) == {0: "gains later"}, seed


def test_a_feeder_is_named_as_losing_later() -> None:
    for seed in range(3):
        field = field_of_three(seed, -60.0, 40, seats=2)
        assert flags(field, 3, STRICT) == {0: "loses later"}, seed


def test_the_victims_own_sets_decide_alone_not_their_sets_with_the_cheat() -> None:
    """Each victim's evidence over all its sets is huge (it loses in every set against the
    cheat), but every subset holding it without the cheat is the sets of two honest entrants:
    closed testing needs those rejected too, and they are not."""
    field = field_of_three(7, 60.0, 40, seats=2)
    assert field.entrants[1].evidence.peak > 10 and field.entrants[2].evidence.peak > 10
    honest_pair = field.subsets[frozenset({1, 2})]
    assert honest_pair.peak < 9.2  # log(1 / 1e-4)
    assert not field.named(1, STRICT) and not field.named(2, STRICT)


def test_a_group_of_three_at_three_seats_is_flagged_as_a_group() -> None:
    """Every set holds all three: none can be told apart, the group is named as such."""
    field = field_of_three(1, 30.0, 40, seats=3)
    assert field.indivisible
    assert flags(field, 3, STRICT) == dict.fromkeys(range(3), "the group differs")
    line = Verdict(30.0, 20.0, 40.0, True, 40, 12.0, "the group differs").describe("x")
    assert "group" in line and "one opponent" not in line


def test_an_honest_field_names_nobody() -> None:
    for seats in (2, 3):
        for seed in range(3):
            assert flags(field_of_three(seed, 0.0, 40, seats), 3, STRICT) == {}


def test_the_league_rule_names_the_cheat_alone_and_keeps_memory_by_pair() -> None:
    """The league's field (no closed testing: a growing field): version 3 gains +60; it is
    named, the others are not (at 1e-4), and the state holds one product per pair that met."""
    rng = random.Random(11)
    field = FieldAudit(lambda e: 1 / ((e + 1) * (e + 2)))
    for _ in range(400):
        pair = tuple(rng.sample(range(6), 2))
        relabel = {e: 0 if e == 3 else 3 if e == 0 else e for e in pair}
        stats = a_set(rng, tuple(relabel[e] for e in pair), 60.0)
        back = {v: k for k, v in relabel.items()}
        field.add({back[e]: SetStat(tuple(sorted(pair)), s.observed, s.alternatives)
                   for e, s in stats.items()})
    assert [e for e in range(6) if field.named(e, STRICT)] == [3]
    assert not field.subsets
    assert all(len(st.without) <= 5 for st in field.entrants.values())
