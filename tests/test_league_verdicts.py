"""The league's verdicts and fair-play audit: the tournament's tests, in bounded memory."""

from __future__ import annotations

import gc
import json
import random
import sys
import types
from pathlib import Path

import pytest

from referee.league.config import LeagueConfig
from referee.league.season import League
from referee.league.verdicts import Verdicts, audit_level
from referee.match.job import DealSecret
from referee.match.spec import MatchSpec
from referee.tournament.audit import Audit, play_key
from referee.tournament.output import JournalLine
from referee.tournament.stopping import Evidence, Stop, pair_alpha

SECRET = bytes(range(16))


def a_set(rng: random.Random, members: tuple[int, ...], skill: dict[int, float], *,
          group: int = 0, cheat: int | None = None, hands: int = 6
          ) -> tuple[list[tuple[int, ...]], list[list[list[int]]], list[list[list[float]]]]:
    """One duplicate set of two seatings (``members`` and the swap) on the same deals; a
    ``cheat`` gains 20 points a hand in the seating played second."""
    deals = [[rng.randint(0, 40) for _ in members] for _ in range(hands)]
    seats = [members, members[::-1]]
    second = max(range(2), key=lambda m: play_key(spec(group, m + 1, seats[m])))
    scores, luck = [], []
    for m, order in enumerate(seats):
        hs, ls = [], []
        for k in range(hands):
            row = []
            for seat, e in enumerate(order):
                bonus = 20 if e == cheat and m == second else 0
                row.append(deals[k][seat] + round(skill[e] + rng.gauss(0, 6)) + bonus)
            hs.append(row)
            ls.append([rng.uniform(-3, 3) for _ in order])
        scores.append(hs)
        luck.append(ls)
    return seats, scores, luck


def spec(group: int, seating: int, seats: tuple[int, ...]) -> MatchSpec:
    return MatchSpec(f"r1-g{group:06d}-s{seating:02d}", group * 2 + seating, 1, group, seating,
                     seats, f"t:1:{group}", SECRET)


def test_the_bounded_tests_say_what_the_tournaments_whole_evidence_says() -> None:
    """Set after set, the league's pair tests (which forget every set once read) give the
    tournament's interval, verdict and evidence, read from its whole evidence, at the pair's
    level; and the audit's evidence is the tournament audit's, entrant by entrant."""
    rng = random.Random(7)
    skill = {0: 4.0, 1: 0.0, 2: 0.5, 3: -3.0}
    stop = Stop()
    ours, theirs = Verdicts(stop), Evidence(4)
    audit = Audit(["a", "b", "c", "d"], bound=240, per_set=2)
    names = ["a", "b", "c", "d"]
    for group in range(1, 121):
        members = tuple(rng.sample(range(4), 2))
        seats, scores, luck = a_set(rng, members, skill, group=group,
                                    cheat=3 if group > 40 else None)
        keys = [play_key(spec(group, m + 1, s)) for m, s in enumerate(seats)]
        ours.add_set(seats, scores, luck, keys)
        theirs.add_set(seats, scores, luck)
        for m, s in enumerate(seats):
            audit.add(spec(group, m + 1, s), scores[m], luck[m])
        for a in range(4):
            for b in range(4):
                if a == b:
                    continue
                alpha = pair_alpha(stop, 0, a, b, growing=True)
                iv = theirs.interval(a, b, alpha=alpha)
                got = ours.pair(a, b, names)
                assert got.sets == iv.sets
                if iv.diff is None:
                    assert got.diff is None
                    continue
                assert got.diff == pytest.approx(iv.diff, abs=1e-9)
                assert got.low == pytest.approx(iv.low, abs=1e-9)
                assert got.high == pytest.approx(iv.high, abs=1e-9)
                assert got.raw == pytest.approx(theirs.raw_diff(a, b), abs=1e-9)
                assert got.evidence == pytest.approx(theirs.evidence_for(a, b, 0.0), abs=1e-9)
                side = theirs.test(a, b, 0.0).passed(alpha)  # type: ignore[union-attr]
                word = {1: "stronger", -1: "weaker", 0: "open"}[side if a < b else -side]
                assert got.verdict == word
    assert not any(isinstance(v, list | dict) for s in ours.pairs.values()
               for v in vars(s.test).values())  # nothing grows with the sets
    verdicts = {e: ours.audit(e) for e in range(4)}
    for e in range(4):
        stats = audit.entrant_stats(e)
        assert verdicts[e].sets == len(stats)
        assert verdicts[e].later_minus_first == pytest.approx(
            sum(st.observed for st in stats) / len(stats))
    # the audit catches the cheat, on its own effect, and no honest version gains later
    assert verdicts[3].flag and verdicts[3].why == "gains later"
    assert not any(verdicts[e].flag and verdicts[e].why == "gains later" for e in range(3))
    assert ours.pair(0, 1, names).verdict == "stronger"


def test_honest_versions_are_not_flagged_and_twins_stay_open() -> None:
    """Versions of equal skill and no memory: no verdict, no flag, over many sets (at the
    season's level, 5 % over everything: the seed is fixed, the test cannot flake)."""
    rng = random.Random(3)
    skill = dict.fromkeys(range(6), 0.0)
    v = Verdicts(Stop())
    for group in range(1, 301):
        members = tuple(rng.sample(range(6), 2))
        seats, scores, luck = a_set(rng, members, skill)
        v.add_set(seats, scores, luck, [play_key(spec(group, m + 1, s))
                                        for m, s in enumerate(seats)])
    names = [str(i) for i in range(6)]
    assert all(v.pair(a, b, names).verdict == "open"
               for a in range(6) for b in range(6) if a != b)
    assert not any(v.audit(e).flag for e in range(6))
    assert sum(audit_level(Stop(), j) for j in range(6)) < Stop().alpha


