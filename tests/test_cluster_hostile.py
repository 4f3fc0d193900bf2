"""Workers the coordinator need not trust: real ``dask worker`` processes started with a
``--preload`` module that turns them hostile, beside an honest one. Whatever a worker sends,
nothing of it runs in the coordinator (the Dask client is a process of its own, as a uid that
can read neither the deal secret nor the output folder), nothing forged counts, and the run
ends (status 0) with the standings of a local run, naming the worker."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import need_extra

need_extra("distributed", extra="distributed")
from distributed import Client, LocalCluster  # noqa: E402
from test_cluster import (  # noqa: E402
    CLI,
    DASK,
    MATCHES,
    journal_ids,
    reference_run,
    start,
    stop_group,
    write_config,
)
from test_cluster_trust import FORGER  # noqa: E402

from referee.match.job import MatchJob  # noqa: E402
from referee.runners.cluster import FAULTS_FILE, ClusterRunner, WorkerReport  # noqa: E402
from referee.tournament.run import SECRET, load_config, read_deal_secret, run  # noqa: E402

pytestmark = [pytest.mark.process, pytest.mark.slow]

HOSTILE = """\
'''A dask worker preload: each match played honestly, then its report sent back as $CT_HOW
says: "pickle", inside a pickle whose __reduce__ runs code wherever it is unpickled (it copies
the deal secret, $CT_SECRET, to the marker $CT_MARKER); "garbage", as an object of a class
only this module knows (it cannot be unpickled elsewhere); "bytes", as bytes that are no
report; "forge", through the forger's record rewrite (test_cluster_trust.FORGER).'''
import os

import referee.runners.worker as worker

how = os.environ["CT_HOW"]
honest = getattr(worker, "honest", worker.play_on_worker)
worker.honest = honest
CODE = ("__import__('pathlib').Path({marker!r}).write_text("
        "'ran in pid %d uid %d: ' % (__import__('os').getpid(), __import__('os').getuid()) + "
        "open({secret!r}).read())")


class Evil:
    def __reduce__(self):
        return (eval, (CODE.format(marker=os.environ["CT_MARKER"],
                                   secret=os.environ["CT_SECRET"]),))


class Unknown:
    pass


def hostile(job):
    report = honest(job)
    if how == "pickle":
        return [Evil(), report]
    if how == "garbage":
        return Unknown()
    return b"\\xff\\xfe" + os.urandom(64)


if how != "forge":
    worker.play_on_worker = hostile
