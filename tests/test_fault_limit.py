"""``max_faults``: who is benched depends on the schedule alone, never on the order matches finish
(concurrency, runner, resume). In-process with a simulated dispatcher, then whole tournaments
with a real bot that crashes in the matches its deal makes it crash in."""

from __future__ import annotations

import hashlib
import itertools
import json
import random
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import PY, ROOT, tournament_yaml
from fault_sim import Rescan, Run, dispatch
from referee.match.job import MatchSpec
from referee.tournament import admission
from referee.tournament.admission import BENCHED, FaultLimit
from referee.tournament.audit import in_play_order
from referee.tournament.formats import RoundRobin, State, plan_round
from referee.tournament.run import Reporter, load_config, run

NAMES = ["a", "b", "c", "d", "e"]


def round_specs(round_: int = 1, matches: int = 0, entrants: int = len(NAMES)
                ) -> list[MatchSpec]:
    return list(plan_round(RoundRobin(entrants, 2), State(entrants, round_, matches),
                           players=2, seatings="all", seed=1, secret=bytes(32)))


def faults_of(spec: MatchSpec, benched: dict[int, str]) -> list[dict[str, Any]]:
    """A match's faults: a benched seat's, and entrant 0 (and 1 less often) faults in the
    matches a hash of the id picks."""
    out = []
    for seat, i in enumerate(spec.seats):
        h = hashlib.sha256(f"{spec.id}:{i}".encode()).digest()[0]
        if i in benched:
            out.append({"seat": seat, "fault": "startup", "detail": benched[i]})
        elif (i == 0 and h % 3 == 0) or (i == 1 and h % 7 == 0):
            out.append({"seat": seat, "fault": "crash", "detail": "exited with code 3"})
    return out


def play(limit: int, slots: int, seed: int, rounds: int = 2, *, ahead: bool = False,
         kind: type[FaultLimit] = FaultLimit, entrants: int = len(NAMES),
         leave_out: int | None = None, kept: int = 0
         ) -> tuple[dict[str, list[int]], list[Run]]:
    """Plays ``rounds`` rounds of a round robin of ``entrants`` through a dispatcher that keeps
    ``slots`` matches running and ends a random one each step; returns the benched entrants by
    match id, and each stream's run. ``ahead``: every round in one stream, each added as the
    one before is taken (a round robin's rounds are planned so: matches of two rounds run at
    once), else one round after the other. ``leave_out``: entrant 4 is left out as that many
    matches have started (as a sealed entrant's changed folder is). ``kept``: one match in
    about ``kept`` (a hash of its id picks it) is kept from an earlier run, as a resume does:
    finished as the plan takes it, never played."""
    fl = kind([f"e{i}" for i in range(entrants)], limit)
    benched_by_id: dict[str, list[int]] = {}
    started = 0

    def planned() -> Iterator[list[MatchSpec]]:
        matches = 0
        for r in range(1, rounds + 1):
            specs = round_specs(r, matches, entrants)
            matches += len(specs)
            fl.add_round(specs)
            yield specs

    def lasts(spec: MatchSpec) -> float:
        nonlocal started
        started += 1
        if started == leave_out:
            fl.leave_out(4, "its folder changed")
        return random.Random(f"{seed}:{spec.id}").expovariate(1.0)

    def faults(spec: MatchSpec, benched: dict[int, str]) -> list[dict[str, Any]]:
        benched_by_id[spec.id] = sorted(benched)
        return faults_of(spec, benched)

    streams: Iterable[Iterable[MatchSpec]] = (
        [itertools.chain.from_iterable(planned())] if ahead else planned())
    def missing(specs: Iterable[MatchSpec]) -> Iterator[MatchSpec]:
        for spec in specs:
            if kept and hashlib.sha256(spec.id.encode()).digest()[1] % kept == 0:
                fl.finished(spec, faults_of(spec, {}))
            else:
                yield spec

    runs = [dispatch(fl, fl.plan(in_play_order(missing(specs))), slots, lasts, faults)
            for specs in streams]
    return benched_by_id, runs


def simulate(limit: int, slots: int, seed: int, rounds: int = 2, *,
             ahead: bool = False) -> dict[str, list[int]]:
    """The benched entrants by match id (:func:`play`)."""
    return play(limit, slots, seed, rounds, ahead=ahead)[0]


