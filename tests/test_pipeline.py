"""Rounds played side by side: where no result changes the plan (a round robin or a gauntlet
without ``stop``), the next round's sets start while the last sets of the round before still
play, so a round's end leaves no slot idle; the standings stay those of round-by-round play,
at any concurrency and resumed. The ladder plans its next round from the standings of a fixed
prefix of the schedule (the round before less its last sets), so its rounds overlap too, and
its standings are the same at any concurrency and resumed; with ``stop`` a round waits for
the one before.

Processes are not the point here: the runner plays each match in-process with first-legal-move
players (the real rules and deals), and ends the matches in the order it is told to."""

from __future__ import annotations

import dataclasses
import json
import threading
from collections import deque
from pathlib import Path

import pytest

from conftest import PY, ROOT, ScriptedEntrant
from referee.match.job import MatchJob
from referee.match.play import MatchAborted
from referee.runners.local import Failed, Finished, Runner, RunnerEvent
from referee.tournament.run import Reporter, load_config, run

SECRET = bytes(range(32))


class OrderedRunner(Runner):
    """Keeps ``slots`` matches running and ends the oldest (``lifo``: the newest) at each
    :meth:`wait`; notes the rounds in play at each submit."""

    remote = False

    def __init__(self, slots: int, *, lifo: bool = False,
                 stop: threading.Event | None = None, stop_after: int = 0) -> None:
        self._slots, self.lifo = slots, lifo
        self.stop, self.stop_after = stop, stop_after
        self.running: deque[MatchJob] = deque()
        self.in_play: list[set[int]] = []
        self.ended = 0
        self.cancelled = False

    def slots(self) -> int:
        return self._slots

    def submit(self, job: MatchJob) -> None:
        self.running.append(job)
        self.in_play.append({j.spec.round for j in self.running})

    def wait(self, timeout: float) -> list[RunnerEvent]:
        if self.cancelled:  # every match in play ends unfinished
            aborted, self.running = self.running, deque()
            return [Failed(job, MatchAborted("cancelled")) for job in aborted]
        if not self.running:
            return []
        job = self.running.pop() if self.lifo else self.running.popleft()
        players = tuple(ScriptedEntrant(e.name, "-") for e in job.entrants)
        self.ended += 1
        if self.stop is not None and self.ended == self.stop_after:
            self.stop.set()
        return [Finished(job, dataclasses.replace(job, entrants=players).run())]

    def cancel(self) -> None:
        self.cancelled = True

    def close(self) -> None:
        pass


def write_config(tmp_path: Path, fmt: str, *, rounds: int = 3, extra: str = "") -> Path:
    path = tmp_path / f"{fmt}.yaml"
    path.write_text(f"""\
format: {fmt}
players: 3
seatings: all
rounds: {rounds}
target: 60
sandbox: none
preflight: "off"
{extra}entrants:
""" + "".join(f"  - {{name: e{i}, command: {PY} {ROOT}/bots/random_bot.py}}\n"
            for i in range(4)))  # never started: the runner plays in-process
    return path


def results(out: Path) -> str:
    return (out / "standings.json").read_text()


def ids(out: Path) -> list[str]:
    return sorted(json.loads(line)["id"] for line in
                  (out / "results.jsonl").read_text().splitlines())