"""


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """The config and the standings.json of a run in this process."""
    yield reference_run(tmp_path_factory.mktemp("hostile"))


def worker(address: str, tmp_path: Path, how: str | None,
           tls: list[str]) -> subprocess.Popen[str]:
    """A real ``dask worker`` of one match; hostile (``how``) through a preload."""
    env = {**__import__("os").environ, "DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED": "False"}
    preload: list[str] = []
    if how is not None:
        (tmp_path / "hostile.py").write_text(HOSTILE)
        (tmp_path / "forger.py").write_text(FORGER)
        (tmp_path / "spool").mkdir(exist_ok=True)
        env.update(CT_HOW=how, CT_MARKER=str(tmp_path / "marker"),
                   CT_SECRET=str(tmp_path / "out" / SECRET), CT_FORGE="record",
                   CT_FAVOUR="random", CT_SPOOL=str(tmp_path / "spool"))
        preload = ["--preload", str(tmp_path / ("forger.py" if how == "forge"
                                                else "hostile.py"))]
    return start([DASK, "worker", address, "--nthreads", "1", "--resources", "match=1",
                  "--no-dashboard", "--death-timeout", "20", *tls, *preload],
                 tmp_path, start_new_session=True, env=env)


def certificates(tmp_path: Path) -> Path:
    folder = tmp_path / "tls"
    done = subprocess.run([*CLI, "cluster-certs", str(folder)], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    return folder


@pytest.mark.parametrize("tls", [False, True], ids=["tcp", "tls"])
@pytest.mark.parametrize("how", ["pickle", "forge", "garbage", "bytes"])
def test_a_hostile_worker_fails_only_its_matches(how: str, tls: bool,
                                                 reference: tuple[Path, str],
                                                 tmp_path: Path) -> None:
    """One honest worker and one hostile: no code of the hostile one's runs in the coordinator
    (no marker, which its pickle would write with the secret's text), nothing it sent counts,
    each of its matches is played again on the honest worker, and the run ends with status 0,
    the standings of a local run, the worker named on the terminal and in the fault book."""
    path, standings = reference
    out = tmp_path / "out"
    config = write_config(tmp_path, tmp_path / "flags")
    (tmp_path / "flags" / "blocked").write_text("0\n")
    if tls:
        folder = certificates(tmp_path)
        ca, sched, wcert = folder / "ca.pem", folder / "scheduler.pem", folder / "worker.pem"
        from distributed.security import Security
        security = Security(tls_ca_file=str(ca), tls_scheduler_cert=str(sched),
                            tls_scheduler_key=str(sched), tls_client_cert=str(sched),
                            tls_client_key=str(sched), require_encryption=True)
        wtls = ["--tls-ca-file", str(ca), "--tls-cert", str(wcert), "--tls-key", str(wcert)]
        cluster = LocalCluster(n_workers=0, processes=True, dashboard_address=None,
                               protocol="tls://", security=security)
        extra = ["--tls", str(folder)]
    else:
        security, wtls, extra = None, [], []
        cluster = LocalCluster(n_workers=0, processes=True, dashboard_address=None)
    with cluster:
        address = cluster.scheduler_address
        bad = worker(address, tmp_path, how, wtls)
        procs = [bad]
        try:
            with Client(address, security=security) as client:
                client.wait_for_workers(1, timeout=60)
                hostile = next(iter(client.scheduler_info()["workers"]))
                procs.append(worker(address, tmp_path, None, wtls))
                client.wait_for_workers(2, timeout=60)
            done = subprocess.run(
                [*CLI, "tournament", str(config), "-o", str(out), "--scheduler", address,
                 "--deal-secret", str(path.parent / "reference" / SECRET), *extra],
                capture_output=True, text=True, timeout=600, cwd=tmp_path)
        finally:
            for proc in procs:
                stop_group(proc)
    assert not (tmp_path / "marker").exists(), (tmp_path / "marker").read_text()
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr, done.stderr[:2000]
    said = done.stdout + done.stderr
    assert f"worker {hostile}: match r" in said, said[-3000:]
    assert (out / "standings.json").read_text() == standings
    assert sorted(journal_ids(out)) == sorted(set(journal_ids(out)))
    book = json.loads((out / FAULTS_FILE).read_text())["workers"]
    assert list(book) == [hostile], book
    assert book[hostile]["faults"]
    page = (out / "report" / "data.js").read_text()  # the report page names it too
    data = json.loads(page.split("=", 1)[1].strip().rstrip(";"))
    assert [w["worker"] for w in data["cluster_faults"]] == [hostile], data["cluster_faults"]


def test_a_client_process_that_dies_is_started_again(reference: tuple[Path, str],
                                                     cluster: LocalCluster,
                                                     tmp_path: Path) -> None:
    """The client process killed (SIGKILL, its whole group) before the run and again once the
    first match is counted: the coordinator starts it again each time, sends its tasks again,
    says so, and the run ends with the standings of a local run, every match once."""
    path, standings = reference
    out = tmp_path / "out"
    config = load_config(write_config(tmp_path, tmp_path / "flags"), output=out)
    (tmp_path / "flags" / "blocked").write_text("0\n")
    warnings: list[str] = []
    runner = ClusterRunner(cluster.scheduler_address, sandbox=config.sandbox,
                           warn=warnings.append)
    kills = [runner.client.proc.pid]
    os.killpg(kills[0], signal.SIGKILL)
    taken = runner._accept

    def accept_and_kill(job: MatchJob, played: WorkerReport) -> object:
        if len(kills) == 1:  # once, at the first result counted
            kills.append(runner.client.proc.pid)
            os.killpg(kills[1], signal.SIGKILL)
        return taken(job, played)

    runner._accept = accept_and_kill  # type: ignore[method-assign]
    try:
        outcome = run(config, runner=runner, deal_secret=read_deal_secret(
            path.parent / "reference" / SECRET))
    finally:
        runner.close()
    assert len(kills) == 2 and kills[0] != kills[1]
    assert outcome.finished and outcome.played == MATCHES
    assert (out / "standings.json").read_text() == standings
    assert sorted(journal_ids(out)) == sorted(set(journal_ids(out)))
    assert sum("the Dask client process ended" in w for w in warnings) == 2, warnings