def by_the_rule(limit: int, rounds: int = 2) -> dict[str, list[int]]:
    """The rule, straight: an entrant sits out a set once its faults (not counting a benched
    seat's) in the sets before it reach ``limit``."""
    counts = [0] * len(NAMES)
    out: dict[str, list[int]] = {}
    matches = 0
    for r in range(1, rounds + 1):
        specs = round_specs(r, matches)
        matches += len(specs)
        for g in sorted({s.group for s in specs}):
            members = [s for s in specs if s.group == g]
            benched = {i: "disqualified: x" for i in members[0].seats if counts[i] >= limit}
            for spec in members:
                out[spec.id] = sorted(benched)
            for spec in members:
                for f in faults_of(spec, benched):
                    if not f["detail"].startswith(BENCHED):
                        counts[spec.seats[f["seat"]]] += 1
    return out


@pytest.mark.parametrize("limit", [1, 2, 3])
def test_benched_sets_follow_the_schedule_whatever_the_finish_order(limit: int) -> None:
    expected = by_the_rule(limit)
    seats = {s.id: s.seats for s in round_specs(1) + round_specs(2, len(round_specs(1)))}
    a_benched = [0 in expected[k] for k in expected if 0 in seats[k]]
    assert any(a_benched) and not all(a_benched)  # the case is not empty
    for slots in (1, 2, 3, 8):
        for seed in range(5):
            assert simulate(limit, slots, seed) == expected, (slots, seed)
            assert simulate(limit, slots, seed, ahead=True) == expected, (slots, seed)


@pytest.mark.parametrize("limit", [pytest.param(1, marks=pytest.mark.heavy),
                                   *(pytest.param(n, marks=pytest.mark.deep) for n in (2, 3, 5))])
