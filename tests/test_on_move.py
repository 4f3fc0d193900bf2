"""A bot not on move gets only the CPU no bot on move wants (its cgroup's CPU weight drops
while it waits): a hostile bot that burns CPU between its turns, sharing a CPU with its
opponent (as a match's bots do with ``affinity``, or on a busy machine), does not slow the
opponent whose clock runs. Real sandboxed processes, pinned to one CPU; the control shows the
attack working without the weights."""

from __future__ import annotations

import statistics
import sys
from collections.abc import Iterator

import pytest

from conftest import BOTS
from referee.bots import cgroups
from referee.bots.bot import Bot
from referee.bots.limits import Limits
from referee.bots.process import Launcher, ThreadSpawner
from referee.bots.sandbox import capabilities
from referee.runners.local import allowed_cpus

CAPS = capabilities()
pytestmark = [pytest.mark.process,
              pytest.mark.skipif(not CAPS.works, reason=f"no sandbox here: {CAPS.summary()}")]
BURNER = BOTS / "hostile" / "burner.py"
ROUNDS = 60_000  # about 15-30 ms of one CPU a request


@pytest.fixture
def one_cpu() -> Iterator[ThreadSpawner]:
    """A spawner whose bots all run on one CPU."""
    spawner = ThreadSpawner()
    spawner.pin({allowed_cpus()[-1]})
    yield spawner
    spawner.close()


def answer_ms(opponent: str, spawner: ThreadSpawner) -> float:
    """The median time the working bot takes to answer, beside ``opponent``'s bot."""
    launcher = Launcher.resolve("bwrap", Limits(memory_mb=0))
    if not launcher.policy or not cgroups.find_layout().where("cpu"):
        pytest.skip("no cpu cgroup controller here: no weights to give")
    with Bot([sys.executable, str(BURNER), opponent], workdir=BOTS / "hostile",
             launcher=launcher, spawner=spawner) as other, \
            Bot([sys.executable, str(BURNER), "work", str(ROUNDS)], workdir=BOTS / "hostile",
                launcher=launcher, spawner=spawner) as worker:
        other.start(10_000)
        worker.start(10_000)
        times = []
        for i in range(12):
            other.request(f"go {i}", 5000)  # its turn: at once
            times.append(worker.request(f"go {i}", 5000).ms)
        return statistics.median(times[2:])


def slowdown(spawner: ThreadSpawner) -> tuple[float, float]:
    """The working bot's answer time beside a calm bot and beside a burner (each the median
    of three matches, interleaved: the machine may be busy meanwhile)."""
    calm, burning = [], []
    for _ in range(3):
        calm.append(answer_ms("calm", spawner))
        burning.append(answer_ms("burn", spawner))
    return statistics.median(calm), statistics.median(burning)


def test_a_bot_burning_cpu_between_its_turns_does_not_slow_its_opponent(
        one_cpu: ThreadSpawner) -> None:
    calm, burning = slowdown(one_cpu)  # measured: 9 ms and 9 ms; 37 and 40 at 150,000 rounds
    assert burning < 1.4 * calm, (calm, burning)


def test_control_without_the_weights_the_burner_halves_its_opponents_cpu(
        one_cpu: ThreadSpawner, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cgroups.Cgroup, "on_move", lambda self, moving: None)
    calm, burning = slowdown(one_cpu)  # measured: 9 ms and 17 ms; 37 and 92-132
    assert burning > 1.6 * calm, (calm, burning)
