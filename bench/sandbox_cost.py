"""What the sandbox costs a match, measured as an organiser meets it, and where the time goes.

1. Whole tournaments through the CLI (``ct-referee tournament CONFIG --fresh``): 4 entrants,
   each the C starter bot (``bots/starter.c``, compiled: an instant bot), 3 players a match,
   ``concurrency: 1``; ``sandbox: none`` and the default alternated ``--repeat`` times in one
   run. Prints seconds a match for each and the ratio.
2. Stage by stage, one bot spawned to its first line and stopped, ``--runs`` times each,
   alternated: no sandbox; bwrap with the runtime in memory but no seccomp filter and no
   cgroup; with the seccomp filter; with the cgroup too (the default). The difference between
   two rows is what that stage costs.
3. ``--runtimes``: what each runtime's tree holds and how long working it out and making it
   take (the first run of a tournament after ``LINGER_S`` of no use pays the making).

``python3 bench/sandbox_cost.py [--repeat N] [--runs N] [--rounds N] [--runtimes]``; run it as
root and as a user who is not root (with subordinate uids: ``ct-referee sandbox`` says).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.folders import scratch  # noqa: E402
from referee.bots.policy import SandboxPolicy  # noqa: E402
from referee.bots.probes.world import first_line  # noqa: E402
from referee.bots.probing import capabilities  # noqa: E402
from referee.bots.process import Launcher, start_process  # noqa: E402
from referee.bots.resolve import bot_binds  # noqa: E402

CLI = [sys.executable, "-c", "from referee.cli import main; main()"]


def compile_bot(work: Path) -> Path:
    out = work / "starter"
    subprocess.run(["cc", "-O2", "-o", str(out), str(ROOT / "bots" / "starter.c")], check=True)
    return out


def config(work: Path, binary: Path, sandbox: str, rounds: int) -> Path:
    lines = [f"players: 3\ntarget: 200\nrounds: {rounds}\nseatings: all\nconcurrency: 1\n"
             f"sandbox: {sandbox}\noutput: out-{sandbox}\nentrants:\n"]
    for i in range(4):
        folder = work / f"e{i}"
        folder.mkdir(exist_ok=True)
        folder.chmod(0o755)
        shutil.copy(binary, folder / "bot")
        lines.append(f"  - name: c{i}\n    command: ./bot\n    workdir: e{i}\n")
    path = work / f"{sandbox}.yaml"
    path.write_text("".join(lines))
    return path


def tournament(path: Path) -> tuple[float, int]:
    t0 = time.perf_counter()
    done = subprocess.run([*CLI, "tournament", str(path), "--fresh"], capture_output=True,
                          text=True, cwd=path.parent, check=False)
    took = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"{path.name}: rc {done.returncode}\n{done.stdout[-2000:]}"
                         f"{done.stderr[-2000:]}")
    out = path.parent / f"out-{path.stem}"
    matches = len(list((out / "games").glob("*.json.gz")))
    return took, matches


def stage(binary: Path, policy: SandboxPolicy | None) -> float:
    """Spawn to first line and stop, ms."""
    workdir = binary.parent
    t0 = time.perf_counter()
    proc = start_process(["./bot"], workdir=workdir, launcher=Launcher(policy))
    os.write(proc.stdin, b"chinese-ten 1\n")
    if not first_line(proc, 30):
        raise SystemExit("the bot did not answer")
    proc.stop(0)
    return (time.perf_counter() - t0) * 1000


def runtimes() -> None:
    from referee.bots import image
    from referee.bots.runtime import closure
    commands = [["sh", "x"], ["perl", "x"], ["node", "x"], ["/usr/bin/python3", "x"],
                ["java", "X"], ["python3", "x"]]
    work = Path(tempfile.mkdtemp())
    try:
        for argv in commands:
            try:
                binds = bot_binds(argv, work)
            except Exception as err:  # a runtime not installed here
                print(f"{' '.join(argv):<22} {err}")
                continue
            t0 = time.perf_counter()
            found = closure(binds.exe, binds.runtime, own=binds.bot)
            t1 = time.perf_counter()
            tree = image.runtime_tree(found)
            t2 = time.perf_counter()
            tree.release()
            size = found.size / (1 << 20)
            print(f"{' '.join(argv):<22} {size:7.1f} MiB {len(found.files):6} files  worked "
                  f"out {1000 * (t1 - t0):6.0f} ms  tree ready {1000 * (t2 - t1):6.0f} ms  "
                  f"({binds.exe})")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--runtimes", action="store_true")
    args = parser.parse_args()
    if args.runtimes:
        runtimes()
        return
    caps = capabilities()
    print(f"uid {os.geteuid()}; sandbox: {caps.summary()}")
    with scratch("ct-bench-cost-", where=None) as work:
        binary = compile_bot(work)
        paths = {m: config(work, binary, m, args.rounds) for m in ("none", "auto")}
        times: dict[str, list[float]] = {"none": [], "auto": []}
        count = 0
        for _ in range(args.repeat):
            for mode in ("none", "auto"):
                took, count = tournament(paths[mode])
                times[mode].append(took / count)
        bare, boxed = (statistics.median(times[m]) for m in ("none", "auto"))
        print(f"tournaments: {count} matches each, 3 instant C bots a match, concurrency 1, "
              f"{args.repeat} runs of each alternated")
        print(f"  sandbox: none   {1000 * bare:7.1f} ms a match (median)")
        print(f"  sandbox: auto   {1000 * boxed:7.1f} ms a match (median)")
        print(f"  ratio           {boxed / bare:7.2f}x")
        folder = work / "e0"
        variants = {
            "no sandbox": None,
            "bwrap, runtime in memory": SandboxPolicy(seccomp=False, cgroups=False),
            "+ seccomp": SandboxPolicy(cgroups=False),
            "+ cgroups (the default)": SandboxPolicy(),
        }
        spent: dict[str, list[float]] = {k: [] for k in variants}
        for _ in range(args.runs):
            for name, policy in variants.items():
                spent[name].append(stage(folder / "bot", policy))
        print(f"one bot, spawn to first line and stop, {args.runs} runs each alternated "
              f"(median ms):")
        for name, values in spent.items():
            print(f"  {name:<28} {statistics.median(values):7.1f}")


if __name__ == "__main__":
    main()
