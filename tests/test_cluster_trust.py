"""A cluster trusted only where it proves itself: a worker started with a ``--preload`` module
that forges what it sends back, or that looks for the deal secret in what it is sent."""

from __future__ import annotations

import contextlib
import json
import pickle
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from plans import planned

from conftest import PY, ROOT, need_extra

need_extra("distributed", extra="distributed")
from distributed import Client, LocalCluster  # noqa: E402
from test_cluster import (  # noqa: E402
    CLI,
    DASK,
    MATCHES,
    errors,
    journal_ids,
    secret_of,
    start,
    stop_group,
    write_config,
)

from referee.records.record import read_record  # noqa: E402
from referee.runners.cluster import ClusterRunner  # noqa: E402
from referee.tournament.run import SECRET, load_config, run  # noqa: E402

pytestmark = pytest.mark.process  # and slow, but for the certificates: the deep lane

FORGER = """\
'''A dask worker preload (dask worker ... --preload forger.py): the task function the
coordinator names, referee.runners.worker.play_on_worker, replaced on this worker by one that
keeps every job it is sent (pickled, in $CT_SPOOL) and, as $CT_FORGE says, forges what it sends
back for the seat of entrant $CT_FAVOUR: a result line in which it won ("line"), or a whole
record with its scores, totals and ranks rewritten to match ("record"), or a record of a match
played with other deals ("deals"); "none" forges nothing.'''
import dataclasses
import json
import os
import pickle
from pathlib import Path

import referee.runners.worker as worker
from referee.game.rules import Deal
from referee.match.job import MatchKeys, result_line
from referee.records.record import read_json

honest = getattr(worker, "honest", worker.play_on_worker)  # dask may run a preload twice
worker.honest = honest
how, favour, spool = os.environ["CT_FORGE"], os.environ["CT_FAVOUR"], Path(os.environ["CT_SPOOL"])


def won(line, seat):
    '''line (a result line or a record) with ``seat`` winning: its totals and ranks swapped.'''
    top = max(range(len(line["totals"])), key=lambda i: line["totals"][i])
    for key in ("totals", "ranks"):
        line[key][seat], line[key][top] = line[key][top], line[key][seat]
    line["totals"][seat] += 10  # a forgery also where it won already
    return top


def forged(job):
    (spool / f"{job.spec.id}.{os.getpid()}.pkl").write_bytes(pickle.dumps(job))
    if how == "deals":  # another secret's deals: the match played on them
        other = [Deal.from_key(job.spec.players, b"x" * 32, f"{k}") for k in range(1, 40)]
        job = dataclasses.replace(job, keys=MatchKeys(tuple(other), job.keys.bot_id,
                                                      job.keys.fallback_key))
    report = honest(job)
    names = [e.name for e in job.entrants]
    if how == "none" or favour not in names:
        return report
    seat = names.index(favour)
    if how == "line":
        line = json.loads(json.dumps(report.line))
        won(line, seat)
        return dataclasses.replace(report, line=line)
    record = read_json(report.written)  # compressed: games/<id>.json.gz
    if how == "record":
        top = won(record, seat)
        for hand in record["hands"]:
            s = hand["scores"]
            s[seat], s[top] = s[top], s[seat]
        record["hands"][0]["scores"][seat] += 10  # the scores add up to the totals
    # sent back rather than written: the coordinator reads either
    return dataclasses.replace(report, record=record, written=None,
                               line=result_line(record) if how == "record" else None)


worker.play_on_worker = forged
"""


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """The config (4 entrants, 3 a table) and the standings.json of a run in this process."""
    base = tmp_path_factory.mktemp("trust")
    path = write_config(base, base / "flags")
    (base / "flags" / "blocked").write_text("0\n")  # the blocker never blocks
    outcome = run(load_config(path, output=base / "reference", concurrency=1))
    assert outcome.finished and outcome.played == MATCHES
    yield path, (base / "reference" / "standings.json").read_text()


