"""The worker processes of a :class:`ProcessRunner` and what ends them: a coordinator killed
outright (SIGKILL) takes its fork server, its workers and their bots with it; a Ctrl-C that
reaches a worker (SIGINT to the process group) is the coordinator's to act on, never the
worker's. Real processes throughout, found in ``/proc`` by their parent chain and by the test's
own temporary folder in the bots' command lines."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from test_runners import events_until_done

from conftest import PY, ROOT, alive, live_processes
from referee.bots.limits import Limits, SandboxMode
from referee.game.rules import Variant
from referee.match.job import MatchJob, MatchSpec
from referee.match.play import Entrant
from referee.runners.local import Finished, ProcessRunner

DEADLINE_S = 30.0
"""The most any wait of this file takes (each ends as soon as what it waits for is there)."""

SIGINT_BIT = 1 << (signal.SIGINT - 1)

COORDINATOR = """\
import sys
import time
from pathlib import Path

from referee.bots.limits import Limits, SandboxMode
from referee.game.rules import Variant
from referee.match.job import MatchJob, MatchSpec
from referee.match.play import Entrant
from referee.runners.local import ProcessRunner

if __name__ == "__main__":  # the fork server imports this module too
    folder = Path(sys.argv[1])
    bot = Entrant("slow", (sys.executable, str(folder / "slow_bot.py"), "--think", "100"))
    spec = MatchSpec("r1-g001-s01", 0, 1, 1, 1, (0, 1), "s", bytes(32))
    job = MatchJob(spec, (bot, bot), Variant.CLASSIC, 1000, Limits(move_ms=5000),
                   SandboxMode.NONE, "t", logs_dir=folder / "logs",
                   record_path=folder / "record.json")
    runner = ProcessRunner(2)
    runner.start()
    runner.submit(job)
    print("submitted", flush=True)
    while True:
        print(runner.wait(1.0), flush=True)
"""


def slow_bot(folder: Path) -> Path:
    """The instant bench bot, copied into ``folder``: its command line names the folder."""
    path = folder / "slow_bot.py"
    shutil.copy(ROOT / "bench" / "instant_bot.py", path)
    return path


def _stat(pid: int) -> tuple[int, int] | None:
    """A live process's parent and start time (clock ticks since boot): with the pid, which
    process it is (a pid can be reused)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    if fields[0] == "Z":
        return None
    return int(fields[1]), int(fields[19])


def descendants(root: int) -> dict[int, tuple[int, int]]:
    """The live descendants of ``root``: pid -> (parent, start time)."""
    table = {pid: st for pid in map(int, filter(str.isdigit, os.listdir("/proc")))
             if (st := _stat(pid)) is not None}
    found: dict[int, tuple[int, int]] = {}
    parents = {root}
    while parents:
        parents = {pid for pid, (ppid, _) in table.items()
                   if ppid in parents and pid not in found}
        found.update({pid: table[pid] for pid in parents})
    return found


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def pool_of(coordinator: int, family: dict[int, tuple[int, int]] | None = None
            ) -> tuple[list[int], list[int]]:
    """The fork servers (one, once started) of process ``coordinator``, and their workers."""
    family = descendants(coordinator) if family is None else family
    servers = [pid for pid, (ppid, _) in family.items()
               if ppid == coordinator and b"multiprocessing.forkserver" in _cmdline(pid)]
    return servers, [pid for pid, (ppid, _) in family.items() if ppid in servers]


def sigint_mask(pid: int) -> tuple[bool, bool]:
    """Whether SIGINT is blocked, and whether it is ignored, in process ``pid``."""
    status = dict(line.split(":\t", 1) for line in
                  Path(f"/proc/{pid}/status").read_text().splitlines() if ":\t" in line)
    return (bool(int(status["SigBlk"], 16) & SIGINT_BIT),
            bool(int(status["SigIgn"], 16) & SIGINT_BIT))


