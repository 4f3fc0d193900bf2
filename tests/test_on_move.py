"""A bot not on move gets only the CPU no bot on move wants (its cgroup's CPU weight drops
while it waits), and on one CPU a match's bots start one after another: a hostile bot that
burns CPU between its turns, or before its ``ready``, sharing a CPU with its opponent (as a
match's bots do with ``affinity``, or on a busy machine), takes next to nothing from the
opponent whose clock runs. Real sandboxed processes, pinned to one CPU; each control shows the
attack working without the defence.

What is measured is how the two bots shared the CPU while the honest one worked: the CPU the
burner had in those moments against the CPU the honest bot had (each writes its own on its
stderr, by the machine's one monotonic clock), which whatever else the machine runs does not
change much."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import BOTS
from referee.bots import cgroups
from referee.bots.bot import Bot
from referee.bots.limits import Limits
from referee.bots.probing import capabilities
from referee.bots.process import Launcher, ThreadSpawner, default_spawner
from referee.bots.spawn import BotCommand
from referee.game.rules import Deal
from referee.match import play
from referee.match.play import Entrant, play_match
from referee.runners.local import allowed_cpus

CAPS = capabilities()
# deep (run alone, serially): shares of one CPU, which other work pinned to it would dilute
pytestmark = [pytest.mark.process, pytest.mark.deep,
              pytest.mark.skipif(not CAPS.works, reason=f"no sandbox here: {CAPS.summary()}")]
BURNER = BOTS / "hostile" / "burner.py"
ROUNDS = 60_000  # about 15-30 ms of one CPU


@pytest.fixture(autouse=True)
def weights() -> None:
    if not cgroups.find_layout().where("cpu"):
        pytest.skip("no cpu cgroup controller here: no weights to give")


def launcher() -> Launcher:
    return Launcher.resolve("bwrap", Limits(memory_mb=0))


def share(burner_log: Path, honest_log: Path) -> float:
    """The CPU the burner had while the honest bot worked, over the CPU the honest bot had
    then (1: an even split; 0: none for the burner). The burner's in a window is bounded by
    its samples just before and just after it."""
    burns = [(float(w[1]), float(w[2])) for w in
             (line.split() for line in burner_log.read_text().splitlines())
             if w and w[0] == "burn"]
    assert burns, "the burner never ran"
    taken = worked = 0.0
    for line in honest_log.read_text().splitlines():
        w = line.split()
        if not w or w[0] not in ("work", "start"):
            continue
        a, b, cpu = float(w[1]), float(w[2]), float(w[3])
        lo = max((s for s in burns if s[0] <= a), default=burns[0])
        hi = min((s for s in burns if s[0] >= b), default=burns[-1])
        taken += hi[1] - lo[1]
        worked += cpu
    assert worked > 0, "the honest bot never worked"
    return taken / worked


@pytest.fixture
def one_cpu() -> Iterator[ThreadSpawner]:
    """A spawner whose bots all run on one CPU."""
    spawner = ThreadSpawner()
    spawner.pin({allowed_cpus()[-1]})
    yield spawner
    spawner.close()


def on_move_share(spawner: ThreadSpawner, tmp_path: Path) -> float:
    """A burner and an honest bot that works before each answer: their requests in turn."""
    logs = tmp_path / "logs"
    with Bot(BotCommand.of([sys.executable, str(BURNER), "burn"], workdir=BOTS / "hostile",
                           launcher=launcher(), spawner=spawner,
                           stderr_path=logs / "burner")) as burner, \
            Bot(BotCommand.of([sys.executable, str(BURNER), "work", str(ROUNDS)],
                              workdir=BOTS / "hostile", launcher=launcher(), spawner=spawner,
                              stderr_path=logs / "honest")) as honest:
        burner.start(10_000)
        honest.start(10_000)
        for i in range(10):
            burner.request(f"go {i}", 5000)  # its turn: at once
            honest.request(f"go {i}", 5000)
    return share(logs / "burner", logs / "honest")


def test_a_bot_burning_cpu_between_its_turns_does_not_slow_its_opponent(
        one_cpu: ThreadSpawner, tmp_path: Path) -> None:
    assert on_move_share(one_cpu, tmp_path) < 0.25  # measured: 0.00-0.12 (load 5)


def test_control_without_the_weights_the_burner_takes_a_share(
        one_cpu: ThreadSpawner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cgroups.Cgroup, "on_move", lambda self, moving: None)
    assert on_move_share(one_cpu, tmp_path) > 0.5  # measured: 0.68-0.99 (load 5)


def start_share(tmp_path: Path, hold_ms: int = 400, startup_ms: int = 10_000) -> float:
    """A real match on one CPU (as a pinned worker plays it): a bot that burns CPU and holds
    its ``ready`` back ``hold_ms`` in seat 0, an honest bot that works before its ``ready`` in
    seat 1."""
    cpu = allowed_cpus()[-1]
    spawner = default_spawner()
    spawner.pin({cpu})
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {cpu})  # this thread plays the match: pinned, as a worker
    try:
        seats = [Entrant("holder", (sys.executable, str(BURNER), "hold", str(hold_ms)),
                         BOTS / "hostile"),
                 Entrant("honest", (sys.executable, str(BURNER), "startwork", str(ROUNDS)),
                         BOTS / "hostile")]
        play_match("m", seats, lambda k: Deal.from_key(2, bytes(16), f"d:{k}"), target=10,
                   launcher=launcher(), logs_dir=tmp_path,
                   limits=Limits(startup_ms=startup_ms, memory_mb=0))
    finally:
        os.sched_setaffinity(0, before)
        spawner.release()
    return share(tmp_path / "0-holder.stderr", tmp_path / "1-honest.stderr")


def test_a_bot_burning_cpu_before_its_ready_does_not_slow_the_others_start_up(
        tmp_path: Path) -> None:
    """On one CPU a match's bots start one after another: the honest bot starts once the
    holder is ready, and so at the least weight."""
    assert start_share(tmp_path) < 0.25  # measured: 0.00-0.12 (load 5)


def test_control_started_together_the_burner_takes_a_share(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(play, "_one_cpu", lambda: False)
    assert start_share(tmp_path) > 0.5  # measured: 0.68-0.99 (load 5)


def test_a_bot_that_never_says_ready_burns_at_the_least_weight_too(tmp_path: Path) -> None:
    """Its start fails (no ``ready`` within 1 s), it is faulted only once every seat has
    started, and its burner lives on meanwhile: at the least weight from its failed start, not
    the full weight of one starting (which took the honest bot's start-up past its limit)."""
    assert start_share(tmp_path, hold_ms=5000, startup_ms=1000) < 0.25  # without: 0.93
