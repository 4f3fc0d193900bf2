"""Tournaments on a Dask cluster (``--scheduler``) and in worker processes (``--concurrency``):
the standings of a local run, a worker killed mid-match, a scheduler that cannot be reached
or goes away."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import shutil
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from plans import planned

from conftest import BOTS, PY, ROOT, need_extra, quitter_tournament, tournament_yaml

need_extra("distributed", extra="distributed")
from distributed import Client, LocalCluster

from referee.bots.process import bwrap_available
from referee.match.job import MatchJob
from referee.records.record import read_record
from referee.runners.cluster import ClusterError, ClusterRunner
from referee.runners.local import ProcessRunner, allowed_cpus
from referee.tournament.run import (
    SECRET,
    Config,
    Outcome,
    TournamentError,
    load_config,
    read_deal_secret,
    run,
)

CLI = [PY, "-c", "from referee.cli import main; main()"]
DASK = str(Path(PY).parent / "dask")
pytestmark = pytest.mark.process  # each test but five cheap ones is slow too: the deep lane
MATCHES = 4 * 6  # C(4, 3) groups x 3! seatings


def write_config(folder: Path, flags: Path) -> Path:
    """Four deterministic entrants, one of them the blocker (which blocks once per ``flags``
    folder); moves may take a minute, so a blocked bot never times out before the test acts."""
    bots = folder / "bots"
    bots.mkdir(exist_ok=True)
    for name in ("random_bot.py", "greedy_bot.py"):
        shutil.copy(ROOT / "bots" / name, bots / name)
    flags.mkdir(exist_ok=True)
    return tournament_yaml(folder, {
        "random": [PY, f"{bots}/random_bot.py", "--seed", "3"],
        "greedy": [PY, f"{bots}/greedy_bot.py"],
        "blocker": [PY, f"{BOTS}/blocker.py", str(flags)],
        "random-b": [PY, f"{bots}/random_bot.py", "--seed", "7"],
    }, name="t", players=3, target=200, sandbox="none", limits={"move_ms": 60000})


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """The config and the standings.json of a run in this process (the blocker never blocks:
    its flag folder already says it did)."""
    yield reference_run(tmp_path_factory.mktemp("cluster"))


def reference_run(base: Path) -> tuple[Path, str]:
    """The tournament of :func:`write_config` under ``base``, played in this process (the
    blocker never blocks: its flag folder already says it did): its config and standings."""
    path = write_config(base, base / "flags")
    (base / "flags" / "blocked").write_text("0\n")
    outcome = run(load_config(path, output=base / "reference", concurrency=1))
    assert outcome.finished and outcome.played == MATCHES
    return path, (base / "reference" / "standings.json").read_text()


def own_config(tmp_path: Path) -> tuple[Config, Path]:
    """The tournament of :func:`write_config` under ``tmp_path`` (output ``out``), loaded, and
    its blocker's flag folder."""
    flags = tmp_path / "flags"
    return load_config(write_config(tmp_path, flags), output=tmp_path / "out"), flags


def secret_of(path: Path) -> bytes:
    """The reference run's deal secret, as bytes."""
    return read_deal_secret(path.parent / "reference" / SECRET).key


def journal_ids(out: Path) -> list[str]:
    return [json.loads(line)["id"] for line in (out / "results.jsonl").read_text().splitlines()]


class InBackground:
    """A tournament :func:`run` in a thread of this process, for a test to act on mid-run."""

    def __init__(self, config: Config, runner: ClusterRunner, **kw: Any) -> None:
        self.ended: list[Outcome | BaseException] = []
        self.thread = threading.Thread(target=self._play, args=(config, runner, kw))
        self.thread.start()

    def _play(self, config: Config, runner: ClusterRunner, kw: dict[str, Any]) -> None:
        try:
            self.ended.append(run(config, runner=runner, **kw))
        except BaseException as err:
            self.ended.append(err)

    def outcome(self, timeout: float = 300) -> Outcome:
        """The run's outcome, once it ends (within ``timeout`` seconds)."""
        self.thread.join(timeout=timeout)
        assert not self.thread.is_alive()
        (outcome,) = self.ended
        assert isinstance(outcome, Outcome), outcome
        return outcome


