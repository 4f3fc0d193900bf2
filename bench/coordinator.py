"""The coordinator's ceiling: how many matches a second the process that runs a tournament can
take when every match is handed back at once (real records, no bots), and how soon a
10,000-entrant ladder starts its first match.

Run:  .venv/bin/python bench/coordinator.py [--entrants 500] [--matches 1200]
      .venv/bin/python bench/coordinator.py --compare ../wt-main --ladder 10000 --rounds 2

One real match of ``bots/starter.c`` (3 seats, target 1000) is played once; its record is the
template of every match after it. :class:`InstantRunner` is a
:class:`~referee.runners.local.Runner` that finishes each submitted match at once with that
record (its id and players set): it does, in this process, what a worker does where the match
ran (:meth:`referee.match.job.MatchJob.finish`: the record written when the output folder is
shared, a small result handed back), and its own CPU and wall time are taken off the figures,
so they measure the coordinator only: planning, dispatch, the journal (synced), the ratings, the
standings and (``with the report``) the pages hook. The ladder of ``--entrants`` plays
``--matches`` matches; the 10,000-entrant ladder (the defaults: sandbox on, so every folder is
sealed, and the pre-flight on) is planned in a child process that stops at its first match and
reports its peak memory. ``--compare CHECKOUT`` times only that ladder to its first match, with
the code of another checkout (a worktree of main: before) and this one's (after), alternating
in one run. The last line is
``coordinator: <N> matches/s (<M> ms CPU a match), 10,000-entrant ladder planned and first
match in <S> s``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
sys.path.insert(0, str(HERE.parent))

from referee.game.rules import Deal  # noqa: E402
from referee.match.job import MatchJob  # noqa: E402
from referee.match.play import Entrant, play_match  # noqa: E402
from referee.records.record import RecordDict  # noqa: E402
from referee.runners.local import Finished, Runner, RunnerEvent  # noqa: E402
from referee.tournament.run import Reporter, load_config, run  # noqa: E402


def _distributed_bench() -> Any:
    """bench/distributed.py as a module (its name is the ``distributed`` package's)."""
    spec = importlib.util.spec_from_file_location("bench_distributed", HERE / "distributed.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class InstantRunner(Runner):
    """Finishes every submitted match at once with the template record; its own CPU and wall
    time (what a worker would spend) are counted apart. ``first`` is set at the first submit
    (and ``stop`` with it, when given)."""

    remote = False

    def __init__(self, record: RecordDict, slots: int = 64,
                 stop: threading.Event | None = None) -> None:
        self.record, self._slots, self.stop = record, slots, stop
        self.events: list[RunnerEvent] = []
        self.cpu = self.wall = 0.0
        self.first: float | None = None

    def slots(self) -> int:
        return self._slots

    def submit(self, job: MatchJob) -> None:
        if self.first is None:
            self.first = time.perf_counter()
            if self.stop is not None:
                self.stop.set()
        c0, w0 = time.thread_time(), time.perf_counter()
        record: RecordDict = {**self.record, "id": job.spec.id,
                              "players": [e.name for e in job.entrants]}
        self.events.append(Finished(job, job.finish(record)))
        self.cpu += time.thread_time() - c0
        self.wall += time.perf_counter() - w0

    def wait(self, timeout: float) -> list[RunnerEvent]:
        events, self.events = self.events, []
        return events

    def cancel(self) -> None:
        pass  # every submitted match has finished already

    def close(self) -> None:
        pass


def write_ladder(folder: Path, bot: Path, entrants: int, *, matches: int | None,
                 sandbox: str, fmt: str = "ladder", preflight: bool = False) -> Path:
    """A ladder (or another format) of ``entrants`` entrants, each in a folder of its own (a
    hard link to ``bot``); ``preflight``: the default pre-flight (``leave-out``), else off."""
    lines = ["name: coordinator", f"format: {fmt}", "players: 3", "seatings: all",
             "target: 1000", "rounds: 1", f"sandbox: {sandbox}",
             *([] if preflight else ["preflight: \"off\""]), "entrants:"]
    if matches is not None:
        lines.insert(1, f"max_matches: {matches}")
    for i in range(entrants):
        home = folder / f"e{i:05d}"
        home.mkdir(exist_ok=True)
        if not (home / "bot").exists():
            os.link(bot, home / "bot")
        lines.append(f"  - {{name: e{i:05d}, command: [./e{i:05d}/bot]}}")
    path = folder / f"{fmt}{entrants}.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def template(bot: Path) -> RecordDict:
    seats = [Entrant(f"c{i}", (str(bot),)) for i in range(3)]
    return play_match("m", seats, lambda k: Deal.from_key(3, bytes(16), f"d:{k}"), target=1000)


def ceiling(folder: Path, bot: Path, record: RecordDict, *, entrants: int, matches: int,
            report: bool) -> tuple[float, float]:
    """Matches/s and CPU ms a match of the coordinator alone."""
    from referee.web.report import Refresher

    label = "with" if report else "without"
    config = load_config(write_ladder(folder, bot, entrants, matches=matches, sandbox="none"),
                         output=folder / f"out-{label}")
    runner = InstantRunner(record)
    c0, w0 = time.process_time(), time.perf_counter()
    outcome = run(config, runner=runner, reporter=Reporter(),
                  pages=Refresher if report else None)
    cpu = time.process_time() - c0 - runner.cpu
    wall = time.perf_counter() - w0 - runner.wall
    assert outcome.played == matches, outcome
    rate = outcome.played / wall
    print(f"coordinator: {entrants}-entrant ladder, {outcome.played} matches {label} the "
          f"report: {rate:.0f} matches/s, {1000 * cpu / outcome.played:.2f} ms CPU a match "
          f"(the worker's part, {1000 * runner.cpu / outcome.played:.2f} ms, not counted)",
          flush=True)
    if not report:  # the same folder resumed: every match is kept, nothing is played
        (folder / f"out-{label}" / "standings.json").unlink()
        c0, w0 = time.process_time(), time.perf_counter()
        again = run(config, runner=InstantRunner(record), reporter=Reporter())
        took, cpu = time.perf_counter() - w0, time.process_time() - c0
        assert again.played == 0 and again.done == matches, again
        print(f"coordinator: resumed with {again.done} matches kept in {took:.2f} s, "
              f"{cpu:.2f} s CPU ({1e6 * cpu / again.done:.0f} µs CPU a kept match, its rating "
              f"and the planning included)", flush=True)
    return rate, 1000 * cpu / outcome.played


def first_match(folder: Path, bot: Path, record: RecordDict, entrants: int, fmt: str,
                preflight: bool) -> None:
    """(child process) Loads and runs the tournament until its first match is submitted."""
    sandbox = "auto" if os.path.exists("/usr/bin/bwrap") else "none"
    config_path = write_ladder(folder, bot, entrants, matches=None, sandbox=sandbox, fmt=fmt,
                               preflight=preflight)
    stop = threading.Event()
    runner = InstantRunner(record, stop=stop)
    header: list[str] = []

    class Header(Reporter):
        def started(self, config: Any, total: int, done: int, sandbox: str) -> None:
            header.extend(part for part in sandbox.split("; ") if part.startswith("sealed:"))

    start = time.perf_counter()
    config = load_config(config_path, output=folder / f"out-first-{fmt}{entrants}"
                         f"{'-preflight' if preflight else ''}")
    loaded = time.perf_counter() - start
    run(config, runner=runner, reporter=Header(), stop=stop)
    assert runner.first is not None
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"seconds": runner.first - start, "rss_mb": rss, "sandbox": sandbox,
                      "preflight": config.preflight.value,
                      "total": config.total(), "loaded": loaded,
                      "sealed": header[0] if header else None}))