@contextmanager
def coordinator(folder: Path) -> Iterator[tuple[subprocess.Popen[bytes], int, list[int],
                                                list[int]]]:
    """A coordinator process playing a slow match on a :class:`ProcessRunner` of 2 workers,
    once its fork server, both workers and both bots are up: (the process, its fork server,
    its workers, its bots). Killed on the way out if still alive."""
    slow_bot(folder)
    script = folder / "coordinator.py"
    script.write_text(COORDINATOR)
    proc = subprocess.Popen([PY, str(script), str(folder)], cwd=folder,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + DEADLINE_S
        while True:
            assert proc.poll() is None, f"the coordinator ended: exit {proc.returncode}"
            family = descendants(proc.pid)
            servers, workers = pool_of(proc.pid, family)
            bots = [pid for pid in family if str(folder).encode() in _cmdline(pid)
                    and b"slow_bot.py" in _cmdline(pid)]
            if len(servers) == 1 and len(workers) == 2 and len(bots) == 2:
                break
            assert time.monotonic() < deadline, (servers, workers, bots)
            time.sleep(0.05)
        yield proc, servers[0], workers, bots
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


@pytest.mark.process
def test_a_coordinator_killed_outright_leaves_no_worker_server_or_bot(tmp_path: Path) -> None:
    with coordinator(tmp_path) as (proc, server, workers, bots):
        family = descendants(proc.pid)  # the resource tracker too
        assert {server, *workers, *bots} <= set(family)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        deadline = time.monotonic() + DEADLINE_S
        while True:
            left = {pid for pid, (_, start) in family.items()
                    if (now := _stat(pid)) is not None and now[1] == start}
            left |= set(live_processes(holding=str(tmp_path)))
            if not left:
                break
            assert time.monotonic() < deadline, {pid: _cmdline(pid) for pid in left}
            time.sleep(0.05)


@pytest.mark.process
def test_the_fork_server_and_its_workers_are_born_deaf_to_ctrl_c(tmp_path: Path) -> None:
    """The fork server is started with Ctrl-C blocked (:func:`_sigint_blocked`), so each worker
    it forks has it blocked until its initializer ignores it: a Ctrl-C between the fork and
    the initializer cannot end a worker."""
    with coordinator(tmp_path) as (_proc, server, workers, _bots):
        assert sigint_mask(server) == (True, True)  # blocked: what its forks inherit
        deadline = time.monotonic() + DEADLINE_S
        while True:  # a worker is born blocked, then ignores Ctrl-C: never open to it
            masks = [sigint_mask(worker) for worker in workers]
            assert (False, False) not in masks, masks
            if all(mask == (False, True) for mask in masks):
                break
            assert time.monotonic() < deadline, masks
            time.sleep(0.01)


def slow_job(folder: Path, match: int) -> MatchJob:
    bot = Entrant("slow", (PY, str(folder / "slow_bot.py"), "--think", "50"))
    spec = MatchSpec(f"r1-g{match:03d}-s01", match - 1, 1, match, 1, (0, 1), "s", bytes(32))
    return MatchJob(spec, (bot, bot), Variant.CLASSIC, 1, Limits(move_ms=5000),
                    SandboxMode.NONE, "t", logs_dir=folder / "logs" / spec.id,
                    record_path=folder / "games" / f"{spec.id}.json")


@pytest.mark.process
def test_ctrl_c_at_a_worker_playing_a_match_is_not_the_workers_to_act_on(
        tmp_path: Path) -> None:
    slow_bot(tmp_path)
    with ProcessRunner(2, bridge=False) as runner:  # every match in a worker
        runner.start()
        deadline = time.monotonic() + DEADLINE_S
        while len(pool_of(os.getpid())[1]) < 2:  # both workers up: one match each
            assert time.monotonic() < deadline
            time.sleep(0.02)
        jobs = [slow_job(tmp_path, g) for g in (1, 2)]
        for job in jobs:
            runner.submit(job)
        deadline = time.monotonic() + DEADLINE_S
        while len(bots := live_processes(holding=str(tmp_path))) < 4:  # 2 a match
            assert time.monotonic() < deadline, bots
            time.sleep(0.02)
        players = {st[0] for bot in bots if (st := _stat(bot)) is not None}
        assert len(players) == 2 and os.getpid() not in players  # the two workers
        for worker in players:
            os.kill(worker, signal.SIGINT)  # a Ctrl-C's signal, the coordinator left out
        events = events_until_done(runner, 2)
        assert all(isinstance(e, Finished) for e in events), events
        assert all(alive(worker) for worker in players)
        runner.submit(slow_job(tmp_path, 3))  # the pool lives on
        [third] = events_until_done(runner, 1)
        assert isinstance(third, Finished), third
    assert {e.job.spec.id for e in events} == {j.spec.id for j in jobs}
    assert len(list((tmp_path / "games").glob("*.json"))) == 3
