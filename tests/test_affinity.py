"""``affinity``: each match's referee and bots on one CPU (the k-th worker on the k-th CPU);
``auto`` (the default): where the matches take every CPU. Real tournaments of real bot
processes that write the CPUs they may run on (``Cpus_allowed_list`` of
``/proc/self/status``) to their stderr."""

from __future__ import annotations

import dataclasses
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import CLI, PY, ROOT, tournament_yaml
from referee.bots.limits import SandboxMode
from referee.bots.process import ThreadSpawner, default_spawner
from referee.runners.local import Placement, ThreadRunner, allowed_cpus, auto_affinity
from referee.tournament.config import ConfigError
from referee.tournament.run import load_config, run
from referee.tournament.startup import affinity as _affinity

SECRET = bytes(range(32))
CPUS = allowed_cpus()


def cpu_list(text: str) -> set[int]:
    """``0-2,5`` as {0, 1, 2, 5}."""
    out: set[int] = set()
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out.update(range(int(lo), int(hi or lo) + 1))
    return out


def write(tmp_path: Path, *, concurrency: int, affinity: str | None) -> Path:
    bot = tmp_path / "where.sh"
    bot.write_text(f"#!/bin/sh\ngrep Cpus_allowed_list /proc/self/status >&2\n"
                   f"exec {PY} {ROOT}/bots/random_bot.py\n")
    bot.chmod(bot.stat().st_mode | stat.S_IXUSR)
    extra = {} if affinity is None else {"affinity": yaml.safe_load(affinity)}  # as written
    return tournament_yaml(tmp_path, {f"b{i}": "./where.sh" for i in range(3)}, players=2,
                           target=30, sandbox="none", preflight="off", concurrency=concurrency,
                           **extra)


def allowed(out: Path) -> list[set[int]]:
    """Every bot's allowed CPUs, from its stderr."""
    found = []
    for log in sorted((out / "logs").glob("*/*.stderr")):
        line = log.read_text().splitlines()[0]
        found.append(cpu_list(line.split(":", 1)[1].strip()))
    return found


@pytest.mark.process
def test_worker_processes_and_their_bots_each_keep_to_one_cpu(tmp_path: Path) -> None:
    if len(CPUS) < 2:
        pytest.skip(f"this process may use one CPU only ({CPUS}): nothing to tell apart")
    config = load_config(write(tmp_path, concurrency=2, affinity="true"),
                         output=tmp_path / "out")
    assert config.affinity
    assert run(config, deal_secret=SECRET).finished
    seen = allowed(tmp_path / "out")
    assert len(seen) == 2 * 6  # 3 groups of 2, both seatings, 2 bots a match
    assert all(len(s) == 1 for s in seen), seen
    assert set().union(*seen) == set(CPUS[:2])  # two workers, two CPUs
    resolved = (tmp_path / "out" / "tournament.yaml").read_text()
    assert "affinity: true" in resolved

    # resumed without it: the same tournament (affinity is not part of what it plays)
    again = load_config(write(tmp_path, concurrency=2, affinity="false"),
                        output=tmp_path / "out")
    assert again.affinity is False
    assert run(again).finished


@pytest.mark.process
def test_without_affinity_bots_may_use_every_cpu(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, concurrency=2, affinity="false"),
                         output=tmp_path / "out")
    assert run(config, deal_secret=SECRET).finished
    assert all(s == set(CPUS) for s in allowed(tmp_path / "out"))


@pytest.mark.process
def test_auto_pins_only_where_the_matches_take_every_cpu(tmp_path: Path) -> None:
    """``auto``: a CPU left spare stays usable by every bot; with none spare, each match keeps
    to its own."""
    every = load_config(write(tmp_path, concurrency=len(CPUS), affinity=None),
                        output=tmp_path / "every")
    assert every.affinity is None
    assert run(every, deal_secret=SECRET).finished
    assert all(len(s) == 1 for s in allowed(tmp_path / "every"))
    if len(CPUS) < 2:
        return  # concurrency 1 takes the one CPU there is
    spare = load_config(write(tmp_path, concurrency=1, affinity="auto"),
                        output=tmp_path / "spare")
    assert run(spare, deal_secret=SECRET).finished
    assert all(s == set(CPUS) for s in allowed(tmp_path / "spare"))


