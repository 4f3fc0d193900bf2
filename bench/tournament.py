"""Tournament throughput and memory, with instant bots.

Run:  .venv/bin/python bench/tournament.py            # throughput at concurrency 1 and 2
      .venv/bin/python bench/tournament.py --entrants 9 --think 4 --concurrency 6 --target 200
                                                      # bots that think 4 ms a move: 1 and 6
      .venv/bin/python bench/tournament.py --entrants 9 --think 4 --concurrency 6 --target 200 \
          --bots python,c                             # the same with compiled bots too
      .venv/bin/python bench/tournament.py --memory   # referee RSS over a 2,000-match tournament

Every entrant is ``bench/instant_bot.py`` (a legal answer at once; ``python -S``: no site import),
so the figures measure the referee: fresh bot processes per match, the protocol, the rules,
records and the journal, fsync included. With ``--bots c`` (or ``python,c``: both, one after
the other) every entrant is ``bots/starter.c`` compiled with ``-DTHINK_US`` (the same wait
before each move, and no interpreter to start: each Python bot's start-up takes a core for
about 15 ms, three a match), so that the figure measures the referee rather than the bots'
start-up. Each line gives the load average before it. The last line of each kind of bot is
``throughput (<bots>): <a> matches/s at concurrency 1, <b> at concurrency <n> (<b/a> x)``.
"""

from __future__ import annotations

import argparse
import math
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.cpu import tree_seconds
from referee.match.job import MatchSpec
from referee.tournament.ratings import MatchResult, Standings
from referee.tournament.run import Reporter, load_config, run

HERE = Path(__file__).resolve().parent
BOT = HERE / "instant_bot.py" if (HERE / "instant_bot.py").exists() else \
    HERE.parent / "bots" / "random_bot.py"


def write_config(folder: Path, *, entrants: int, players: int, target: int, rounds: int,
                 think: float = 0, bots: str = "python") -> Path:
    """A tournament of ``entrants`` instant bots (that wait ``think`` ms before each move):
    ``bench/instant_bot.py`` (``bots`` ``python``) or ``bots/starter.c`` (``c``)."""
    lines = ["name: bench", "entrants:"]
    extra = f", --think, '{think:g}'" if think else ""
    command = f"{sys.executable}, -S, {BOT}{extra}" if bots == "python" else \
        str(compile_starter(folder, think))
    for i in range(entrants):
        lines.append(f"  - {{name: instant{i}, command: [{command}]}}")
    lines += [f"players: {players}", f"target: {target}", f"rounds: {rounds}", "sandbox: none"]
    path = folder / "bench.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def compile_starter(folder: Path, think: float) -> Path:
    """``bots/starter.c`` built into ``folder``, waiting ``think`` ms before each move."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        sys.exit("error: no C compiler (cc or gcc) to build bots/starter.c")
    binary = folder / "starter.bin"
    subprocess.run([cc, "-O2", f"-DTHINK_US={round(think * 1000)}", "-o", str(binary),
                    str(HERE.parent / "bots" / "starter.c")], check=True)
    return binary


def rss_mb() -> float:
    """The referee's resident set size now, in MiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


AFFINITY: dict[str, bool | str] = {"on": True, "off": False, "auto": "auto"}
"""``--affinity``: what the configuration's ``affinity`` is given."""


