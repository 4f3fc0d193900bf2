"""The coordinator's own parts, without bots: the ready queue, the entrant folder check, the
journal's batches, the header's advice and the plain progress lines."""

from __future__ import annotations

import io
import itertools
import os
import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from rich.console import Console

from conftest import tournament_yaml
from referee.bots.resolve import Binds, check_binds
from referee.cli import tournament as cli
from referee.match.job import MatchJob, MatchSpec
from referee.tournament.config import load_config
from referee.tournament.dispatch import ReadyQueue
from referee.tournament.entrants import _Refused, hidden_paths
from referee.tournament.output import Journal
from referee.tournament.ratings import Standings
from referee.tournament.run import plan_advice


def job(index: int, group: int) -> MatchJob:
    spec = MatchSpec(f"m{index}", index, 1, group, 1, (0, 1), "s", bytes(32))
    return MatchJob(spec, (), None, 1, None, None, "t")  # type: ignore[arg-type]


def test_the_ready_queue_never_starts_two_of_one_set_and_keeps_schedule_order() -> None:
    """Six seatings of group 1, then group 2's: while m0 plays, group 2 starts; when m0 ends,
    group 1's next seating (the earliest waiting) goes first."""
    jobs = [job(i, 1 + i // 6) for i in range(12)]
    ready = ReadyQueue(jobs)
    first, second = ready.take(), ready.take()
    assert first is not None and second is not None
    assert (first.spec.id, second.spec.id) == ("m0", "m6")
    assert ready.take() is None  # both sets are in play; the rest wait
    ready.release(second)
    ready.release(first)
    nxt = ready.take()
    assert nxt is not None and nxt.spec.id == "m1"  # schedule order among the ready sets
    nxt2 = ready.take()
    assert nxt2 is not None and nxt2.spec.id == "m7"


def test_the_ready_queue_plays_everything_once_whatever_the_finishing_order() -> None:
    rng = random.Random(5)
    jobs = [job(i, 1 + i // 3) for i in range(60)]
    ready, running, played = ReadyQueue(jobs), [], []
    while True:
        while len(running) < 7 and (nxt := ready.take()) is not None:
            assert nxt.spec.deals_key not in {j.spec.deals_key for j in running}
            running.append(nxt)
        if not running:
            break
        done = running.pop(rng.randrange(len(running)))
        played.append(done.spec.id)
        ready.release(done)
    assert sorted(played) == sorted(j.spec.id for j in jobs)


def tree(root: Path) -> list[Binds]:
    """Entrants with nested, shared and symlinked folders."""
    for name in ("a", "a/b", "a/b/c", "d", "e", "e/f", "g"):
        (root / name).mkdir()
    (root / "link").symlink_to(root / "a" / "b")
    folders = [("a",), ("a/b",), ("link",), ("d", "e"), ("e/f",), ("a/b/c", "g"), ("a",)]
    return [Binds(root / "x", tuple(root / f for f in fs), (root / "g",)) for fs in folders]


def test_the_entrant_folder_check_finds_what_the_pairwise_check_finds(tmp_path: Path) -> None:
    binds = tree(tmp_path)
    out, config = tmp_path / "d" / "out", tmp_path / "t.yaml"
    out.mkdir()
    fast = hidden_paths(binds, protected=(out, config))
    for i, b in enumerate(binds):
        others = [f for j, o in enumerate(binds) if j != i for f in o.bot]
        slow = check_binds(b, protected=(out, config), others=others)
        assert sorted(map(str, fast[i])) == sorted(map(str, slow)), i


def test_an_entrant_inside_the_output_folder_is_refused(tmp_path: Path) -> None:
    binds = tree(tmp_path)
    with pytest.raises(_Refused) as refused:
        hidden_paths(binds, protected=(tmp_path / "a" / "b",))
    assert refused.value.entrant == 1
    assert "is inside the protected path" in str(refused.value.error)


def test_journal_lines_of_a_batch_count_once_synced(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "results.jsonl")
    for i in range(3):
        journal.append({"id": f"m{i}"}, sync=False)
    journal.sync()
    journal.close()
    assert [x["id"] for x in Journal(tmp_path / "results.jsonl").load(lambda x: True)] == \
        ["m0", "m1", "m2"]


def test_a_huge_plan_is_announced_with_what_to_use_instead(tmp_path: Path) -> None:
    tournament_yaml(tmp_path, {f"e{i}": ["/bin/true"] for i in range(100)}, file="big.yaml",
                    name="big", players=3, sandbox="none")
    config = load_config(tmp_path / "big.yaml", output=tmp_path / "out")
    advice = plan_advice(config, config.total())
    assert advice is not None
    cores = os.cpu_count() or 1
    rate = round(20 * cores)  # RATE_BARE a core: sandbox none
    assert advice.startswith(f"this plan has 970,200 matches: about {970200 / rate / 3600:,.0f} "
                             f"h at {rate} matches/s (instant bots, no sandbox, this machine's "
                             f"{cores} cores)"), advice
    assert "format: ladder" in advice and "max_matches" in advice
    assert "players: 2" in advice and "seatings: rotate" in advice
    assert plan_advice(config, 100_000) is None


def test_off_a_terminal_a_progress_line_comes_at_least_every_minute(
        monkeypatch: pytest.MonkeyPatch) -> None:
    buf = io.StringIO()
    reporter = cli.PlainReporter(Console(file=buf, width=200))
    reporter.total, reporter.kept = 1000, 0
    table = Standings(["a", "b"])
    monkeypatch.setattr(cli, "PLAIN_EVERY_S", 3600.0)
    for done in range(1, 50):
        reporter.match_done(None, None, done, table)  # type: ignore[arg-type]
    assert buf.getvalue() == ""  # under a tenth, under the interval
    monkeypatch.setattr(cli, "PLAIN_EVERY_S", 0.0)
    reporter.match_done(None, None, 50, table)  # type: ignore[arg-type]
    assert buf.getvalue().startswith("50/1000 matches (5%)")


def test_off_a_terminal_the_leader_is_named_only_when_it_changes(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from referee.tournament.ratings import MatchResult

    buf = io.StringIO()
    reporter = cli.PlainReporter(Console(file=buf, width=200))
    reporter.total, reporter.kept = 6, 0
    monkeypatch.setattr(cli, "PLAIN_EVERY_S", 0.0)
    table = Standings(["a", "b\x1b[2J"])
    wins = ["a", "a", "a", "b\x1b[2J", "b\x1b[2J", "b\x1b[2J"]
    for done, winner in enumerate(wins, 1):
        first = winner == "a"
        table.add(MatchResult(players=("a", "b\x1b[2J"), totals=(10, 5) if first else (5, 10),
                              ranks=(1, 2) if first else (2, 1), hands=1))
        reporter.match_done(None, None, done, table)  # type: ignore[arg-type]
    lines = buf.getvalue().splitlines()
    assert len(lines) == 6, lines
    leaders = [line.split("; first on the table: ")[1].split(" (")[0] for line in lines
               if "first on the table" in line]
    # a leads from the first match; b takes the lead later: each named once, when it happens
    assert leaders[0] == "a" and leaders.count("a") == 1, lines
    assert leaders[1:] == ["b\\x1b[2J"], lines
    assert "\x1b" not in buf.getvalue()


def test_off_a_terminal_no_leader_is_named_before_a_rating_moved(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Rated once per set, the matches of a set not finished yet leave every entrant at the
    prior: no one leads yet (it said "leading: random (mu-3σ 0.00)")."""
    from referee.tournament.ratings import MatchResult

    buf = io.StringIO()
    reporter = cli.PlainReporter(Console(file=buf, width=200))
    reporter.total, reporter.kept = 4, 0
    monkeypatch.setattr(cli, "PLAIN_EVERY_S", 0.0)
    table = Standings(["random", "greedy"])
    result = MatchResult(players=("random", "greedy"), totals=(5, 10), ranks=(2, 1), hands=1)
    table.add(result, rate=False)
    reporter.match_done(None, None, 1, table)  # type: ignore[arg-type]
    table.rate(["greedy", "random"], [1, 2])  # the set's update
    reporter.match_done(None, None, 2, table)  # type: ignore[arg-type]
    first, second = buf.getvalue().splitlines()
    assert "first on the table" not in first, first
    assert "; first on the table: greedy (mu-3σ " in second, second


def test_combinations_are_computed_in_order() -> None:
    from referee.tournament.formats import Combinations

    for n, k in ((6, 3), (7, 2), (8, 4)):
        c = Combinations(n, k)
        every = list(itertools.combinations(range(n), k))
        assert [c[i] for i in range(len(c))] == every
        assert [c.rank(g) for g in every] == list(range(len(every)))


def test_the_ready_queue_hands_out_whole_sets() -> None:
    jobs = [job(i, 1 + i // 3) for i in range(9)]
    ready = ReadyQueue(jobs)
    first = ready.take_set()
    assert [j.spec.id for j in first] == ["m0", "m1", "m2"]
    assert [j.spec.id for j in ready.take_set()] == ["m3", "m4", "m5"]
    one = ready.take()  # one seating of the last set, then the rest of it
    assert one is not None and one.spec.id == "m6"
    assert ready.take_set() == []  # its set is in play
    ready.release(one)
    assert [j.spec.id for j in ready.take_set()] == ["m7", "m8"]
    assert ready.take_set() == []


def test_a_run_that_would_take_more_than_a_day_says_so_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from referee.tournament import run as run_module

    warned: list[str] = []

    class Note(run_module.Reporter):
        def warn(self, message: str) -> None:
            warned.append(message)

    monkeypatch.setattr(run_module, "PACE_AFTER_S", 0.0)
    pace = run_module._Pace(Note(), 10_000_000)
    pace.t0 -= 100.0  # 100 matches in 100 s: 1 a second
    pace.tick(100, 100)
    pace.tick(200, 200)
    assert len(warned) == 1
    assert warned[0].startswith("at 1.0 matches/s the 9,999,900 matches left take about 115.7 "
                                "days")
    quick = run_module._Pace(Note(), 1000)
    quick.t0 -= 1.0
    quick.tick(100, 100)
    assert len(warned) == 1


def test_the_ready_queue_asks_again_after_a_job_stream_said_wait() -> None:
    """``None`` from the job stream: nothing may start yet; the next take asks again."""
    gate = [True]

    def jobs() -> Iterator[MatchJob | None]:
        yield job(0, 1)
        while gate[0]:
            yield None
        yield job(1, 2)

    ready = ReadyQueue(jobs())
    first = ready.take()
    assert first is not None and first.spec.id == "m0"
    assert ready.take() is None and ready.held
    assert ready.take() is None and ready.held  # asked again: still waiting
    gate[0] = False
    second = ready.take()
    assert second is not None and second.spec.id == "m1" and not ready.held
    assert ready.take() is None and not ready.held  # the stream ended