@pytest.mark.slow
def test_a_two_worker_cluster_gives_the_standings_of_a_local_run(
    reference: tuple[Path, str], cluster: LocalCluster, tmp_path: Path,
) -> None:
    path, standings = reference
    config = load_config(path, output=tmp_path / "out")
    runner = ClusterRunner(cluster.scheduler_address, sandbox=config.sandbox)
    outcome = run(config, runner=runner, deal_secret=secret_of(path))
    assert outcome.finished and outcome.played == MATCHES
    assert (tmp_path / "out" / "standings.json").read_text() == standings
    assert sorted(journal_ids(tmp_path / "out")) == sorted(
        s.id for s in planned(config, secret=secret_of(path)))
    # The bots' stderr came back from the workers and was written here, by the coordinator.
    logs = tmp_path / "out" / "logs" / "r1-g001-s01"
    assert sorted(p.name for p in logs.iterdir()) == ["0-random.stderr", "1-greedy.stderr",
                                                      "2-blocker.stderr"]


@pytest.mark.slow
def test_worker_processes_give_the_standings_of_a_local_run(
    reference: tuple[Path, str], tmp_path: Path,
) -> None:
    path, standings = reference
    config = load_config(path, output=tmp_path / "out", concurrency=2)
    outcome = run(config, runner=ProcessRunner(2), deal_secret=secret_of(path))
    assert outcome.finished and outcome.played == MATCHES
    assert (tmp_path / "out" / "standings.json").read_text() == standings


def wait_for(path: Path, what: str, *, line: bool = False) -> None:
    """Until ``path`` exists (with ``line``: and holds a whole line, which its writer may not
    have written yet when it appears)."""
    deadline = time.monotonic() + 120
    while not (path.exists() and (not line or path.read_text().endswith("\n"))):
        assert time.monotonic() < deadline, f"never saw {what}"
        time.sleep(0.02)


@pytest.mark.slow
def test_a_worker_killed_mid_match_loses_nothing_and_duplicates_nothing(
    reference: tuple[Path, str], cluster: LocalCluster, tmp_path: Path,
) -> None:
    path, standings = reference
    config, flags = own_config(tmp_path)
    runner = ClusterRunner(cluster.scheduler_address, sandbox=config.sandbox)
    with Client(cluster.scheduler_address) as client:
        workers = set(client.run(os.getpid).values())
    playing = InBackground(config, runner, deal_secret=secret_of(path))
    try:
        wait_for(flags / "blocked", "the blocker start to move", line=True)
        pid = int((flags / "blocked").read_text())
        assert pid in workers  # the bot's parent is a worker process, mid-match
        os.kill(pid, signal.SIGKILL)
    finally:
        (flags / "go").write_text("")  # the orphaned bot reads the end of its input
        outcome = playing.outcome()
    assert outcome.finished and outcome.played == MATCHES
    ids = journal_ids(tmp_path / "out")
    assert len(ids) == len(set(ids)) == MATCHES
    assert (tmp_path / "out" / "standings.json").read_text() == standings
    # the workers share the folder: they wrote the records and logs, no attempt's file is left
    assert sorted(p.name for p in (tmp_path / "out" / "games").iterdir()) == \
        sorted(f"{i}.json.gz" for i in ids)
    assert all(any((tmp_path / "out" / "logs" / i).iterdir()) for i in ids)


@pytest.mark.slow
def test_an_unreachable_scheduler_is_a_one_line_error(reference: tuple[Path, str],
                                                      tmp_path: Path) -> None:
    path, _ = reference
    with socket.socket() as held:  # bound, never listening: refused, and no one else's port
        held.bind(("127.0.0.1", 0))
        address = f"tcp://127.0.0.1:{held.getsockname()[1]}"
        done = subprocess.run([*CLI, "tournament", str(path), "-o", str(tmp_path / "out"),
                               "--scheduler", address], capture_output=True, text=True,
                              timeout=120, cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.startswith(f"error: cannot reach the Dask scheduler {address!r}: ")
    assert len(done.stderr.splitlines()) == 1, done.stderr
    assert not (tmp_path / "out" / "results.jsonl").exists()  # nothing started


def test_a_cluster_without_the_match_resource_is_refused() -> None:
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, protocol="tcp://",
                      dashboard_address=None) as plain, \
            pytest.raises(ClusterError, match="offers the 'match' resource"):
        ClusterRunner(plain.scheduler_address)