@pytest.mark.heavy  # two in-process tournaments a format, about 1.5 s
@pytest.mark.parametrize("fmt", ["round-robin", "gauntlet"])
def test_rounds_play_side_by_side_with_the_standings_of_round_by_round_play(
        tmp_path: Path, fmt: str) -> None:
    extra = "candidates: [e0]\n" if fmt == "gauntlet" else ""
    path = write_config(tmp_path, fmt, extra=extra)
    one = OrderedRunner(1)
    assert run(load_config(path, output=tmp_path / "one"), deal_secret=SECRET,
               runner=one).finished
    two = OrderedRunner(2, lifo=True)
    assert run(load_config(path, output=tmp_path / "two"), deal_secret=SECRET,
               runner=two).finished
    assert any(len(rounds) > 1 for rounds in two.in_play)  # the next round began early
    assert results(tmp_path / "two") == results(tmp_path / "one")
    assert ids(tmp_path / "two") == ids(tmp_path / "one")
    assert len(ids(tmp_path / "one")) == 3 * (4 if fmt == "round-robin" else 3) * 6

    stop = threading.Event()  # stopped with two rounds in play, then resumed
    cut = OrderedRunner(2, lifo=True, stop=stop, stop_after=28)
    config = load_config(path, output=tmp_path / "resumed")
    first = run(config, deal_secret=SECRET, runner=cut, stop=stop, reporter=Reporter())
    assert not first.finished
    assert {1, 2} in cut.in_play  # stopped with matches of two rounds in play
    assert run(config, runner=OrderedRunner(2)).finished
    assert results(tmp_path / "resumed") == results(tmp_path / "one")


def test_a_round_whose_plan_depends_on_stop_waits_for_the_one_before(tmp_path: Path) -> None:
    runner = OrderedRunner(2, lifo=True)
    outcome = run(load_config(write_config(tmp_path, "round-robin",
                                           extra="stop: {confidence: 0.95}\n"),
                              output=tmp_path / "stop-out"),
                  deal_secret=SECRET, runner=runner)
    assert outcome.finished
    assert runner.in_play and all(len(rounds) == 1 for rounds in runner.in_play)
    assert len({r for rounds in runner.in_play for r in rounds}) > 1


def ladder(tmp_path: Path) -> Path:
    path = tmp_path / "ladder.yaml"
    path.write_text("""\
format: ladder
players: 2
rounds: 4
target: 60
sandbox: none
preflight: "off"
entrants:
""" + "".join(f"  - {{name: e{i}, command: {PY} {ROOT}/bots/random_bot.py}}\n"
            for i in range(12)))  # never started: the runner plays in-process
    return path


@pytest.mark.heavy
def test_a_ladder_plans_its_next_round_from_a_fixed_prefix_while_the_last_sets_play(
        tmp_path: Path) -> None:
    path = ladder(tmp_path)
    one = OrderedRunner(1)
    assert run(load_config(path, output=tmp_path / "one"), deal_secret=SECRET,
               runner=one).finished
    assert all(len(rounds) == 1 for rounds in one.in_play)  # one at a time: no overlap
    two = OrderedRunner(3)  # the oldest ends first: the prefix grows as play goes on
    assert run(load_config(path, output=tmp_path / "two"), deal_secret=SECRET,
               runner=two).finished
    assert any(len(rounds) > 1 for rounds in two.in_play)  # the next round began early
    lifo = OrderedRunner(3, lifo=True)  # the newest first: the prefix waits for the oldest
    assert run(load_config(path, output=tmp_path / "lifo"), deal_secret=SECRET,
               runner=lifo).finished
    assert results(tmp_path / "lifo") == results(tmp_path / "one")
    assert ids(tmp_path / "two") == ids(tmp_path / "one")  # the same groups, every round
    assert results(tmp_path / "two") == results(tmp_path / "one")
    rounds = (tmp_path / "one" / "rounds.jsonl").read_text()
    assert (tmp_path / "two" / "rounds.jsonl").read_text() == rounds

    stop = threading.Event()  # stopped with two rounds in play, then resumed
    cut = OrderedRunner(3, stop=stop, stop_after=30)
    config = load_config(path, output=tmp_path / "resumed")
    assert not run(config, deal_secret=SECRET, runner=cut, stop=stop).finished
    assert any(len(rounds) > 1 for rounds in cut.in_play)
    assert run(config, runner=OrderedRunner(2)).finished
    assert results(tmp_path / "resumed") == results(tmp_path / "one")
