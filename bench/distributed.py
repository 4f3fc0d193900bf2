"""Scaling: matches/s of one tournament of instant C bots, locally and on a Dask cluster.

Run:  .venv/bin/python bench/distributed.py [--rounds 6] [--target 1000] [--local]
      .venv/bin/python bench/distributed.py --coordinator 500   # the coordinator's limits
      .venv/bin/python bench/distributed.py --against 1fda365 --repeat 5  # a cluster's rate

Every entrant is ``bots/starter.c`` compiled with ``cc -O2`` into a temporary folder (a legal
answer at once, no interpreter start-up), so the figures measure the referee: fresh bot
processes per match, the protocol, the rules, records and the journal (fsync included). The
same tournament (4 entrants, 3 seats, every seating, ``--rounds`` rounds: 144 matches by
default) is played

- locally at concurrency 1 (one referee process: :class:`~referee.runners.local.ThreadRunner`),
- with two threads (the old concurrency 2, for comparison: one interpreter, the GIL),
- at concurrency 2 (two worker processes: :class:`~referee.runners.local.ProcessRunner`,
  started with the tournament, forked from a fork server; and, for comparison, as before:
  each spawned as a new interpreter at the first match),
- at concurrency 1 with ``affinity`` and 2 without (each match's referee and bots on one CPU
  or not: by default, ``auto``, concurrency 2 on 2 cores has it and 1 has not),
- on a two-worker ``LocalCluster`` (processes, one match each: :class:`ClusterRunner`;
  the cluster's start-up is not timed, as a standing cluster's would not be),

(workers without Dask's statistical profiler, as docs/cluster.md advises; ``--local``: no
cluster), and Dask's own
cost per match is measured twice: a one-worker cluster against the local run
at concurrency 1, and bare tasks carrying a record of the tournament's size. Every run must
end with the same standings. A local runner is made within the time (its worker processes
start within it). Each line gives the load average before its run (the machine may be
shared: compare the ratios of one run). The last line is
``scaling (each with its default affinity): <a> matches/s at concurrency 1, <b> at
concurrency 2 (<b/a> x); cluster of 2: <c> (<c/a> x); load average <l> at the end``; the line
before it compares the four settings of affinity.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import pickle
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
# This file's folder comes first on the path, and its name is the ``distributed`` package's.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
sys.path.insert(0, str(HERE.parent))

from bench.cpu import tree_seconds  # noqa: E402
from referee.runners.cluster import ClusterRunner  # noqa: E402
from referee.runners.local import (  # noqa: E402
    ProcessRunner,
    Runner,
    ThreadRunner,
    auto_affinity,
)
from referee.tournament.run import (  # noqa: E402
    SECRET,
    Config,
    load_config,
    read_deal_secret,
    run,
)

ROOT = HERE.parent


def compile_bot(folder: Path) -> Path:
    """``bots/starter.c`` built with the C compiler into ``folder``."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        sys.exit("error: no C compiler (cc or gcc) to build bots/starter.c")
    binary = folder / "starter.bin"
    subprocess.run([cc, "-O2", "-o", str(binary), str(ROOT / "bots" / "starter.c")], check=True)
    return binary


def cpu_seconds() -> float:
    """User and system CPU seconds of this process and its reaped descendants (worker
    processes, once closed, and every bot): a cluster's workers are not counted."""
    return sum(tree_seconds())


def write_config(folder: Path, bot: Path, *, rounds: int, target: int) -> Path:
    """4 instant C entrants, 3 seats, every seating: 24 matches a round."""
    lines = ["name: scaling", "entrants:"]
    lines += [f"  - {{name: c{i}, command: [{bot}]}}" for i in range(4)]
    lines += ["players: 3", f"target: {target}", f"rounds: {rounds}", "sandbox: none"]
    path = folder / "scaling.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


class SpawnedAtFirstMatch(ProcessRunner):
    """The worker processes as they were started before: each a new interpreter (``spawn``)
    that imports the referee and the program's main module, on the first match (not at the
    tournament's start)."""

    def __init__(self, concurrency: int) -> None:
        super().__init__(concurrency, start_method="spawn")

    def start(self) -> None:
        pass


