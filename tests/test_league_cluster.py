"""A league on a Dask cluster: versions admitted here, their matches played on the workers from
their folders as they are (a real ``LocalCluster`` of worker processes)."""

from __future__ import annotations

import json
import os
import subprocess
import threading
from pathlib import Path

import pytest

from conftest import PY, ROOT, need_extra

need_extra("distributed", extra="distributed")
from distributed import Client, LocalCluster  # noqa: E402

from referee.league.config import load_league  # noqa: E402
from referee.league.run import run_league  # noqa: E402
from referee.league.season import LEAGUE_CLUSTER  # noqa: E402
from referee.records.record import read_record  # noqa: E402
from referee.runners.cluster import ClusterRunner  # noqa: E402

pytestmark = [pytest.mark.process, pytest.mark.slow]


def submit(subs: Path, author: str, bot: str, trace: Path) -> None:
    """A submission that notes, each time it starts, its parent's pid and its folder, then
    plays as ``bot``."""
    folder = subs / author
    folder.mkdir(parents=True)
    (folder / "player.py").write_text((ROOT / "bots" / bot).read_text())
    (folder / "bot.py").write_text(
        "import os, runpy\n"
        f"with open({str(trace)!r}, 'a') as f:\n"
        "    f.write(f'{os.getppid()} {os.getcwd()}\\n')\n"
        "runpy.run_path('player.py', run_name='__main__')\n")


def two_authors(tmp_path: Path, extra: str) -> tuple[Path, Path]:
    """alice (random) and bob (greedy) submitted, each logging where it runs to the trace; a
    league of them with ``extra`` keys; the configuration's path and the trace's."""
    subs, trace = tmp_path / "subs", tmp_path / "trace.txt"
    for author, bot in (("alice", "random_bot.py"), ("bob", "greedy_bot.py")):
        submit(subs, author, bot, trace)
    path = tmp_path / "league.yaml"
    path.write_text(f"name: dl\nsubmissions: subs\ncommand: {PY} bot.py\nsandbox: none\n"
                    f"check: false\npoll_s: 0.2\nsettle_s: 0.3\noutput: out\n{extra}")
    return path, trace


def test_a_league_plays_on_the_workers_of_a_dask_cluster(tmp_path: Path) -> None:
    path, trace = two_authors(tmp_path, "target: 150\nmax_matches: 6\n")
    config = load_league(path)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      resources={"match": 1}, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        workers = set(client.run(os.getpid).values())
        runner = ClusterRunner(cluster.scheduler_address)
        league = run_league(config, stop=threading.Event(), runner=runner)
    out = tmp_path / "out"
    lines = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert len(lines) == 6 and league.done == 6
    # every match ran on a worker, its bots started there from the submission's folder as it
    # is; the pre-flight ran here, from the snapshot
    starts = [line.split(" ", 1) for line in trace.read_text().splitlines()]
    folders = {str((tmp_path / "subs" / a).resolve()) for a in ("alice", "bob")}
    played = [(int(pid), cwd) for pid, cwd in starts if cwd in folders]
    assert len(played) == 12  # two bots a match
    assert {pid for pid, _ in played} <= workers and os.getpid() not in workers
    assert all(cwd not in folders for pid, cwd in starts if int(pid) == os.getpid())
    for line in lines:  # the records claim no snapshot: what played is the folder
        record = read_record(out / line["record"])
        assert "snapshots" not in record
    data = json.loads((out / "report" / "league.json").read_text())
    assert data["cluster"] == LEAGUE_CLUSTER
    page = (out / "report" / "index.html").read_text()
    assert "On a Dask cluster: weaker than on one machine" in page
    assert sum(r["sets"] for r in data["rows"]) == 6  # three sets rated, two members each


def test_the_command_says_on_which_cluster_it_plays_and_what_is_weaker(tmp_path: Path) -> None:
    path, _ = two_authors(tmp_path, "target: 100\n")
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                      resources={"match": 1}, dashboard_address=None) as cluster:
        done = subprocess.run([PY, "-c", "from referee.cli import main; main()", "league",
                               str(path), "--scheduler", cluster.scheduler_address,
                               "--max-matches", "2"], capture_output=True, text=True,
                              timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"running on the Dask scheduler {cluster.scheduler_address}; sandbox: weaker " \
           f"than on one machine" in done.stdout
    assert "is not authenticated (plain tcp)" in done.stdout
    assert "reached max_matches: 2 matches" in done.stdout
    assert "  vs next: open" in done.stdout  # the table's verdicts, one set in: still open
    bad = subprocess.run([PY, "-c", "from referee.cli import main; main()", "league",
                          str(path), "--scheduler", "tcp://127.0.0.1:9", "--max-matches", "2"],
                         capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert bad.returncode == 1 and "cannot reach the Dask scheduler" in bad.stderr
    assert "Traceback" not in bad.stderr