def test_a_retired_version_takes_its_pairs_with_it_and_memory_is_by_pair() -> None:
    rng = random.Random(5)
    skill = {0: 1.0, 1: 0.0, 2: 2.0}
    v = Verdicts(Stop())
    for _ in range(60):
        members = tuple(rng.sample(range(3), 2))
        seats, scores, luck = a_set(rng, members, skill)
        v.add_set(seats, scores, luck, [b"x", b"y"])
    assert set(v.pairs) == {(0, 1), (0, 2), (1, 2)}
    assert not any(isinstance(x, list | dict) for s in v.pairs.values()
               for x in vars(s.test).values())
    v.drop(1)
    assert set(v.pairs) == {(0, 2)}
    assert v.pair(0, 1, ["a", "b", "c"]).sets == 0
    assert v.audit(1).sets > 0  # its audit stays
    # a set whose members do not all play: the audit reads it, the pairs' tests do not
    seats, scores, luck = a_set(rng, (0, 1), skill)
    before = v.audit(1).sets
    v.add_set(seats, scores, luck, [b"x", b"y"], pairs_of={0})
    assert (0, 1) not in v.pairs and v.audit(1).sets == before + 1


def test_a_restart_reads_back_the_same_verdicts_and_audit(tmp_path: Path) -> None:
    """A league's bookkeeping, a version retired half-way, then the same folder resumed: the
    same verdicts, audit and flags (the journal's order is the tests' order)."""
    config = LeagueConfig(path=tmp_path / "l.yaml", name="v", output=tmp_path / "out")
    (config.output / "games").mkdir(parents=True)
    first = League(config, DealSecret(SECRET), runner=None,  # type: ignore[arg-type]
                   stop=None, mode=None)  # type: ignore[arg-type]
    rng = random.Random(11)
    skill = {"a": 5.0, "b": 0.0, "c": 0.0, "d": -4.0}
    for version, name in enumerate(skill, 1):
        event = {"event": "admitted", "name": name, "author": name, "version": 1,
                 "digest": f"sha256:{version}"}
        first.events.append(event)
        first.versions.event(event)
    for group in range(1, 81):
        if group == 40:
            first.versions.retire("c", "c", "its folder was removed")
        pool = [n for n in skill if first.book.table.rows[n].active]
        members = tuple(rng.sample(pool, 2))
        for seating in (1, 2):
            order = members if seating == 1 else members[::-1]
            hands = [[rng.randint(0, 30) + round(skill[order[0]]) + (15 if order[0] == "d"
                                                                    and seating == 2 else 0),
                      rng.randint(0, 30) + round(skill[order[1]])] for _ in range(5)]
            totals = [sum(h[0] for h in hands), sum(h[1] for h in hands)]
            line = {"id": f"r1-g{group:06d}-s{seating:02d}", "players": list(order),
                    "totals": totals, "ranks": [1, 2] if totals[0] >= totals[1] else [2, 1],
                    "faults": [], "hands": 5, "scores": hands,
                    "record": f"games/r1-g{group:06d}-s{seating:02d}.json.gz"}
            first.results.append(line)
            first.folder.record(line["id"]).touch()  # its record is there: the line counts
            first.book.book(JournalLine.parse(json.loads(json.dumps(line))))
    first.results.close()
    first.events.close()
    again = League(config, DealSecret(SECRET), runner=None,  # type: ignore[arg-type]
                   stop=None, mode=None)  # type: ignore[arg-type]
    again.resume()
    was, now = first.page_data(), again.page_data()
    assert [(r["name"], r.get("next"), r["audit"]) for r in was["rows"]] == \
        [(r["name"], r.get("next"), r["audit"]) for r in now["rows"]]
    assert was["flags"] == now["flags"]
    assert not any(2 in pair for pair in again.book.verdicts.pairs)  # c retired: its pairs gone
    assert any(r.get("next") and r["next"]["sets"] > 0 for r in now["rows"])
    assert all(r["audit"]["sets"] == r["sets"] for r in now["rows"])


def deep_size(root: object) -> int:
    """The bytes of every object reachable from ``root`` (classes and modules left out)."""
    seen, stack, total = set(), [root], 0
    while stack:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, type | types.ModuleType | types.FunctionType):
            continue
        seen.add(id(obj))
        total += sys.getsizeof(obj)
        stack.extend(gc.get_referents(obj))
    return total


def test_the_memory_of_the_tests_does_not_grow_with_the_sets() -> None:
    """The same pairs over 100 sets and over 2,000: what is kept is the same size (within a
    few floats: a value that was a small int may become a float)."""
    rng = random.Random(2)
    skill = {0: 1.0, 1: 0.0, 2: -1.0}
    v = Verdicts(Stop())
    sets = [a_set(rng, tuple(rng.sample(range(3), 2)), skill) for _ in range(2000)]
    for seats, scores, luck in sets[:100]:
        v.add_set(seats, scores, luck, [b"x", b"y"])
    after_100 = deep_size(v)
    for seats, scores, luck in sets[100:]:
        v.add_set(seats, scores, luck, [b"x", b"y"])
    after_2000 = deep_size(v)
    assert sum(s.test.sets for s in v.pairs.values()) == 2000
    assert abs(after_2000 - after_100) < 512, (after_100, after_2000)