UNAUTHENTICATED = "warning: the cluster at tcp://"
"""How the coordinator's warning about a plain ``tcp://`` cluster starts."""


def errors(stderr: str) -> list[str]:
    """The lines of a coordinator's stderr after its warning that the cluster (plain tcp) is not
    authenticated, which it must give once."""
    lines = stderr.splitlines()
    assert [line for line in lines if line.startswith(UNAUTHENTICATED)] == lines[:1], stderr
    return lines[1:]


def start(args: list[str], cwd: Path, **kw: object) -> subprocess.Popen[str]:
    return subprocess.Popen(args, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, **kw)  # type: ignore[call-overload]


@pytest.mark.slow
def test_a_scheduler_that_goes_away_stops_cleanly_and_the_run_resumes_locally(
    reference: tuple[Path, str], tmp_path: Path,
) -> None:
    path, standings = reference
    flags = tmp_path / "flags"
    config = write_config(tmp_path, flags)
    # The scheduler picks its own port and writes it to a file: a port chosen here and bound
    # later could be taken in between by another run on the machine, whose scheduler the
    # worker and the coordinator would then join.
    scheduler_file = tmp_path / "scheduler.json"
    scheduler = start([DASK, "scheduler", "--host", "127.0.0.1", "--port", "0",
                       "--no-dashboard", "--scheduler-file", str(scheduler_file)], tmp_path)
    wait_for(scheduler_file, "the scheduler's file")
    address = ""
    while not address:  # written, but perhaps not whole yet
        with contextlib.suppress(ValueError):
            address = json.loads(scheduler_file.read_text()).get("address", "")
        time.sleep(0.02)
    worker = start([DASK, "worker", "--scheduler-file", str(scheduler_file), "--nthreads", "1",
                    "--resources", "match=1", "--no-dashboard", "--death-timeout", "5"],
                   tmp_path)
    out = tmp_path / "out"
    args = [str(config), "-o", str(out), "--deal-secret",
            str(path.parent / "reference" / SECRET)]
    try:
        coordinator = start([*CLI, "tournament", *args, "--scheduler", address], tmp_path)
        wait_for(flags / "blocked", "the blocker start to move", line=True)
        scheduler.send_signal(signal.SIGKILL)
        _, stderr = coordinator.communicate(timeout=120)
    finally:
        (flags / "go").write_text("")
        for proc in (scheduler, worker):
            if proc.poll() is None:
                proc.kill()
            proc.communicate(timeout=60)
    assert coordinator.returncode == 1, stderr
    assert "Traceback" not in stderr
    lines = errors(stderr)
    assert lines[0].startswith(f"error: lost the Dask scheduler {address!r}"), stderr
    assert lines[1] == (f"fix it, then resume with: ct-referee tournament {config} --output "
                        f"{out} --scheduler {address}")
    assert lines[2:] == [f"report: {(out / 'report' / 'index.html').absolute()}"], stderr
    assert not (out / "standings.json").exists()
    local = subprocess.run([*CLI, "tournament", *args], capture_output=True, text=True,
                           timeout=300, cwd=tmp_path)
    assert local.returncode == 0, local.stderr
    assert (out / "standings.json").read_text() == standings
    ids = journal_ids(out)
    assert len(ids) == len(set(ids)) == MATCHES