def test_the_plan_answers_as_deciding_every_held_set_again_did(
        limit: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Answer for answer (each match, who is benched in it, each wait), the same as the plan
    that decided every held set again each time it was asked (:class:`fault_sim.Rescan`), with
    rounds added while earlier ones play, an entrant left out as play goes on, matches kept
    from an earlier run (a resume), and as many sets held as may be (a :data:`LOOKAHEAD` of 4
    in the last case)."""
    waits = 0
    for entrants, slots, ahead, leave_out, kept, lookahead in (
            (5, 3, False, None, 0, 256), (9, 2, False, 7, 0, 256), (12, 8, True, None, 0, 256),
            (12, 32, True, 40, 0, 256), (8, 6, True, None, 3, 256),
            (16, 16, True, None, 0, 4)):
        monkeypatch.setattr(admission, "LOOKAHEAD", lookahead)
        for seed in range(3):
            cases = [play(limit, slots, seed, 3, ahead=ahead, kind=kind, entrants=entrants,
                          leave_out=leave_out, kept=kept) for kind in (Rescan, FaultLimit)]
            assert cases[0][0] == cases[1][0], (entrants, slots, seed)
            logs = [[run.log for run in case[1]] for case in cases]
            assert logs[0] == logs[1], (entrants, slots, seed)
            waits += sum(item is None for run in cases[1][1] for item in run.log)
    assert waits > 100  # the case is not empty: the plan waited, often


def test_the_disqualification_names_the_schedules_last_fault_not_the_last_to_finish() -> None:
    fl = FaultLimit(NAMES, 1)
    specs = round_specs()  # g001: a-b, g002: a-c, g003: a-d, g004: a-e, g005: b-c, ...
    fl.add_round(specs)
    plan = fl.plan(specs)
    assert [next(plan), next(plan)] == [(specs[0], {}), (specs[1], {})]
    assert next(plan) is None  # every later set holds a or b, or waits on one that does
    crash = [{"seat": specs[1].seats.index(0), "fault": "crash", "detail": "x"}]
    assert fl.finished(specs[1], crash) == []  # its earlier match still runs
    assert next(plan) is None
    assert fl.finished(specs[0], []) == [0]
    assert fl.disqualified[0] == f"after 1 faults (max_faults 1), the last in {specs[1].id}"
    assert next(plan) == (specs[2], {0: f"disqualified: {fl.disqualified[0]}"})


def test_a_held_set_lets_later_ones_go_ahead() -> None:
    """Limit 3: a has two matches running after g001 (a-b), g002 (a-c) starts too (its two
    faults at most would make 2, plus g002's own do not count for g002); g003 and g004 (a with
    d, e) are held back, yet g005 (b-c), which neither waits on, goes ahead."""
    fl = FaultLimit(NAMES, 3)
    specs = round_specs()
    fl.add_round(specs)
    plan = fl.plan(specs)
    given = [next(plan) for _ in range(6)]
    assert [g[0].group for g in given if g] == [1, 1, 2, 2, 5, 5]
    assert next(plan) is None
    for spec in specs[:4]:  # g001 and g002 end, no fault: g003 is known now
        fl.finished(spec, [])
    item = next(plan)
    assert item is not None and item[0].group == 3 and item[1] == {}


def test_no_limit_never_waits_and_benches_only_the_left_out() -> None:
    fl = FaultLimit(NAMES, 0)
    fl.leave_out(4, "did not start")
    specs = round_specs()
    fl.add_round(specs)
    plan = fl.plan(specs)
    for spec in specs:  # nothing finished yet: every answer is known at once, in order
        assert next(plan) == (spec, {4: "left out: did not start"} if 4 in spec.seats else {})
    assert next(plan, "end") == "end"


# -- whole tournaments ---------------------------------------------------------------------------

SECRET_BYTES = bytes(range(32))


def config_file(tmp_path: Path) -> Path:
    return tournament_yaml(tmp_path, {
        "random": f"{PY} {ROOT}/bots/random_bot.py",
        "greedy": f"{PY} {ROOT}/bots/greedy_bot.py",
        "unlucky": f"{PY} {ROOT}/tests/bots/dealfault.py",
        "random-b": f"{PY} {ROOT}/bots/random_bot.py --seed 7",
    }, players=2, target=100, sandbox="none", max_faults=2)


def benched(out: Path) -> dict[str, list[tuple[int, str]]]:
    """Every match's seats with a disqualified entrant, by match id, with the fault's detail."""
    found: dict[str, list[tuple[int, str]]] = {}
    for text in (out / "results.jsonl").read_text().splitlines():
        line = json.loads(text)
        found[line["id"]] = [(f["seat"], f["detail"]) for f in line["faults"]
                             if f["detail"].startswith("disqualified: ")]
    return found


class StopAfter(Reporter):
    def __init__(self, stop: threading.Event, n: int) -> None:
        self.stop, self.n = stop, n

    def match_done(self, spec: object, result: object, done: int, table: object) -> None:
        if done >= self.n:
            self.stop.set()


@pytest.mark.process
@pytest.mark.slow
def test_a_faulty_bot_is_benched_in_the_same_matches_at_any_concurrency_and_resumed(
        tmp_path: Path) -> None:
    path = config_file(tmp_path)
    outs = {}
    for name, concurrency in (("c1", 1), ("c2", 2)):
        config = load_config(path, output=tmp_path / name, concurrency=concurrency)
        assert run(config, deal_secret=SECRET_BYTES).finished
        outs[name] = tmp_path / name
    config = load_config(path, output=tmp_path / "resumed", concurrency=2)
    stop = threading.Event()
    first = run(config, deal_secret=SECRET_BYTES, reporter=StopAfter(stop, 5), stop=stop)
    assert not first.finished and 5 <= first.done < 12
    assert run(config).finished  # the folder's own secret: the one given above
    outs["resumed"] = tmp_path / "resumed"

    reference = benched(outs["c1"])
    # the case is not empty: unlucky faults, is disqualified, and sits out the sets after
    assert len(reference) == 12
    sat_out = sorted(k for k, v in reference.items() if v)
    assert sat_out and len(sat_out) < 6, reference
    doc = json.loads((outs["c1"] / "standings.json").read_text())
    row = next(r for r in doc["standings"] if r["name"] == "unlucky")
    last = row["disqualified"].rsplit(" ", 1)[1]
    assert row["disqualified"].startswith("after 2 faults (max_faults 2), the last in ")
    # benched exactly in the sets after the one holding its second fault, in schedule order
    assert all(k[:7] > last[:7] for k in sat_out)
    unlucky = [k for k in reference if k[:7] > last[:7] and
               "unlucky" in json.loads(next(
                   x for x in (outs["c1"] / "results.jsonl").read_text().splitlines()
                   if json.loads(x)["id"] == k))["players"]]
    assert sorted(unlucky) == sat_out
    for name in ("c2", "resumed"):
        assert benched(outs[name]) == reference, name
        assert (outs[name] / "standings.json").read_text() == \
            (outs["c1"] / "standings.json").read_text(), name