def forging_worker(address: str, tmp_path: Path, how: str) -> subprocess.Popen[str]:
    """A real ``dask worker`` of one match started with the :data:`FORGER` preload."""
    (tmp_path / "forger.py").write_text(FORGER)
    spool = tmp_path / "spool"
    spool.mkdir(exist_ok=True)
    env = {**__import__("os").environ, "CT_FORGE": how, "CT_FAVOUR": "random",
           "CT_SPOOL": str(spool), "DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED": "False"}
    return start([DASK, "worker", address, "--nthreads", "1", "--resources", "match=1",
                  "--no-dashboard", "--death-timeout", "20",
                  "--preload", str(tmp_path / "forger.py")],
                 tmp_path, start_new_session=True, env=env)


@pytest.mark.slow
@pytest.mark.parametrize("how", ["line", "record", "deals"])
def test_a_worker_that_forges_results_is_refused_and_the_standings_stay_honest(
    how: str, reference: tuple[Path, str], tmp_path: Path,
) -> None:
    """A worker whose preload makes the weakest entrant (``random``) win every match it plays:
    by the result line alone, by a whole record rewritten to agree with it, or by a match played
    on deals of its own. The coordinator replays each record against the rules with the deals
    it derives itself and compares the claimed result: the first forged one stops the
    tournament with one ``error:`` line naming the match and the worker, nothing is counted for
    it, and the tournament resumed without that worker ends with the standings of a local
    run."""
    path, standings = reference
    out = tmp_path / "out"
    config = write_config(tmp_path, tmp_path / "flags")
    (tmp_path / "flags" / "blocked").write_text("0\n")
    with LocalCluster(n_workers=0, processes=True, dashboard_address=None) as bare:
        worker = forging_worker(bare.scheduler_address, tmp_path, how)
        try:
            with Client(bare.scheduler_address) as client:
                client.wait_for_workers(1, timeout=60)
            done = subprocess.run(
                [*CLI, "tournament", str(config), "-o", str(out), "--scheduler",
                 bare.scheduler_address, "--deal-secret", str(path.parent / "reference" / SECRET)],
                capture_output=True, text=True, timeout=300, cwd=tmp_path)
        finally:
            stop_group(worker)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr, done.stderr[:1500]
    first = errors(done.stderr)[0]
    assert first.startswith("error: match r1-g"), done.stderr
    match = first.split()[2].rstrip(":")
    assert "refused the result worker tcp://127.0.0.1:" in first, first
    why = {"line": "the result it claims (totals ", "record": "it breaks the rules: ",
           "deals": "hand 1 is not the deal of hand 1 of this match"}[how]
    assert f"sent back, not counted: {why}" in first, first
    saved = journal_ids(out) if (out / "results.jsonl").exists() else []
    assert match not in saved
    for i in saved:  # what was counted is honest: no match with random in it
        assert "random" not in read_record(out / "games" / f"{i}.json.gz")["players"]
    if how != "record":
        return
    again = subprocess.run([*CLI, "tournament", str(config), "-o", str(out)],
                           capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert (out / "standings.json").read_text() == standings


@pytest.mark.slow
def test_nothing_sent_to_a_worker_holds_the_deal_secret(reference: tuple[Path, str],
                                                        tmp_path: Path) -> None:
    """Every job a worker is sent, pickled as it arrived (a preload keeps them), holds neither
    the deal secret's bytes nor its hex (the text of ``.deal-secret``), and its spec cannot
    deal: it holds the match's own deals, bot id and fallback key. The tournament, played
    through that worker, ends with the standings of a local run."""
    path, standings = reference
    secret = secret_of(path)
    out = tmp_path / "out"
    config = load_config(write_config(tmp_path, tmp_path / "flags"), output=out)
    (tmp_path / "flags" / "blocked").write_text("0\n")
    with LocalCluster(n_workers=0, processes=True, dashboard_address=None) as bare:
        worker = forging_worker(bare.scheduler_address, tmp_path, "none")
        try:
            with Client(bare.scheduler_address) as client:
                client.wait_for_workers(1, timeout=60)
            runner = ClusterRunner(bare.scheduler_address, sandbox=config.sandbox)
            outcome = run(config, runner=runner, deal_secret=secret)
            runner.close()
        finally:
            stop_group(worker)
    assert outcome.finished and outcome.played == MATCHES
    assert (out / "standings.json").read_text() == standings
    sent = sorted((tmp_path / "spool").iterdir())
    assert len(sent) >= MATCHES
    text = (out / SECRET).read_text().strip()
    assert bytes.fromhex(text) == secret
    for file in sent:
        data = file.read_bytes()
        for form in (secret, secret.hex().encode(), secret.hex().upper().encode(),
                     text.encode()):
            assert form not in data, file.name
        job = pickle.loads(data)
        assert job.spec.secret == b"" and job.keys is not None
        with pytest.raises(ValueError, match="sealed"):
            job.spec.deal(1)
    # what the workers were given played the same matches as the coordinator derives
    for line in (out / "results.jsonl").read_text().splitlines():
        assert json.loads(line)["id"] in {s.id for s in planned(config, secret=secret)}


def certs(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, "cluster-certs", str(folder), *args], capture_output=True,
                          text=True, timeout=120)