@pytest.mark.slow
@pytest.mark.parametrize("where", ["processes", "cluster"])
def test_faults_are_shown_from_worker_processes_and_cluster_workers(
    where: str, cluster: LocalCluster, tmp_path: Path,
) -> None:
    path = quitter_tournament(tmp_path)
    extra = ["-j", "2"] if where == "processes" else ["--scheduler", cluster.scheduler_address]
    done = subprocess.run([*CLI, "tournament", str(path), "-o", str(tmp_path / "out"), *extra],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "fault: r1-g001-s01 quitter (seat 0) crash in hand 1: exited with code 3" \
        in done.stdout
    assert "fault: r1-g001-s02 quitter (seat 1) crash in hand 1" in done.stdout
    assert done.stdout.count("fault: ") == 2
    if where == "cluster":
        assert "  sandbox:   none (resolved on each worker)\n" in done.stdout
        running = (f"running: on the Dask scheduler {cluster.scheduler_address}; the seatings "
                   f"of a set never at once, each on another host where the cluster has enough "
                   f"(1 now), and the Dask client in a process of its own, as ")
        assert running in " ".join(done.stdout.split())  # the line wraps under its label
    else:
        assert "  sandbox:   none\n" in done.stdout
        # affinity auto: on where 2 matches take every CPU
        pinned = ", each match on one CPU (affinity: " if len(allowed_cpus()) <= 2 else "\n"
        assert ("  running:   concurrency 2; the seatings of a set never at once" + pinned
                in done.stdout)
    table = json.loads((tmp_path / "out" / "standings.json").read_text())["standings"]
    assert [row["name"] for row in table] == ["greedy", "quitter"]


@pytest.mark.slow
def test_stop_cancels_the_cluster_tasks_and_a_resume_completes(
    reference: tuple[Path, str], cluster: LocalCluster, tmp_path: Path,
) -> None:
    path, standings = reference
    config, flags = own_config(tmp_path)
    stop = threading.Event()
    playing = InBackground(config, ClusterRunner(cluster.scheduler_address),
                           deal_secret=secret_of(path), stop=stop)
    try:
        wait_for(flags / "blocked", "the blocker start to move", line=True)
        stop.set()
        outcome = playing.outcome(timeout=120)
    finally:
        (flags / "go").write_text("")  # the cancelled match stops at its next turn
    assert not outcome.finished and outcome.standings is None
    assert not (tmp_path / "out" / "standings.json").exists()
    again = run(config, runner=ClusterRunner(cluster.scheduler_address))
    assert again.finished and again.played == MATCHES - outcome.done
    assert (tmp_path / "out" / "standings.json").read_text() == standings
    ids = journal_ids(tmp_path / "out")
    assert len(ids) == len(set(ids)) == MATCHES


def _without_bwrap() -> None:
    """Run on a worker: bubblewrap no longer works there."""
    import referee.bots.process

    referee.bots.process.bwrap_available = lambda: False  # type: ignore[assignment]


@pytest.mark.slow
@pytest.mark.skipif(not bwrap_available(), reason="bubblewrap is not available here")
def test_a_worker_without_the_sandbox_asked_for_is_a_clear_error(
    reference: tuple[Path, str], tmp_path: Path,
) -> None:
    path, _ = reference
    text = path.read_text().replace("sandbox: none", "sandbox: bwrap")
    (tmp_path / "t.yaml").write_text(text)
    config = load_config(tmp_path / "t.yaml", output=tmp_path / "out")
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                      resources={"match": 1}, dashboard_address=None) as lone, \
            Client(lone.scheduler_address) as client:
        client.run(_without_bwrap)
        runner = ClusterRunner(lone.scheduler_address, sandbox=config.sandbox)
        with pytest.raises(TournamentError) as caught:
            run(config, runner=runner, deal_secret=secret_of(path))
    message = str(caught.value)
    assert message.startswith("on worker tcp://127.0.0.1:")
    assert ": sandbox 'bwrap' requested but it does not work here: " in message
    assert "\n" not in message
    assert not (tmp_path / "out" / "results.jsonl").exists()  # no match was played