def _first(folder: Path, fmt: str, entrants: int, *, preflight: bool = True,
           source: Path = HERE / "coordinator.py") -> dict[str, Any]:
    """Times, in a child process, a tournament of ``entrants`` to its first match (``source``:
    this script, or a copy of it in another checkout, whose code it then times)."""
    child = subprocess.run([sys.executable, str(source), "--first-match", str(folder),
                            "--format", fmt, "--ladder", str(entrants),
                            *([] if preflight else ["--no-preflight"])],
                           capture_output=True, text=True, check=False)
    if child.returncode:
        sys.exit(f"error: the {entrants}-entrant {fmt} failed:\n{child.stderr}")
    result: dict[str, Any] = json.loads(child.stdout.strip().splitlines()[-1])
    return result


def _first_line(n: int, fmt: str, got: dict[str, Any], label: str = "") -> str:
    return (f"coordinator: {label}{n}-entrant {fmt} of {got['total']:,} matches (sandbox "
            f"{got['sandbox']}, preflight {got.get('preflight', 'off')}): first match after "
            f"{got['seconds']:.1f} s (the configuration read in {got['loaded']:.1f} s; "
            f"{got['sealed'] or 'not sealed'}), peak {got['rss_mb']:.0f} MB")


def compare_first(folder: Path, entrants: int, before: Path, rounds: int) -> None:
    """The ``entrants``-entrant ladder to its first match with the defaults (pre-flight on),
    timed with the code of the checkout ``before`` (a copy of this script run there) and with
    this one's, alternating, ``rounds`` times each: before and after in one run, under the
    same load."""
    copy = before / "bench" / "coordinator_first.py"
    copy.write_text((HERE / "coordinator.py").read_text())
    try:
        for k in range(rounds):
            for label, source in (("before", copy), ("after", HERE / "coordinator.py")):
                got = _first(folder, "ladder", entrants, source=source)
                print(_first_line(entrants, "ladder", got, f"[{label} {k + 1}] "), flush=True)
    finally:
        copy.unlink()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entrants", type=int, default=500)
    parser.add_argument("--matches", type=int, default=1200)
    parser.add_argument("--ladder", type=int, default=10_000,
                        help="entrants of the ladder timed to its first match")
    parser.add_argument("--round-robin", type=int, default=100,
                        help="entrants of the round robin timed to its first match")
    parser.add_argument("--compare", metavar="CHECKOUT", type=Path,
                        help="time only the ladder to its first match (pre-flight on), with "
                             "CHECKOUT's code (e.g. a worktree of main) and this one's, "
                             "alternating")
    parser.add_argument("--rounds", type=int, default=2, help="with --compare: runs of each")
    parser.add_argument("--first-match", metavar="FOLDER", help=argparse.SUPPRESS)
    parser.add_argument("--format", default="ladder", help=argparse.SUPPRESS)
    parser.add_argument("--no-preflight", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.first_match:
        folder = Path(args.first_match)
        first_match(folder, folder / "starter.bin",
                    json.loads((folder / "record.json").read_text()), args.ladder, args.format,
                    preflight=not args.no_preflight)
        return
    print(f"coordinator: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at the "
          f"start", flush=True)
    with tempfile.TemporaryDirectory(prefix="ct-bench-") as tmp:
        folder = Path(tmp)
        bot = _distributed_bench().compile_bot(folder)
        record = template(bot)
        (folder / "record.json").write_text(json.dumps(record))
        if args.compare is not None:
            compare_first(folder, args.ladder, args.compare.resolve(), args.rounds)
            return
        ceiling(folder, bot, record, entrants=args.entrants, matches=args.matches,
                report=False)
        rate, cpu = ceiling(folder, bot, record, entrants=args.entrants, matches=args.matches,
                            report=True)
        firsts = {fmt: _first(folder, fmt, n)
                  for fmt, n in (("round-robin", args.round_robin), ("ladder", args.ladder))}
    for fmt, n in (("round-robin", args.round_robin), ("ladder", args.ladder)):
        print(_first_line(n, fmt, firsts[fmt]))
    first = firsts["ladder"]
    print(f"coordinator: {rate:.0f} matches/s ({cpu:.2f} ms CPU a match), "
          f"{args.ladder:,}-entrant ladder planned and first match in {first['seconds']:.1f} s "
          f"(pre-flight on)")


if __name__ == "__main__":
    main()