def test_cluster_certs_writes_an_authority_and_certificates_only_once(tmp_path: Path) -> None:
    made = certs(tmp_path / "tls")
    assert made.returncode == 0, made.stderr
    names = ["ca-key.pem", "ca.pem", "scheduler.pem", "worker.pem"]
    assert sorted(p.name for p in (tmp_path / "tls").iterdir()) == names
    modes = {p.name: p.stat().st_mode & 0o777 for p in (tmp_path / "tls").iterdir()}
    assert modes == {"ca.pem": 0o644, "ca-key.pem": 0o600, "scheduler.pem": 0o600,
                     "worker.pem": 0o600}
    assert (tmp_path / "tls").stat().st_mode & 0o777 == 0o700
    before = (tmp_path / "tls" / "worker.pem").read_text()
    again = certs(tmp_path / "tls")
    assert again.returncode == 0 and "nothing written" in again.stdout
    assert (tmp_path / "tls" / "worker.pem").read_text() == before
    named = certs(tmp_path / "tls", "--worker", "node1")
    assert named.returncode == 0 and (tmp_path / "tls" / "worker-node1.pem").is_file()
    twice = certs(tmp_path / "tls", "--worker", "node1")
    assert twice.returncode == 1 and twice.stderr.startswith("error: ") \
        and "exists already" in twice.stderr and len(twice.stderr.splitlines()) == 1
    (tmp_path / "tls" / "ca-key.pem").unlink()
    broken = certs(tmp_path / "tls", "--worker", "node2")
    assert broken.returncode == 1 and len(broken.stderr.splitlines()) == 1, broken.stderr
    assert "ca-key.pem is missing" in broken.stderr


TWO = """\
name: two
entrants:
  - {{name: random, command: [{py}, {bots}/random_bot.py, --seed, '3']}}
  - {{name: greedy, command: [{py}, {bots}/greedy_bot.py]}}
players: 2
target: 150
sandbox: none
"""


def tls_worker(address: str, tmp_path: Path, cert: Path | None, ca: Path) -> subprocess.Popen[str]:
    tls = [] if cert is None else ["--tls-ca-file", str(ca), "--tls-cert", str(cert),
                                   "--tls-key", str(cert)]
    return start([DASK, "worker", address, "--nthreads", "1", "--resources", "match=1",
                  "--no-dashboard", "--death-timeout", "15", *tls], tmp_path,
                 start_new_session=True)


