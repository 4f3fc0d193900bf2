"""A bot not on move gets only the CPU no bot on move wants (its cgroup's CPU weight drops
while it waits), and on one CPU a match's bots start one after another: a hostile bot that
burns CPU between its turns, or before its ``ready``, sharing a CPU with its opponent (as a
match's bots do with ``affinity``, or on a busy machine), takes next to nothing from the
opponent whose clock runs. Real sandboxed processes in real cgroups.

What is checked is the mechanism, in the order it happens: the weight each bot's cgroup holds
(read back from its ``cpu.shares`` or ``cpu.weight``) whenever another bot is on move or
starting, and the order of the start-ups. What that is worth in CPU shares, with each control
(the attack without the defence), is measured by ``bench/cpu_share.py``."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import BOTS
from referee.bots import cgroups
from referee.bots.bot import Bot
from referee.bots.limits import Limits
from referee.bots.probing import capabilities
from referee.bots.process import Launcher, default_spawner
from referee.bots.spawn import BotCommand
from referee.game.rules import Deal
from referee.match.play import Entrant, play_match
from referee.runners.local import allowed_cpus

CAPS = capabilities()
pytestmark = [pytest.mark.process,
              pytest.mark.skipif(not CAPS.works, reason=f"no sandbox here: {CAPS.summary()}")]
BURNER = BOTS / "hostile" / "burner.py"


def role(bot: Bot) -> str:
    """The burner.py mode a bot was started in (``burn``, ``work``, ``hold``, ...)."""
    assert isinstance(bot.spawn, BotCommand)
    argv = bot.spawn.argv
    return argv[argv.index(str(BURNER)) + 1]


def weight(bot: Bot) -> str:
    """The CPU weight the bot's cgroup holds now, read from the kernel's file: ``least``
    (:data:`~referee.bots.cgroups.OFF_MOVE`), ``full`` (``ON_MOVE``) or the number."""
    assert bot.process is not None and bot.process.cgroup is not None
    v1 = bot.process.cgroup.version("cpu") == "v1"
    held = int((bot.process.cgroup.dirs["cpu"] / ("cpu.shares" if v1 else "cpu.weight"))
               .read_text())
    return {cgroups.OFF_MOVE[v1]: "least", cgroups.ON_MOVE[v1]: "full"}.get(held, str(held))


Log = list[tuple[str, str, dict[str, str]]]


@pytest.fixture
def log(monkeypatch: pytest.MonkeyPatch) -> Iterator[Log]:
    """What happened, in order: each bot's start-up beginning and ending, and each change of
    who is on move, with the weight every live bot's cgroup holds just after it."""
    if not cgroups.find_layout().where("cpu"):
        pytest.skip("no cpu cgroup controller here: no weights to give")
    events: Log = []
    live: list[Bot] = []
    real_start, real_on_move = Bot.start, Bot._on_move

    def weights() -> dict[str, str]:
        held = {}
        for b in live:
            if b.process is not None and b.process.cgroup is not None:
                with contextlib.suppress(OSError):  # a stopped bot's group is gone
                    held[role(b)] = weight(b)
        return held

    def start(self: Bot, *args: Any, **kwargs: Any) -> str:
        live.append(self)
        events.append(("begin", role(self), weights()))
        try:
            return real_start(self, *args, **kwargs)
        finally:
            events.append(("end", role(self), weights()))

    def on_move(self: Bot, moving: bool) -> None:
        real_on_move(self, moving)
        events.append(("moving" if moving else "waiting", role(self), weights()))

    monkeypatch.setattr(Bot, "start", start)
    monkeypatch.setattr(Bot, "_on_move", on_move)
    yield events


def launcher() -> Launcher:
    return Launcher.resolve("bwrap", Limits(memory_mb=0))


def test_a_bot_not_on_move_holds_the_least_weight_while_its_opponent_moves(
        log: Log, tmp_path: Path) -> None:
    with Bot(BotCommand.of([sys.executable, str(BURNER), "burn"], workdir=BOTS / "hostile",
                           launcher=launcher(), stderr_path=tmp_path / "burner")) as burner, \
            Bot(BotCommand.of([sys.executable, str(BURNER), "work", "1000"],
                              workdir=BOTS / "hostile", launcher=launcher(),
                              stderr_path=tmp_path / "honest")) as honest:
        burner.start(10_000)
        honest.start(10_000)
        for i in range(3):
            burner.request(f"go {i}", 5000)  # its turn: at once
            honest.request(f"go {i}", 5000)
    honest_moves = [w for what, who, w in log if (what, who) == ("moving", "work")]
    assert len(honest_moves) == 3
    assert all(w == {"burn": "least", "work": "full"} for w in honest_moves), honest_moves
    burner_moves = [w for what, who, w in log if (what, who) == ("moving", "burn")]
    assert all(w == {"burn": "full", "work": "least"} for w in burner_moves), burner_moves


def start_match(tmp_path: Path, hold_ms: int, startup_ms: int = 10_000) -> None:
    """A real match on one CPU (as a pinned worker plays it): a bot that burns CPU and holds
    its ``ready`` back ``hold_ms`` in seat 0, an honest bot in seat 1."""
    cpu = allowed_cpus()[-1]
    spawner = default_spawner()
    spawner.pin({cpu})
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {cpu})  # this thread plays the match: pinned, as a worker
    try:
        seats = [Entrant("holder", (sys.executable, str(BURNER), "hold", str(hold_ms)),
                         BOTS / "hostile"),
                 Entrant("honest", (sys.executable, str(BURNER), "startwork", "1000"),
                         BOTS / "hostile")]
        play_match("m", seats, lambda k: Deal.from_key(2, bytes(16), f"d:{k}"), target=10,
                   launcher=launcher(), logs_dir=tmp_path,
                   limits=Limits(startup_ms=startup_ms, memory_mb=0))
    finally:
        os.sched_setaffinity(0, before)
        spawner.release()


def start_ups(log: Log) -> Log:
    return [e for e in log if e[0] in ("begin", "end") or
            (e[0] == "waiting" and e[1] == "hold")][:5]


def test_on_one_cpu_a_bot_starts_once_the_one_before_is_ready_and_weighs_least(
        log: Log, tmp_path: Path) -> None:
    """On one CPU a match's bots start one after another: the honest bot starts once the
    holder is ready, and so at the least weight."""
    start_match(tmp_path, hold_ms=100)
    assert [(what, who) for what, who, _ in start_ups(log)] == [
        ("begin", "hold"), ("waiting", "hold"), ("end", "hold"),
        ("begin", "startwork"), ("end", "startwork")]
    honest_begins = next(w for what, who, w in log if (what, who) == ("begin", "startwork"))
    assert honest_begins["hold"] == "least", honest_begins


def test_a_bot_that_never_says_ready_burns_at_the_least_weight_too(
        log: Log, tmp_path: Path) -> None:
    """Its start fails (no ``ready`` within 1 s), it is faulted only once every seat has
    started, and its burner lives on meanwhile: at the least weight from its failed start, not
    the full weight of one starting (which took the honest bot's start-up past its limit)."""
    start_match(tmp_path, hold_ms=5000, startup_ms=1000)
    assert [(what, who) for what, who, _ in start_ups(log)][:4] == [
        ("begin", "hold"), ("waiting", "hold"), ("end", "hold"), ("begin", "startwork")]
    honest_begins = next(w for what, who, w in log if (what, who) == ("begin", "startwork"))
    assert honest_begins["hold"] == "least", honest_begins