def test_a_scheduler_file_is_followed_and_a_stale_one_refused(cluster: LocalCluster,
                                                              tmp_path: Path) -> None:
    """--scheduler-file: the address comes from the file, and the scheduler that answers
    must be the one that wrote it (a stale file whose port another scheduler has taken would
    send it the deal secret with every match)."""
    with Client(cluster.scheduler_address) as client:
        ident = client.scheduler_info()["id"]
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"type": "Scheduler", "id": ident,
                                "address": cluster.scheduler_address}))
    runner = ClusterRunner(scheduler_file=good)
    try:
        assert runner.address == cluster.scheduler_address and runner.slots() >= 1
    finally:
        runner.close()
    stale = tmp_path / "stale.json"
    stale.write_text(json.dumps({"type": "Scheduler", "id": "Scheduler-of-last-week",
                                 "address": cluster.scheduler_address}))
    with pytest.raises(ClusterError, match=r"is not the one that wrote .*stale\.json"):
        ClusterRunner(scheduler_file=stale)
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(ClusterError, match=r"bad\.json'.*cannot read: not JSON"):
        ClusterRunner(scheduler_file=tmp_path / "bad.json")


def test_a_lost_worker_is_reported() -> None:
    warnings: list[str] = []
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, protocol="tcp://",
                      resources={"match": 1}, dashboard_address=None) as local:
        runner = ClusterRunner(local.scheduler_address, warn=warnings.append)
        try:
            assert runner.slots() == 4
            addresses = [w.address for w in local.workers.values()]
            local.scale(1)
            deadline = time.monotonic() + 30
            while not warnings and time.monotonic() < deadline:
                time.sleep(0.2)
                runner.slots()
        finally:
            runner.close()
    assert warnings in ([f"lost Dask worker {address} (1 left): its matches are played again "
                         f"on the others"] for address in addresses), warnings


@pytest.mark.slow
def test_seatings_spread_over_hosts_and_sets_go_whole_where_they_cannot(
    reference: tuple[Path, str], cluster: LocalCluster, tmp_path: Path,
) -> None:
    """Workers on two hosts (two loopback addresses): each seating of a set on
    another host than the set's earlier ones; on one host (the module's cluster), one task per
    set. Both give the standings of a local run."""
    path, standings = reference
    (tmp_path / "flags").mkdir()
    (tmp_path / "flags" / "blocked").write_text("0\n")  # the blocker does not block
    config = load_config(write_config(tmp_path, tmp_path / "flags"), output=tmp_path / "a")
    with LocalCluster(n_workers=0, processes=True, dashboard_address=None) as bare:
        hosts = [start([DASK, "worker", bare.scheduler_address, "--host", f"127.0.0.{i}",
                        "--nthreads", "1", "--resources", "match=1", "--no-dashboard",
                        "--death-timeout", "20"], tmp_path, start_new_session=True)
                 for i in (2, 3)]  # two hosts: two loopback addresses
        try:
            with Client(bare.scheduler_address) as client:
                client.wait_for_workers(2, timeout=60)
            runner = ClusterRunner(bare.scheduler_address)
            assert not runner.by_set
            outcome = run(config, runner=runner, deal_secret=secret_of(path))
            runner.close()
        finally:
            for proc in hosts:
                stop_group(proc)
    assert outcome.finished and (tmp_path / "a" / "standings.json").read_text() == standings
    assert runner._hosts and all(len(h) == 2 for h in runner._hosts.values())
    whole = ClusterRunner(cluster.scheduler_address)
    assert whole.by_set
    config = load_config(write_config(tmp_path, tmp_path / "flags"), output=tmp_path / "b")
    outcome = run(config, runner=whole, deal_secret=secret_of(path))
    assert outcome.finished and (tmp_path / "b" / "standings.json").read_text() == standings


