"""The runners on their own (without a tournament): faults that travel inside a worker
process's result, the optional abilities every runner has by default, and a cluster worker
that checks the shared output folder once."""

from __future__ import annotations

import dataclasses
import functools
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from conftest import EXAMPLES, PY, QUITTER
from referee.bots.limits import Limits, SandboxMode
from referee.game.rules import Variant
from referee.match.job import MatchJob, MatchSpec
from referee.match.play import Entrant, MatchAborted
from referee.runners import local
from referee.runners.local import (
    Failed,
    Faulted,
    Finished,
    Placement,
    ProcessRunner,
    Runner,
    RunnerError,
    RunnerEvent,
    ThreadRunner,
)


def quitter_job(folder: Path, match: int) -> MatchJob:
    """A two-seat match of the quitter (seat 0: a ``crash`` at its first decision) against
    the greedy example bot, whose record goes to ``folder``."""
    (folder / "quitter.py").write_text(QUITTER)
    quitter = Entrant("quitter", (PY, str(folder / "quitter.py")))
    greedy = Entrant("greedy", (PY, str(EXAMPLES / "greedy_bot.py")))
    spec = MatchSpec(f"r1-g{match:03d}-s01", match - 1, 1, match, 1, (0, 1), "s", bytes(32))
    return MatchJob(spec, (quitter, greedy), Variant.CLASSIC, 100, Limits(move_ms=5000),
                    SandboxMode.NONE, "t", logs_dir=folder / "logs" / spec.id,
                    record_path=folder / "games" / f"{spec.id}.json")


def events_until_done(runner: Runner, jobs: int) -> list[RunnerEvent]:
    events: list[RunnerEvent] = []
    deadline = time.monotonic() + 120
    while sum(isinstance(e, Finished | Failed) for e in events) < jobs:
        assert time.monotonic() < deadline, events
        events += runner.wait(1.0)
    return events


@pytest.mark.process
@pytest.mark.parametrize("make", [ThreadRunner, ProcessRunner,
                                  functools.partial(ProcessRunner, bridge=False)],
                         ids=["threads", "processes", "processes without a bridge"])
def test_each_fault_comes_once_and_before_its_match_ends(make: Callable[[int], Runner],
                                                         tmp_path: Path) -> None:
    with make(2) as runner:
        jobs = [quitter_job(tmp_path, g) for g in (1, 2)]
        for job in jobs:
            runner.submit(job)
        events = events_until_done(runner, len(jobs))
        if isinstance(runner, ProcessRunner):  # the first before any worker was up: here
            bridge = not isinstance(make, functools.partial)
            assert runner.bridged >= 1 if bridge else runner.bridged == 0
    for job in jobs:
        mine = [e for e in events if e.job.spec.id == job.spec.id]
        assert [type(e) for e in mine] == [Faulted, Finished], mine
        fault = mine[0]
        assert isinstance(fault, Faulted) and fault.name == "quitter"
        assert fault.fault["seat"] == 0 and fault.fault["fault"] == "crash"
        done = mine[1]
        assert isinstance(done, Finished) and done.done.line["faults"] == [fault.fault]
        assert (tmp_path / "games" / f"{job.spec.id}.json").is_file()


def test_local_runners_have_the_default_abilities() -> None:
    for runner in (ThreadRunner(1), ProcessRunner(2)):
        assert runner.remote is False and runner.by_set is False
        assert runner.placement == Placement()  # not pinned, on this machine
        with pytest.raises(TypeError, match="one match at a time"):
            runner.submit_set([])
        runner.close()


def test_a_cluster_runner_declares_its_own_abilities() -> None:
    pytest.importorskip("distributed")
    from referee.runners.cluster import ClusterRunner

    assert Runner in ClusterRunner.__mro__ and ClusterRunner.remote is True
    assert ClusterRunner.submit_set is not Runner.submit_set