def throughput(concurrency: int, *, entrants: int, target: int, think: float = 0,
               bots: str = "python", affinity: str | None = None) -> float:
    """Matches per second of a whole tournament at ``concurrency``."""
    with tempfile.TemporaryDirectory(prefix="ct-bench-") as tmp:
        path = write_config(Path(tmp), entrants=entrants, players=3, target=target, rounds=1,
                            think=think, bots=bots)
        overrides = {} if affinity is None else {"affinity": AFFINITY[affinity]}
        config = load_config(path, output=Path(tmp) / "out", concurrency=concurrency,
                             overrides=overrides)
        load = os.getloadavg()[0]
        cpu0 = tree_seconds()
        start = time.perf_counter()
        outcome = run(config)
        elapsed = time.perf_counter() - start
        cpu = [b - a for a, b in zip(cpu0, tree_seconds(), strict=True)]
    assert outcome.finished
    rate = outcome.total / elapsed
    kids = "bots" if concurrency == 1 else "worker processes and bots"
    pinned = {None: "", "auto": ", affinity auto", "on": ", affinity", "off": ", no affinity"}
    print(f"concurrency {concurrency} ({bots} bots{pinned[affinity]}): {outcome.total} matches "
          f"in {elapsed:.1f} s, "
          f"{rate:.2f} matches/s, {1000 * concurrency / rate:.0f} ms a match; CPU "
          f"{cpu[0]:.1f} s this process + {cpu[1]:.1f} s {kids} = "
          f"{(cpu[0] + cpu[1]) / elapsed:.2f} cores busy (load average {load:.1f})", flush=True)
    return rate


class _Memory(Reporter):
    def __init__(self, total: int) -> None:
        self.total = total
        self.marks = {max(1, math.ceil(total * f / 4)) for f in range(1, 5)}
        self.t0 = time.perf_counter()

    def match_done(self, spec: MatchSpec, result: MatchResult, done: int, table: Standings) -> None:
        if done in self.marks:
            print(f"{done:>5}/{self.total} matches, {time.perf_counter() - self.t0:6.1f} s: "
                  f"RSS {rss_mb():.1f} MiB", flush=True)


def memory(matches: int, concurrency: int) -> None:
    """Plays about ``matches`` short matches and prints the referee's RSS as it goes."""
    entrants, players = 6, 3
    per_round = math.comb(entrants, players) * math.factorial(players)
    rounds = math.ceil(matches / per_round)
    with tempfile.TemporaryDirectory(prefix="ct-bench-") as tmp:
        path = write_config(Path(tmp), entrants=entrants, players=players, target=50,
                            rounds=rounds)
        config = load_config(path, output=Path(tmp) / "out", concurrency=concurrency)
        print(f"memory: {per_round * rounds} matches (target 50), concurrency {concurrency}")
        print(f"    0/{per_round * rounds} matches,    0.0 s: RSS {rss_mb():.1f} MiB", flush=True)
        outcome = run(config, reporter=_Memory(per_round * rounds))
    assert outcome.finished
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"memory: peak RSS {peak:.1f} MiB, now {rss_mb():.1f} MiB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memory", action="store_true", help="RSS over a long tournament")
    parser.add_argument("--matches", type=int, default=2000, help="with --memory")
    parser.add_argument("--entrants", type=int, default=5, help="throughput: entrants (3 seats)")
    parser.add_argument("--target", type=int, default=1000, help="throughput: match target")
    parser.add_argument("--think", type=float, default=0, help="throughput: ms a move")
    parser.add_argument("--concurrency", type=int, default=2, help="throughput: against 1")
    parser.add_argument("--affinity", choices=sorted(AFFINITY),
                        help="throughput: the tournament's affinity (default: its default)")
    parser.add_argument("--bots", default="python",
                        help="throughput: python (bench/instant_bot.py), c (bots/starter.c), "
                             "or both: python,c")
    args = parser.parse_args()
    if args.memory:
        memory(args.matches, concurrency=2)
        return
    bots = f"bots that think {args.think:g} ms a move" if args.think else "instant bots"
    print(f"throughput: {math.comb(args.entrants, 3) * 6} matches of {bots}, "
          f"target {args.target}")
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at the start")
    n = args.concurrency
    for bots in args.bots.split(","):
        if bots not in ("python", "c"):
            sys.exit(f"error: --bots: {bots!r} is neither python nor c")
        a = throughput(1, entrants=args.entrants, target=args.target, think=args.think,
                       bots=bots, affinity=args.affinity)
        b = throughput(n, entrants=args.entrants, target=args.target, think=args.think,
                       bots=bots, affinity=args.affinity)
        print(f"throughput ({bots} bots): {a:.2f} matches/s at concurrency 1, {b:.2f} at "
              f"concurrency {n} ({b / a:.2f} x)", flush=True)


if __name__ == "__main__":
    main()