def test_a_worker_that_shares_the_output_folder_writes_the_record_there(
    cluster: LocalCluster, tmp_path: Path,
) -> None:
    """On a shared file system the worker writes the record (under a name of its attempt, which
    the coordinator renames) and the logs itself, and sends back the result line; where it
    does not see the folder's file as the coordinator does, it sends the record and logs."""
    from referee.bots.limits import Limits, SandboxMode
    from referee.game.rules import Variant
    from referee.match.job import MatchJob, MatchSpec
    from referee.match.play import Entrant
    from referee.runners.worker import play_on_worker

    (tmp_path / "games").mkdir()
    (tmp_path / "key").write_text("abc")
    greedy = Entrant("greedy", (PY, str(ROOT / "bots" / "greedy_bot.py")))
    spec = MatchSpec("r1-g001-s01", 0, 1, 1, 1, (0, 1), "s", bytes(32))

    def job(text: str) -> MatchJob:
        return MatchJob(spec, (greedy, greedy), Variant.CLASSIC, 100, Limits(move_ms=5000),
                        SandboxMode.NONE, "t", logs_dir=tmp_path / "logs" / spec.id,
                        record_path=tmp_path / "games" / f"{spec.id}.json",
                        shared=(tmp_path / "key", text))

    with Client(cluster.scheduler_address) as client:
        shared = client.submit(play_on_worker, job("abc"), pure=False,
                               resources={"match": 1}).result(timeout=120)
        apart = client.submit(play_on_worker, job("xyz"), pure=False,
                              resources={"match": 1}).result(timeout=120)
    assert shared.record is None and shared.logs == {} and shared.line is not None
    assert shared.written is not None and shared.written.parent == tmp_path / "games"
    assert read_record(shared.written)["totals"] == shared.line["totals"]
    assert sorted(p.name for p in (tmp_path / "logs" / spec.id).iterdir()) == \
        ["0-greedy.stderr", "1-greedy.stderr"]
    assert apart.record is not None and apart.written is None and len(apart.logs) == 2


def dask_worker(address: str, cwd: Path, *wrap: str) -> subprocess.Popen[str]:
    """A ``dask worker`` process of one match (behind ``wrap``, a command prefix), in a process
    group of its own (:func:`stop_group`)."""
    return start([*wrap, DASK, "worker", address, "--nthreads", "1", "--resources", "match=1",
                  "--no-dashboard", "--death-timeout", "10"], cwd, start_new_session=True)


def stop_group(proc: subprocess.Popen[str]) -> None:
    """Stops ``proc`` and what it started (bubblewrap passes no signal on)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=60)


@pytest.mark.slow
@pytest.mark.skipif(not bwrap_available(), reason="bubblewrap is not available here")
def test_a_worker_that_does_not_see_the_output_folder_sends_records_the_coordinator_writes(
    reference: tuple[Path, str], tmp_path: Path,
) -> None:
    """A worker whose output folder is another (bubblewrap mounts an empty one over it for the
    worker process and everything it starts: a machine without the shared file system) sends
    back each record and the bots' stderr; the coordinator writes them."""
    path, standings = reference
    (tmp_path / "flags").mkdir()
    (tmp_path / "flags" / "blocked").write_text("0\n")  # the blocker does not block
    out = tmp_path / "out"
    out.mkdir()
    config = load_config(write_config(tmp_path, tmp_path / "flags"), output=out)
    with LocalCluster(n_workers=0, processes=True, dashboard_address=None) as bare:
        worker = dask_worker(bare.scheduler_address, tmp_path,
                             "bwrap", "--dev-bind", "/", "/", "--tmpfs", str(out), "--")
        try:
            with Client(bare.scheduler_address) as client:
                client.wait_for_workers(1, timeout=60)
                runner = ClusterRunner(bare.scheduler_address, sandbox=config.sandbox)
                outcome = run(config, runner=runner, deal_secret=secret_of(path))
                # what the worker sees there: its own empty folder, no deal secret
                assert list(client.run(os.listdir, str(out)).values()) == [[]]
            runner.close()
        finally:
            stop_group(worker)
    assert outcome.finished and outcome.played == MATCHES
    assert (out / "standings.json").read_text() == standings
    ids = journal_ids(out)
    assert len(ids) == len(set(ids)) == MATCHES
    assert sorted(p.name for p in (out / "games").iterdir()) == sorted(f"{i}.json.gz" for i in ids)
    for line in (out / "results.jsonl").read_text().splitlines():
        result = json.loads(line)
        assert read_record(out / "games" / f"{result['id']}.json.gz")["totals"] == result["totals"]
    assert all(sorted(p.name for p in (out / "logs" / i).iterdir()) for i in ids)
    assert sorted(p.name for p in (out / "logs" / "r1-g001-s01").iterdir()) == \
        ["0-random.stderr", "1-greedy.stderr", "2-blocker.stderr"]