@pytest.mark.slow
def test_a_tls_cluster_admits_only_workers_with_its_certificate(tmp_path: Path) -> None:
    """A scheduler started with the certificates of ``ct-referee cluster-certs``: a worker
    without a certificate, and one with a certificate of another authority, never join (the
    TLS handshake refuses them); a worker with the folder's joins, and the coordinator with
    ``--tls`` plays the tournament on it. A plain client, and ``--tls`` on a tcp:// address,
    are one-line errors."""
    from distributed.security import Security

    def security(folder: Path) -> Security:
        """The coordinator's certificate, checked by the folder's authority, TLS only."""
        ca, cert = str(folder / "ca.pem"), str(folder / "scheduler.pem")
        return Security(tls_ca_file=ca, tls_client_cert=cert,  # type: ignore[no-untyped-call]
                        tls_client_key=cert, require_encryption=True)

    tls, other = tmp_path / "tls", tmp_path / "other"
    assert certs(tls).returncode == 0 and certs(other).returncode == 0
    ca = tls / "ca.pem"
    sched_file = tmp_path / "scheduler.json"
    scheduler = start([DASK, "scheduler", "--protocol", "tls", "--port", "0",
                       "--scheduler-file", str(sched_file), "--no-dashboard",
                       "--tls-ca-file", str(ca), "--tls-cert", str(tls / "scheduler.pem"),
                       "--tls-key", str(tls / "scheduler.pem")], tmp_path,
                      start_new_session=True)
    procs = [scheduler]
    try:
        deadline = time.monotonic() + 60
        while not sched_file.exists():
            assert time.monotonic() < deadline and scheduler.poll() is None, "no scheduler"
            time.sleep(0.1)
        address = json.loads(sched_file.read_text())["address"]
        assert address.startswith("tls://127.0.0.1:") or address.startswith("tls://")
        rogues = [tls_worker(address, tmp_path, None, ca),
                  tls_worker(address, tmp_path, other / "worker.pem", other / "ca.pem")]
        procs += rogues
        with Client(address, security=security(tls), timeout=30) as client:
            deadline = time.monotonic() + 12
            while time.monotonic() < deadline:  # the rogues keep trying, never in
                assert client.scheduler_info()["workers"] == {}
                time.sleep(0.5)
            honest = tls_worker(address, tmp_path, tls / "worker.pem", ca)
            procs.append(honest)
            client.wait_for_workers(1, timeout=60)
            assert len(client.scheduler_info()["workers"]) == 1
            for rogue in rogues:  # they gave up (or keep failing): never one of the workers
                with contextlib.suppress(subprocess.TimeoutExpired):
                    rogue.wait(timeout=20)
            assert len(client.scheduler_info()["workers"]) == 1
        config = tmp_path / "two.yaml"
        config.write_text(TWO.format(py=PY, bots=ROOT / "bots"))
        done = subprocess.run([*CLI, "tournament", str(config), "-o", str(tmp_path / "out"),
                               "--scheduler-file", str(sched_file), "--tls", str(tls)],
                              capture_output=True, text=True, timeout=300, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert "warning" not in done.stderr
        assert len(journal_ids(tmp_path / "out")) == 2
        plain = subprocess.run([*CLI, "tournament", str(config), "-o", str(tmp_path / "b"),
                                "--scheduler", address], capture_output=True, text=True,
                               timeout=120, cwd=tmp_path)
        assert plain.returncode == 1 and plain.stderr == (
            f"error: the scheduler {address!r} speaks TLS: give the folder of its certificates "
            f"with --tls DIR (ct-referee cluster-certs DIR)\n")
        tcp = address.replace("tls://", "tcp://")
        wrong = subprocess.run([*CLI, "tournament", str(config), "-o", str(tmp_path / "c"),
                                "--scheduler", tcp, "--tls", str(tls)], capture_output=True,
                               text=True, timeout=120, cwd=tmp_path)
        assert wrong.returncode == 1 and wrong.stderr.startswith(
            f"error: --tls: the scheduler's address {tcp!r} is not tls://"), wrong.stderr
        assert len(wrong.stderr.splitlines()) == 1
    finally:
        for proc in reversed(procs):
            stop_group(proc)