class Bench:
    """Plays the tournament into fresh output folders, all dealt with one secret."""

    def __init__(self, folder: Path, config: Path) -> None:
        self.folder, self.config = folder, config
        self.secret: bytes | None = None
        self.standings: str | None = None
        self.runs = 0

    def rate(self, label: str, make: Callable[[], Runner], concurrency: int) -> float:
        """Matches/s of the whole tournament through the runner ``make`` makes (a local one
        made, and its worker processes started, within the time; a cluster's client
        connected before it, as a standing cluster's would be); checks its standings."""
        self.runs += 1
        out = self.folder / f"out{self.runs}"
        config: Config = load_config(self.config, output=out, concurrency=concurrency)
        load = os.getloadavg()[0]
        runner = make() if "cluster" in label else None
        cpu0 = cpu_seconds()
        start = time.perf_counter()
        runner = runner or make()
        outcome = run(config, runner=runner, deal_secret=self.secret)
        elapsed = time.perf_counter() - start
        cpu = cpu_seconds() - cpu0
        assert outcome.finished, label
        standings = (out / "standings.json").read_text()
        if self.secret is None:
            self.secret, self.standings = read_deal_secret(out / SECRET), standings
        assert standings == self.standings, f"{label}: other standings than the first run"
        rate = outcome.total / elapsed
        busy = "" if getattr(runner, "remote", False) else \
            f"; {1000 * cpu / outcome.total:.0f} ms CPU a match, {cpu / elapsed:.2f} cores busy"
        print(f"{label}: {outcome.total} matches in {elapsed:.2f} s, {rate:.2f} matches/s{busy} "
              f"(load average {load:.1f})", flush=True)
        return rate

    def record_bytes(self) -> int:
        """The size of one pickled record of the tournament (what a worker sends back)."""
        games = sorted((self.folder / "out1" / "games").iterdir())
        from referee.records.record import read_record
        return len(pickle.dumps(read_record(games[len(games) // 2])))


def _echo(payload: bytes) -> bytes:
    return payload


def bare_tasks(address: str, payload: int, n: int = 200) -> tuple[float, float]:
    """Milliseconds per task: one at a time (scheduling and transfer latency), and ``n`` at
    once (throughput cost), each task sending back ``payload`` bytes."""
    from distributed import Client

    data = os.urandom(payload)
    with Client(address, set_as_default=False) as client:
        client.submit(_echo, data, pure=False, resources={"match": 1}).result()  # warm up
        times = []
        for _ in range(50):
            t = time.perf_counter()
            client.submit(_echo, data, pure=False, resources={"match": 1}).result()
            times.append(time.perf_counter() - t)
        t = time.perf_counter()
        futures = [client.submit(_echo, data, pure=False, resources={"match": 1})
                   for _ in range(n)]
        client.gather(futures)
        batch = time.perf_counter() - t
    return 1000 * statistics.median(times), 1000 * batch / n


def per_second(action: Callable[[int], object], *, seconds: float = 2.0) -> float:
    """How many times a second ``action(i)`` runs, over about ``seconds``."""
    n, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        action(n)
        n += 1
    return n / elapsed


def coordinator(entrants: int) -> None:
    """What the coordinator alone can do per second: write records (atomically, synced),
    append journal lines (synced), and rate matches in a table of ``entrants``."""
    from referee.game.rules import Deal
    from referee.match.play import Entrant, play_match
    from referee.records.record import write_record
    from referee.tournament.ratings import MatchResult, Standings
    from referee.tournament.run import Journal

    with tempfile.TemporaryDirectory(prefix="ct-bench-") as tmp:
        folder = Path(tmp)
        bot = compile_bot(folder)
        seats = [Entrant(f"c{i}", (str(bot),)) for i in range(3)]
        record = play_match("m", seats, lambda k: Deal.from_key(3, bytes(16), f"d:{k}"),
                            target=1000)
        turns = sum(len(h["turns"]) for h in record["hands"])
        print(f"coordinator: one match (3 seats, target 1000) holds {len(record['hands'])} "
              f"hands, {turns} turns; its record is {len(json.dumps(record)) / 1024:.0f} KiB "
              f"of JSON; output folder on {folder} (fsync'd)")
        (folder / "games").mkdir()
        records = per_second(lambda i: write_record(record, folder / "games" / f"{i}.json"))
        journal = Journal(folder / "results.jsonl")
        line = {"id": "r1-g001-s01", "players": record["players"], "totals": record["totals"],
                "ranks": record["ranks"], "faults": [], "hands": len(record["hands"]),
                "record": "games/r1-g001-s01.json"}
        lines = per_second(lambda i: journal.append(line))
        batched = per_second(lambda i: journal.append(line, sync=i % 64 == 63))
        journal.close()
        names = [f"e{i}" for i in range(entrants)]
        table = Standings(names)
        result = MatchResult.from_json(line)

        def rate(i: int) -> None:
            table.add(dataclasses.replace(result, players=tuple(
                names[(i * 7 + k * 131) % entrants] for k in range(3))))

        ratings = per_second(rate)
        tables = per_second(lambda i: table.standings(), seconds=1.0)
    print(f"coordinator: {records:.0f} records/s written, {lines:.0f} journal lines/s "
          f"appended ({batched:.0f}/s synced 64 at a time), {ratings:.0f} matches/s rated among "
          f"{entrants} entrants, "
          f"{tables:.1f} full tables/s of {entrants} rows")


CHILD = """\
import hashlib, os, sys, time, warnings
tree, config, secret = sys.argv[1], sys.argv[2], bytes.fromhex(sys.argv[3])
sys.path.insert(0, tree)
warnings.filterwarnings("ignore")
import dask
from distributed import LocalCluster
from referee.runners.cluster import ClusterRunner
from referee.tournament.run import load_config, run
from pathlib import Path
out = Path(config).parent / f"out-{os.getpid()}"
with dask.config.set({"distributed.worker.profile.enabled": False}), \\
        LocalCluster(n_workers=2, threads_per_worker=1, processes=True, resources={"match": 1},
                     dashboard_address=None, silence_logs=50) as two:
    runner = ClusterRunner(two.scheduler_address)
    start = time.perf_counter()
    outcome = run(load_config(Path(config), output=out), runner=runner, deal_secret=secret)
    elapsed = time.perf_counter() - start
    runner.close()
assert outcome.finished
digest = hashlib.sha256((out / "standings.json").read_bytes()).hexdigest()[:12]
print(f"{outcome.total} {elapsed:.3f} {digest}")
"""


def against(commit: str, *, rounds: int, target: int, repeat: int) -> None:
    """Matches/s of a cluster of 2 workers with this tree's code and with ``commit``'s
    (``git archive``), alternating, each in a fresh process with its own ``LocalCluster``
    (its start-up not timed); every run on one deal secret, so the standings must agree."""
    print(f"cluster of 2 workers: this tree against {commit}, {24 * rounds} matches a run, "
          f"{repeat} runs each, alternating; load average {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory(prefix="ct-bench-") as tmp:
        folder = Path(tmp)
        old = folder / "old"
        old.mkdir()
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", commit],
                                 capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(old)], input=archive, check=True)
        config = write_config(folder, compile_bot(folder), rounds=rounds, target=target)
        secret = os.urandom(32).hex()
        rates: dict[str, list[float]] = {commit: [], "this tree": []}
        digests = set()
        for _ in range(repeat):
            for label, tree in ((commit, old), ("this tree", ROOT)):
                env = {**os.environ, "PYTHONPATH": str(tree)}
                done = subprocess.run([sys.executable, "-c", CHILD, str(tree), str(config),
                                       secret], capture_output=True, text=True, env=env,
                                      cwd=tmp, check=False)
                if done.returncode != 0:
                    sys.exit(f"error: the run of {label} failed: {done.stderr[-2000:]}")
                total, elapsed, digest = done.stdout.split()[-3:]
                rates[label].append(int(total) / float(elapsed))
                digests.add(digest)
                print(f"  {label}: {int(total)} matches in {float(elapsed):.2f} s, "
                      f"{rates[label][-1]:.2f} matches/s (load average "
                      f"{os.getloadavg()[0]:.1f})", flush=True)
        assert len(digests) == 1, "the runs' standings differ"
        a, b = statistics.median(rates[commit]), statistics.median(rates["this tree"])
        pairs = [y / x for x, y in zip(rates[commit], rates["this tree"], strict=True)]
        print(f"cluster of 2: median {b:.2f} matches/s here, {a:.2f} at {commit} "
              f"({b / a:.3f} x); each run against the one before it: median "
              f"{statistics.median(pairs):.3f} x ({min(pairs):.2f}-{max(pairs):.2f}); every "
              f"run the same standings")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", metavar="COMMIT",
                        help="instead: a cluster of 2 workers with this tree's code against "
                             "COMMIT's, alternating (--repeat runs each)")
    parser.add_argument("--rounds", type=int, default=6, help="24 matches a round")
    parser.add_argument("--target", type=int, default=1000, help="match target")
    parser.add_argument("--repeat", type=int, default=2,
                        help="play every setting this many times, interleaved; keep the best")
    parser.add_argument("--local", action="store_true",
                        help="this machine's runners only (no Dask cluster)")
    parser.add_argument("--coordinator", type=int, metavar="ENTRANTS",
                        help="instead: the coordinator's own limits, rating among ENTRANTS")
    args = parser.parse_args()
    if args.against:
        against(args.against, rounds=args.rounds, target=args.target, repeat=args.repeat)
        return
    if args.coordinator:
        coordinator(args.coordinator)
        return
    warnings.filterwarnings("ignore", message="Port .* is already in use")

    print(f"scaling: {24 * args.rounds} matches of instant C bots (bots/starter.c), target "
          f"{args.target}; {os.cpu_count()} cores, load average "
          f"{os.getloadavg()[0]:.2f} at the start; best of {args.repeat}, interleaved")
    with tempfile.TemporaryDirectory(prefix="ct-bench-") as tmp, \
            contextlib.ExitStack() as stack:
        settings: dict[str, tuple[Callable[[], Runner], int]] = {
            "concurrency 1 without affinity (this process)": (
                lambda: ThreadRunner(1, affinity=False), 1),
            "concurrency 1 with affinity": (lambda: ThreadRunner(1, affinity=True), 1),
            "concurrency 2 without affinity (worker processes)": (
                lambda: ProcessRunner(2, affinity=False), 2),
            "concurrency 2 with affinity": (lambda: ProcessRunner(2, affinity=True), 2),
            "concurrency 2 in threads (before)": (lambda: ThreadRunner(2), 2),
            "concurrency 2 (worker processes spawned at the first match: before)":
                (lambda: SpawnedAtFirstMatch(2), 2),
        }
        if not args.local:
            one, two = stack.enter_context(clusters())
            settings["cluster of 1 worker"] = (lambda: ClusterRunner(one), 1)
            settings["cluster of 2 workers"] = (lambda: ClusterRunner(two), 2)
        folder = Path(tmp)
        bench = Bench(folder, write_config(folder, compile_bot(folder), rounds=args.rounds,
                                           target=args.target))
        best: dict[str, float] = {}
        for _ in range(args.repeat):
            for label, (make, concurrency) in settings.items():
                best[label] = max(best.get(label, 0.0), bench.rate(label, make, concurrency))
        a0, a1, b0, b1, t, before = list(best.values())[:6]
        # as a user meets them: affinity auto (sandbox: none, so only the CPUs decide)
        a = a1 if auto_affinity(1, fair=True) else a0
        b = b1 if auto_affinity(2, fair=True) else b0
        if not args.local:
            c1, c = best["cluster of 1 worker"], best["cluster of 2 workers"]
            size = bench.record_bytes()
            latency, batch = bare_tasks(two, size)
    if not args.local:
        print(f"dask cost per match: {1000 * (1 / c1 - 1 / a0):+.1f} ms against this process "
              f"(cluster of 1: {c1:.2f} matches/s); bare tasks returning a "
              f"{size / 1024:.0f} KiB record: {latency:.1f} ms each one at a time, "
              f"{batch:.2f} ms each 200 at once")
    print(f"threads at concurrency 2: {t:.2f} matches/s ({t / a0:.2f} x)")
    print(f"worker processes spawned at the first match (before): {before:.2f} matches/s "
          f"({before / a0:.2f} x)")
    print(f"affinity (each match's referee and bots on one CPU): concurrency 1 {a0:.2f} "
          f"matches/s without, {a1:.2f} with ({a1 / a0:.2f} x); concurrency 2 {b0:.2f} "
          f"without, {b1:.2f} with ({b1 / b0:.2f} x); 2 against 1 both without "
          f"{b0 / a0:.2f} x, both with {b1 / a1:.2f} x")
    cluster = "" if args.local else f"; cluster of 2: {c:.2f} ({c / a:.2f} x)"
    print(f"scaling (each with its default affinity): {a:.2f} matches/s at concurrency 1, "
          f"{b:.2f} at concurrency 2 "
          f"({b / a:.2f} x){cluster}; load average {os.getloadavg()[0]:.2f} at the end")


@contextlib.contextmanager
def clusters() -> Iterator[tuple[str, str]]:
    """Two local Dask clusters (1 and 2 worker processes of one match each): their
    schedulers' addresses."""
    import dask
    from distributed import LocalCluster

    cluster = {"threads_per_worker": 1, "processes": True, "resources": {"match": 1},
               "dashboard_address": None, "silence_logs": 50}
    with dask.config.set({"distributed.worker.profile.enabled": False}), \
            LocalCluster(n_workers=1, **cluster) as one, \
            LocalCluster(n_workers=2, **cluster) as two:
        yield one.scheduler_address, two.scheduler_address


if __name__ == "__main__":
    main()