VICTIM = "victim.txt"
"""A file beside the output folder that a forged worker report names as its record."""


def _forge_reports(how: str) -> None:
    """Run on a worker: from now on it plays each match as usual (writing its record under the
    attempt's name in the shared folder) but reports the record at ``VICTIM``, beside the
    output folder (``how``: ``elsewhere``), or at an attempt's name beside the record that is
    a symbolic link to ``VICTIM`` (``link``), or reports neither a record written nor one sent
    (``nothing``), as a compromised worker could."""
    import referee.runners.worker as worker

    honest = worker.play_on_worker

    def forged(job: MatchJob) -> worker.WorkerReport:
        report = honest(job)
        assert job.record_path is not None and report.written is not None  # a shared folder
        victim = job.record_path.parent.parent.parent / VICTIM
        if how == "link":
            link = report.written.with_name(f".{job.record_path.name}.forged.tmp")
            link.symlink_to(victim)
            victim = link
        elif how == "nothing":
            return dataclasses.replace(report, written=None, line=None)
        elif how == "dotdot":  # a log named to write over the match's log folder
            return dataclasses.replace(report, logs={"..": b"x"})
        return dataclasses.replace(report, written=victim)

    worker.play_on_worker = forged  # type: ignore[assignment]


@pytest.mark.slow
@pytest.mark.parametrize("how", ["elsewhere", "link", "nothing", "dotdot"])
def test_a_forged_worker_report_naming_another_path_is_refused(how: str,
                                                               tmp_path: Path) -> None:
    """The coordinator moves a record a worker reports only from the attempt's temporary name
    beside the match's record. A worker that names another file (here the real worker's own
    code is replaced by :func:`_forge_reports`: no honest worker sends such a report) is at
    fault, and with no other worker for the match the tournament stops with one ``error:`` line
    naming the match, the worker and the path; the file stays where it
    is, untouched, and nothing is saved for the match. The same for a symbolic link at an
    attempt's name (moved, the match's record would be a link to anywhere), and for a report
    of no record at all, and for a log whose name is not a file's (``..``: an
    ``IsADirectoryError`` traceback before)."""
    (tmp_path / "flags").mkdir()
    (tmp_path / "flags" / "blocked").write_text("0\n")  # the blocker does not block
    config = write_config(tmp_path, tmp_path / "flags")
    victim = tmp_path / VICTIM
    victim.write_text("not a record\n")
    out = tmp_path / "out"
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                      resources={"match": 1}, dashboard_address=None) as lone, \
            Client(lone.scheduler_address) as client:
        client.run(_forge_reports, how)
        done = subprocess.run([*CLI, "tournament", str(config), "-o", str(out), "--scheduler",
                               lone.scheduler_address], capture_output=True, text=True,
                              timeout=120, cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    first = errors(done.stderr)[0]
    assert first.startswith("error: match r1-g001-s0"), done.stderr
    match = first.split()[2].rstrip(":")
    # its one worker refused (its matches go to no other), the run stops naming both
    refusal = f"error: match {match}: refused the result worker tcp://127.0.0.1:"
    assert first.startswith(refusal) and first.endswith(" (no worker left to play it)"), first
    why = first.split(" sent back, not counted: ", 1)[1].removesuffix(
        " (no worker left to play it)")
    if how == "elsewhere":
        assert why == (f"it reported a record at {str(victim)!r}, not beside "
                       f"{match}.json.gz"), done.stderr
    elif how == "nothing":
        assert why == "it sent back no record", done.stderr
    elif how == "dotdot":
        assert why == "it sent a log named '..'", done.stderr
    else:
        link = out / "games" / f".{match}.json.gz.forged.tmp"
        assert why == (f"it reported a record at {str(link)!r}, which is not a plain "
                       f"file"), done.stderr
    assert victim.read_text() == "not a record\n"
    assert not (out / "results.jsonl").exists() or \
        not (out / "results.jsonl").read_text().strip()
    assert not [p for p in (out / "games").iterdir() if not p.name.startswith(".")]
    # resumed here, the attempts' files the coordinator refused are cleared, and it completes
    again = subprocess.run([*CLI, "tournament", str(config), "-o", str(out)],
                           capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert sorted(p.name for p in (out / "games").iterdir()) == \
        sorted(f"{i}.json.gz" for i in journal_ids(out))
    assert victim.read_text() == "not a record\n"


SET_BLOCKER = f"""\
'''The blocker, but it blocks (once, across processes) only in the second match it plays on a
worker (its parent): a duplicate set played as one task is then midway, its first seating
finished. Run: python3 set_blocker.py FOLDER'''
import os
import sys
from pathlib import Path

sys.path.insert(0, {str(BOTS)!r})
import legal
from blocker import block_once


def main() -> None:
    folder = Path(sys.argv[1])
    first = True
    for line in sys.stdin:
        if line.startswith("chinese-ten"):
            legal.say("ready blocker\\n")
        elif line.startswith(("go", "pick")):
            if first:
                first = False
                try:
                    os.close(os.open(folder / f"seen-{{os.getppid()}}",
                                     os.O_CREAT | os.O_EXCL | os.O_WRONLY))
                except FileExistsError:
                    block_once(folder)
            legal.say(legal.answer(line) + "\\n")
        elif line.startswith("quit"):
            return


main()
"""


def _close_soon(dask_worker: object) -> None:
    """Run on a worker: it closes (as ``dask worker`` does on SIGTERM), once this returns."""
    dask_worker.loop.add_callback(dask_worker.close)  # type: ignore[attr-defined]


@pytest.mark.slow
def test_a_worker_closed_midway_through_a_whole_set_loses_no_match(
    reference: tuple[Path, str], tmp_path: Path,
) -> None:
    """On one host a duplicate set is one task (``by_set``). The worker playing it is closed
    while the set's second seating is played (its first one finished in the same task): every
    match is saved once, the seatings the closing worker did not finish are played again on
    the other worker, and the standings are those of a local run."""
    path, standings = reference
    flags = tmp_path / "flags"
    config_path = write_config(tmp_path, flags)
    (tmp_path / "bots" / "set_blocker.py").write_text(SET_BLOCKER)
    config_path.write_text(config_path.read_text().replace(
        f"{BOTS}/blocker.py", f"{tmp_path}/bots/set_blocker.py"))
    config = load_config(config_path, output=tmp_path / "out")
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      resources={"match": 1}, dashboard_address=None) as pair, \
            Client(pair.scheduler_address) as client:
        runner = ClusterRunner(pair.scheduler_address, sandbox=config.sandbox)
        assert runner.by_set  # both workers on 127.0.0.1
        workers = {pid: address for address, pid in client.run(os.getpid).items()}
        playing = InBackground(config, runner, deal_secret=secret_of(path))
        try:
            wait_for(flags / "blocked", "the blocker start to move", line=True)
            closing = workers[int((flags / "blocked").read_text())]
            client.run(_close_soon, workers=[closing])
            deadline = time.monotonic() + 60
            while client.scheduler_info()["workers"].get(closing, {}).get("status") \
                    == "running":
                assert time.monotonic() < deadline, "the worker never closed"
                time.sleep(0.02)
        finally:
            (flags / "go").write_text("")  # its bot moves; the match then sees the worker close
            outcome = playing.outcome()
        runner.close()
    assert outcome.finished and outcome.played == MATCHES
    out = tmp_path / "out"
    ids = journal_ids(out)
    assert len(ids) == len(set(ids)) == MATCHES
    assert (out / "standings.json").read_text() == standings
    assert sorted(p.name for p in (out / "games").iterdir()) == sorted(f"{i}.json.gz" for i in ids)


def test_a_worker_asks_again_whether_it_shares_the_folder_until_it_does(tmp_path: Path) -> None:
    """A "no" is not kept (a file system mounted late, a stale attribute cache would make the
    worker send every record back for the run); a "yes" is (one read a worker)."""
    from referee.runners.worker import _holds

    secret = tmp_path / ".deal-secret"
    assert not _holds(secret, "abc")
    secret.write_text("abc")
    assert _holds(secret, "abc")
    secret.unlink()
    assert _holds(secret, "abc")  # kept: not read again