@pytest.mark.process
def test_one_match_at_a_time_keeps_to_the_last_cpu_and_gives_the_rest_back(
        tmp_path: Path) -> None:
    config = load_config(write(tmp_path, concurrency=1, affinity="true"),
                         output=tmp_path / "out")
    runner = ThreadRunner(1, affinity=True)
    assert runner.placement == Placement((CPUS[-1],))
    assert run(config, deal_secret=SECRET, runner=runner).finished
    assert allowed(tmp_path / "out") and \
        all(s == {CPUS[-1]} for s in allowed(tmp_path / "out"))
    # closed: a bot forked by this process from now on may use every CPU again
    assert allowed_to_bots(default_spawner()) == set(CPUS)


def test_affinity_is_true_or_false(tmp_path: Path) -> None:
    path = write(tmp_path, concurrency=1, affinity="2")
    with pytest.raises(ConfigError, match=r"affinity: expected auto, true or false, got .*2"):
        load_config(path)
    with pytest.raises(ValueError, match="concurrency 1 only"):
        ThreadRunner(2, affinity=True)


@pytest.mark.process
def test_the_command_line_turns_it_on_and_says_so(tmp_path: Path) -> None:
    path = write(tmp_path, concurrency=1, affinity="false")
    proc = subprocess.run([CLI, "tournament", str(path), "-o",
                           str(tmp_path / "out"), "--affinity"], capture_output=True, text=True,
                          env=os.environ | {"COLUMNS": "200"}, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "each match on one CPU" in proc.stdout
    doc = json.loads((tmp_path / "out" / "standings.json").read_text())
    assert len(doc["standings"]) == 3


def test_auto_pins_only_an_even_split_and_only_where_sharing_a_cpu_is_fair(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``auto``: as many matches on each CPU (at 3 on 2 CPUs, two would share one while the
    third had one to itself); and a sandbox without a cpu controller gives its bots no weights,
    so a bot burning CPU between its turns would slow an opponent on its CPU: not pinned."""
    n = len(CPUS)
    assert auto_affinity(n, fair=True) and auto_affinity(2 * n, fair=True)
    assert not auto_affinity(n + 1, fair=True) or n == 1
    assert not auto_affinity(n, fair=False)
    config = load_config(write(tmp_path, concurrency=n, affinity=None))
    assert _affinity(config)  # sandbox: none: trusted bots
    sandboxed = dataclasses.replace(config, sandbox=SandboxMode.BWRAP)
    run_module = sys.modules["referee.tournament.startup"]
    monkeypatch.setattr(run_module, "capabilities", lambda: Caps(cpu=False))
    assert not _affinity(sandboxed)
    monkeypatch.setattr(run_module, "capabilities", lambda: Caps(cpu=True))
    assert _affinity(sandboxed)
    assert not _affinity(dataclasses.replace(sandboxed, affinity=False))


@dataclasses.dataclass
class Caps:
    """What :func:`_affinity` asks of the sandbox's capabilities."""

    cpu: bool

    def cgroup_ok(self, controller: str) -> bool:
        return controller == "cpu" and self.cpu


def allowed_to_bots(spawner: ThreadSpawner) -> set[int]:
    """The CPUs a process that ``spawner`` forks may use."""
    probe = spawner.run(lambda: subprocess.Popen(
        ["grep", "Cpus_allowed_list", "/proc/self/status"], stdout=subprocess.PIPE))
    return cpu_list(probe.communicate()[0].decode().split(":", 1)[1].strip())


@pytest.mark.process
def test_the_spawner_is_free_again_after_the_last_of_overlapping_pins() -> None:
    """Two pinning runners of one process (tests, a notebook) overlap: the first to close
    must not free the second's bots, nor the last leave the spawner pinned."""
    spawner = ThreadSpawner()
    try:
        spawner.pin({CPUS[-1]})
        spawner.pin({CPUS[-1]})
        spawner.release()
        assert allowed_to_bots(spawner) == {CPUS[-1]}
        spawner.release()
        assert allowed_to_bots(spawner) == set(CPUS)
    finally:
        spawner.close()
