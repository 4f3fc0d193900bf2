"""Concurrency as the organiser meets it: the wall time of the whole ``ct-referee tournament``
command, pre-flight included, at concurrency 1 and at ``-j N``.

Run:  .venv/bin/python bench/pipeline.py                       # instant bots: -j 1 against -j 2
      .venv/bin/python bench/pipeline.py --think 4 -j 6 --target 200
                                                               # bots that think 4 ms a move
      .venv/bin/python bench/pipeline.py --sandbox bwrap       # the same, sandboxed (root, or
                                                               # subordinate uids)
      .venv/bin/python bench/pipeline.py --baseline ../main/.venv/bin/ct-referee
                                                               # before and after, one run

Every entrant is ``bots/starter.c`` built with ``cc -O2`` (``-DTHINK_US``: the same wait before
each move; no interpreter to start), 9 entrants by default, 2 seats, every seating, one round:
72 matches. Each setting is the command ``ct-referee tournament CONFIG --fresh -j N`` run as a
subprocess (its output to a file: the plain reporter), timed from its start to its exit: the
imports, the configuration, the worker processes' start, the pre-flight, the matches and the
standings. The settings run interleaved, ``--repeat`` times each (best counts), because the
machine may be shared: compare the ratio of one run, never figures of two runs;
``--baseline /other/checkout/.venv/bin/ct-referee`` runs another checkout's command
interleaved with this one's (before and after, in one run). The last line is
``pipeline (this: <cli>): <a> s at -j 1, <b> s at -j N: <a/b> x (best of R; load average L at
the start)``, after the baseline's.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CLI = Path(sys.executable).parent / "ct-referee"

sys.path.insert(0, str(HERE))
from tournament import compile_starter  # noqa: E402  (bench/tournament.py)


def write_config(folder: Path, bot: Path, *, entrants: int, players: int, target: int,
                 sandbox: str) -> Path:
    """One round of ``entrants`` copies of ``bot``, each in a folder of its own."""
    lines = ["name: pipeline", "entrants:"]
    for i in range(entrants):
        home = folder / f"bot{i}"
        home.mkdir(exist_ok=True)
        shutil.copy2(bot, home / "bot")
        lines.append(f"  - {{name: bot{i}, command: ['{home / 'bot'}']}}")
    lines += [f"players: {players}", f"target: {target}", "rounds: 1", f"sandbox: {sandbox}"]
    if sandbox != "none":
        lines.append("bot_uids: shared")
    path = folder / "pipeline.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def command_seconds(cli: Path, config: Path, concurrency: int, log: Path) -> float:
    """The wall time of the whole command at ``concurrency``."""
    argv = [str(cli), "tournament", str(config), "--fresh", "-j", str(concurrency),
            "-o", str(config.parent / f"out{concurrency}")]
    start = time.perf_counter()
    with log.open("w") as out:
        done = subprocess.run(argv, stdout=out, stderr=subprocess.STDOUT, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"error: {' '.join(argv)} exited {done.returncode}:\n{log.read_text()}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entrants", type=int, default=9)
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--target", type=int, default=1000)
    parser.add_argument("--think", type=float, default=0, help="ms a move")
    parser.add_argument("-j", "--concurrency", type=int, default=2, help="against 1")
    parser.add_argument("--sandbox", default="none", choices=["none", "bwrap"])
    parser.add_argument("--repeat", type=int, default=2, help="runs of each setting")
    parser.add_argument("--baseline", type=Path, metavar="CLI",
                        help="another checkout's ct-referee (its venv's), run interleaved with "
                             "this one: before and after in one run")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    bots = f"bots that think {args.think:g} ms a move" if args.think else "instant bots"
    with tempfile.TemporaryDirectory(prefix="ct-pipeline-") as tmp:
        folder = Path(tmp)
        bot = compile_starter(folder, args.think)
        config = write_config(folder, bot, entrants=args.entrants, players=args.players,
                              target=args.target, sandbox=args.sandbox)
        print(f"pipeline: {args.entrants} entrants, {args.players} seats, C {bots}, target "
              f"{args.target}, sandbox {args.sandbox}; {os.cpu_count()} cores, load average "
              f"{load:.2f} at the start", flush=True)
        clis = {"this": CLI} | ({"baseline": args.baseline} if args.baseline else {})
        best: dict[tuple[str, int], float] = {}
        for r in range(args.repeat):
            for label, cli in clis.items():
                for n in (1, args.concurrency):
                    seconds = command_seconds(cli, config, n, folder / f"log{n}")
                    best[label, n] = min(best.get((label, n), seconds), seconds)
                    played = (folder / f"out{n}" / "results.jsonl").read_text().count("\n")
                    print(f"run {r + 1}, {label}, -j {n}: {played} matches in {seconds:.2f} s "
                          f"(load average {os.getloadavg()[0]:.1f})", flush=True)
        for label in reversed(clis):
            a, b = best[label, 1], best[label, args.concurrency]
            print(f"pipeline ({label}: {clis[label]}): {a:.2f} s at -j 1, {b:.2f} s at -j "
                  f"{args.concurrency}: {a / b:.2f} x (best of {args.repeat}; load average "
                  f"{load:.1f} at the start)")


if __name__ == "__main__":
    main()