def test_a_worker_reads_the_shared_folder_file_once(tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    from referee.runners.worker import shares_output

    key = tmp_path / "secret"
    key.write_text("abc")
    job = quitter_job(tmp_path, 1)
    shared = dataclasses.replace(job, shared=(key, "abc"))
    apart = dataclasses.replace(job, shared=(key, "xyz"))
    assert shares_output(shared) and not shares_output(apart)
    key.unlink()  # read once: the answers stand without the file
    assert shares_output(shared) and not shares_output(apart)
    assert not shares_output(job)  # no shared file named: the record comes back


@pytest.mark.process
def test_worker_processes_make_files_with_the_umask_of_their_runner(tmp_path: Path) -> None:
    """Each runner's workers take the umask of the moment its pool was made, even forked from
    a server started earlier under another one (a tournament's records are private)."""
    modes = []
    for umask, folder in ((0o022, tmp_path / "a"), (0o077, tmp_path / "b")):
        folder.mkdir()
        old = os.umask(umask)
        try:
            with ProcessRunner(2) as runner:
                runner.start()
                job = quitter_job(folder, 1)
                runner.submit(job)
                events_until_done(runner, 1)
        finally:
            os.umask(old)
        modes.append((folder / "games" / f"{job.spec.id}.json").stat().st_mode & 0o777)
    assert modes == [0o644, 0o600]


class _HeldPool:
    """A stand-in for ``ProcessPoolExecutor`` in ``referee.runners.local`` that holds the
    making of the pool until ``gate`` is set, then makes the real one (or raises ``error``)."""

    def __init__(self, gate: threading.Event, error: Exception | None = None) -> None:
        self.gate, self.error = gate, error

    def __call__(self, *args: Any, **kwargs: Any) -> ProcessPoolExecutor:
        assert self.gate.wait(60)
        if self.error is not None:
            raise self.error
        return ProcessPoolExecutor(*args, **kwargs)


def submitted_at_once(runner: Runner, jobs: list[MatchJob]) -> None:
    """Submits ``jobs`` from a thread that must be done long before the pool is made."""
    submitter = threading.Thread(target=lambda: [runner.submit(job) for job in jobs])
    submitter.start()
    submitter.join(30)
    assert not submitter.is_alive(), "a submit waited for the worker processes to start"


@pytest.mark.process
def test_matches_submitted_while_the_workers_start_wait_for_them_without_holding_anyone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first match plays here (the bridge); the next ones wait for the pool in order,
    without holding the tournament's thread, and each ends once, as a worker's would."""
    gate = threading.Event()
    monkeypatch.setattr(local, "ProcessPoolExecutor", _HeldPool(gate))
    with ProcessRunner(2) as runner:
        runner.start()
        jobs = [quitter_job(tmp_path, g) for g in (1, 2, 3)]
        submitted_at_once(runner, jobs)
        gate.set()
        events = events_until_done(runner, len(jobs))
        assert runner.bridged == 1
    for job in jobs:
        mine = [type(e) for e in events if e.job.spec.id == job.spec.id]
        assert mine == [Faulted, Finished], mine


@pytest.mark.process
def test_a_match_waiting_for_the_workers_is_cancelled_or_fails_with_their_start(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gate = threading.Event()
    monkeypatch.setattr(local, "ProcessPoolExecutor", _HeldPool(gate))
    with ProcessRunner(2, bridge=False) as runner:  # cancelled while it waits: never played
        runner.start()
        job = quitter_job(tmp_path, 1)
        submitted_at_once(runner, [job])
        runner.cancel()
        gate.set()
        [event] = events_until_done(runner, 1)
        assert isinstance(event, Failed) and isinstance(event.error, MatchAborted)
    assert not (tmp_path / "games" / f"{job.spec.id}.json").exists()

    gate = threading.Event()
    monkeypatch.setattr(local, "ProcessPoolExecutor",
                        _HeldPool(gate, OSError(24, "Too many open files")))
    with ProcessRunner(2, bridge=False) as runner:  # the pool could not be made
        runner.start()
        submitted_at_once(runner, [job])
        gate.set()
        [event] = events_until_done(runner, 1)
        assert isinstance(event, Failed) and isinstance(event.error, RunnerError)
        assert str(event.error) == ("the referee's worker processes could not start: [Errno 24] "
                                    "Too many open files")


@pytest.mark.process
def test_a_cancel_takes_the_matches_that_waited_off_the_pools_queue(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Handed to the pool once it is made, the matches that waited are still cancelled by a
    cancel: the last of them, queued behind the one worker, never starts; each ends once."""
    gate = threading.Event()
    monkeypatch.setattr(local, "ProcessPoolExecutor", _HeldPool(gate))
    with ProcessRunner(1, bridge=False) as runner:
        runner.start()
        jobs = [quitter_job(tmp_path, g) for g in (1, 2, 3)]
        submitted_at_once(runner, jobs)
        gate.set()
        runner._starter.join(60)  # type: ignore[union-attr]  # the pool made, the jobs handed
        runner.cancel()
        events = events_until_done(runner, len(jobs))
        assert runner._handed[-1].cancelled()
    ends = [e for e in events if isinstance(e, Finished | Failed)]
    assert sorted(e.job.spec.id for e in ends) == sorted(j.spec.id for j in jobs)
    last = next(e for e in ends if e.job is jobs[-1])
    assert isinstance(last, Failed) and str(last.error) == f"match {jobs[-1].spec.id} stopped"
    assert not (tmp_path / "games" / f"{jobs[-1].spec.id}.json").exists()


def test_the_header_words_where_a_runner_plays() -> None:
    """A runner says where its matches run (:class:`Placement`); the tournament's header says it
    in words, with what a sandboxed run's seatings share."""
    from referee.tournament.run import isolation

    apart = "the seatings of a set never at once"
    assert isolation(Placement(), sandboxed=True) == \
        f"{apart}, every file the bots see shown from memory"
    assert isolation(Placement((0, 3)), sandboxed=False) == \
        f"{apart}, each match on one CPU (affinity: 0, 3)"
    assert isolation(Placement(hosts=2, spread=True, client="uid 9"), sandboxed=True) == \
        (f"{apart}, each on another host where the cluster has enough (2 now), and the Dask "
         f"client in a process of its own, as uid 9")
    assert "on any worker" in isolation(Placement(hosts=1, client="uid 9"), sandboxed=False)
