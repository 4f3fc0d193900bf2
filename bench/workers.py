"""Where worker processes spend a tournament: their start, each match's phases, the record's sync.

Run:  .venv/bin/python bench/workers.py [--concurrency 2]

Three parts, each printing its own lines (the load average on each: the machine may be shared):

- ``start``: seconds from a :class:`~referee.runners.local.ProcessRunner` made to all its
  workers ready (their first task done), spawned interpreters against forks of a fork server,
  for 2 and 6 workers;
- ``phases``: the tournament of ``bench/distributed.py`` (144 matches of instant C bots) through
  a runner whose workers time each match: when the first match started, the medians of a
  match's wall time, the worker's CPU and its bots' CPU, the record's writing, the waits between
  two matches and after the last;
- ``sync``: a 35 KiB record written through a temporary file and renamed, with and without
  ``fsync``, 100 times each.
"""

from __future__ import annotations

import argparse
import itertools
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
sys.path.insert(0, str(HERE.parent))

from bench.distributed import compile_bot, write_config  # noqa: E402
from referee.match.job import Done, MatchJob, result_line  # noqa: E402
from referee.records.record import write_record  # noqa: E402
from referee.runners import local  # noqa: E402
from referee.tournament.run import load_config, run  # noqa: E402


def load() -> str:
    return f"load average {os.getloadavg()[0]:.1f}"


def start() -> None:
    for method in ("spawn", "forkserver"):
        for n in (2, 6):
            runner = local.ProcessRunner(n, start_method=method)
            t = time.perf_counter()
            pool = runner._start()
            for future in [pool.submit(local._ready) for _ in range(n)]:
                future.result()
            print(f"start: {n} workers ready in {time.perf_counter() - t:.3f} s "
                  f"({method}; {load()})", flush=True)
            runner.close()


def _cpu(usage: resource.struct_rusage) -> float:
    return usage.ru_utime + usage.ru_stime


def timed(job: MatchJob) -> Done:
    """Plays ``job`` in a worker as ``_play_in_worker`` does, and adds its timings to the
    result line (``_t``)."""
    me0, kids0 = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(
        resource.RUSAGE_CHILDREN)
    t0 = time.time()
    record = job.play(local._worker_stop)
    t1 = time.time()
    line = result_line(record)
    if job.record_path is not None:
        write_record(record, job.record_path)
    t2 = time.time()
    me1, kids1 = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(
        resource.RUSAGE_CHILDREN)
    line["_t"] = [os.getpid(), t0, t1, t2, _cpu(me1) - _cpu(me0), _cpu(kids1) - _cpu(kids0)]
    return Done(line)


class Timed(local.ProcessRunner):
    """A process runner whose workers play :func:`timed`."""

    def submit(self, job: MatchJob) -> None:
        pool = self._start()
        with local._sigint_blocked():
            future = pool.submit(timed, job)
        self._track(job, future)


def phases(concurrency: int) -> None:
    import json

    with tempfile.TemporaryDirectory(prefix="ct-bench-") as tmp:
        folder = Path(tmp)
        config = load_config(write_config(folder, compile_bot(folder), rounds=6, target=1000),
                             output=folder / "out", concurrency=concurrency)
        before = load()
        t0 = time.time()
        run(config, runner=Timed(concurrency))
        end = time.time()
        lines = [json.loads(x) for x in (folder / "out" / "results.jsonl").read_text()
                 .splitlines()]
    by_worker: dict[int, list[list[float]]] = {}
    for line in lines:
        by_worker.setdefault(line["_t"][0], []).append(line["_t"][1:])
    ms = [1000 * statistics.median(x) for x in zip(*[(c - a, b - a, cpu, kids, c - b) for
                                                      a, b, c, cpu, kids in
                                                      (ln["_t"][1:] for ln in lines)],
                                                   strict=True)]
    print(f"phases: concurrency {concurrency}, {len(lines)} matches in {end - t0:.2f} s "
          f"({before} at the start); a match (median): {ms[0]:.1f} ms, of which playing "
          f"{ms[1]:.1f} and writing the record {ms[4]:.1f}; CPU {ms[2]:.1f} ms the worker, "
          f"{ms[3]:.1f} ms its bots", flush=True)
    for pid, matches in by_worker.items():
        matches.sort()
        gaps = [b[0] - a[2] for a, b in itertools.pairwise(matches)]
        print(f"phases: worker {pid}: {len(matches)} matches, the first started "
              f"{matches[0][0] - t0:.3f} s into the run; {sum(gaps):.3f} s between matches "
              f"(longest {max(gaps, default=0):.3f}), {end - matches[-1][2]:.3f} s after the "
              f"last", flush=True)


def sync() -> None:
    text = "x" * 35_000
    with tempfile.TemporaryDirectory(prefix="ct-bench-") as tmp:
        for fsync in (True, False):
            t = time.perf_counter()
            for i in range(100):
                path = Path(tmp) / f".{i}.tmp"
                with open(path, "w") as f:
                    f.write(text)
                    f.flush()
                    if fsync:
                        os.fsync(f.fileno())
                os.replace(path, Path(tmp) / f"{i}.json")
            each = 10 * (time.perf_counter() - t)
            print(f"sync: a 35 KiB record written and renamed {'with' if fsync else 'without'} "
                  f"fsync: {each:.2f} ms ({load()})", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concurrency", type=int, default=2, help="phases: worker processes")
    args = parser.parse_args()
    start()
    phases(1)
    phases(args.concurrency)
    sync()


if __name__ == "__main__":
    main()
