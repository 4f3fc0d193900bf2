"""How two sandboxed bots share one CPU while the honest one works: a bot that burns CPU between
its turns (or before its ``ready``) against an honest bot whose clock runs, each with the
defence (CPU weights by who is on move, start-ups one after another on one CPU) and without it.
tests/test_on_move.py checks the defence's mechanism (the weights written, the order of the
start-ups); this script prints what it is worth in CPU.

Run:  .venv/bin/python bench/cpu_share.py [--runs 3]   (root, or a delegated cgroup subtree)

The share is the CPU the burner had while the honest bot worked over the CPU the honest bot had
then (1: an even split; 0: none for the burner), from the monotonic stamps each bot writes on
its stderr (``tests/bots/hostile/burner.py``). Each line: the scenario, with or without the
defence, the shares of ``--runs`` runs. Other work on the pinned CPU dilutes the figures:
measured 0.00-0.12 with the defence, 0.68-0.99 without, at a load of 5 on 2 cores.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from referee.bots import cgroups  # noqa: E402
from referee.bots.bot import Bot  # noqa: E402
from referee.bots.limits import Limits  # noqa: E402
from referee.bots.probing import capabilities  # noqa: E402
from referee.bots.process import Launcher, ThreadSpawner, default_spawner  # noqa: E402
from referee.bots.spawn import BotCommand  # noqa: E402
from referee.game.rules import Deal  # noqa: E402
from referee.match import play  # noqa: E402
from referee.match.play import Entrant, play_match  # noqa: E402
from referee.runners.local import allowed_cpus  # noqa: E402

HOSTILE = ROOT / "tests" / "bots" / "hostile"
BURNER = HOSTILE / "burner.py"
ROUNDS = 60_000  # about 15-30 ms of one CPU


def launcher() -> Launcher:
    return Launcher.resolve("bwrap", Limits(memory_mb=0))


def share(burner_log: Path, honest_log: Path) -> float:
    """The CPU the burner had while the honest bot worked, over the CPU the honest bot had
    then. The burner's in a window is bounded by its samples just before and just after it."""
    burns = [(float(w[1]), float(w[2])) for w in
             (line.split() for line in burner_log.read_text().splitlines())
             if w and w[0] == "burn"]
    if not burns:
        sys.exit("error: the burner never ran")
    taken = worked = 0.0
    for line in honest_log.read_text().splitlines():
        w = line.split()
        if not w or w[0] not in ("work", "start"):
            continue
        a, b, cpu = float(w[1]), float(w[2]), float(w[3])
        lo = max((s for s in burns if s[0] <= a), default=burns[0])
        hi = min((s for s in burns if s[0] >= b), default=burns[-1])
        taken += hi[1] - lo[1]
        worked += cpu
    return taken / worked if worked else float("nan")


def on_move_share(folder: Path) -> float:
    """A burner and an honest bot that works before each answer, on one CPU: their requests
    in turn."""
    spawner = ThreadSpawner()
    spawner.pin({allowed_cpus()[-1]})
    logs = folder / "logs"
    try:
        with Bot(BotCommand.of([sys.executable, str(BURNER), "burn"], workdir=HOSTILE,
                               launcher=launcher(), spawner=spawner,
                               stderr_path=logs / "burner")) as burner, \
                Bot(BotCommand.of([sys.executable, str(BURNER), "work", str(ROUNDS)],
                                  workdir=HOSTILE, launcher=launcher(), spawner=spawner,
                                  stderr_path=logs / "honest")) as honest:
            burner.start(10_000)
            honest.start(10_000)
            for i in range(10):
                burner.request(f"go {i}", 5000)  # its turn: at once
                honest.request(f"go {i}", 5000)
    finally:
        spawner.close()
    return share(logs / "burner", logs / "honest")


def start_share(folder: Path, hold_ms: int = 400, startup_ms: int = 10_000) -> float:
    """A real match on one CPU (as a pinned worker plays it): a bot that burns CPU and holds
    its ``ready`` back ``hold_ms`` in seat 0, an honest bot that works before its ``ready``."""
    cpu = allowed_cpus()[-1]
    spawner = default_spawner()
    spawner.pin({cpu})
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {cpu})  # this thread plays the match: pinned, as a worker
    try:
        seats = [Entrant("holder", (sys.executable, str(BURNER), "hold", str(hold_ms)), HOSTILE),
                 Entrant("honest", (sys.executable, str(BURNER), "startwork", str(ROUNDS)),
                         HOSTILE)]
        play_match("m", seats, lambda k: Deal.from_key(2, bytes(16), f"d:{k}"), target=10,
                   launcher=launcher(), logs_dir=folder,
                   limits=Limits(startup_ms=startup_ms, memory_mb=0))
    finally:
        os.sched_setaffinity(0, before)
        spawner.release()
    return share(folder / "0-holder.stderr", folder / "1-honest.stderr")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    caps = capabilities()
    if not caps.works or not cgroups.find_layout().where("cpu"):
        print(f"cpu_share: skipped: needs the sandbox and a cpu cgroup controller "
              f"({caps.summary()})")
        return
    print(f"cpu_share: load average {os.getloadavg()[0]:.2f} at the start", flush=True)
    no_weights = mock.patch.object(cgroups.Cgroup, "on_move", lambda self, moving: None)
    together = mock.patch.object(play, "_one_cpu", lambda: False)
    scenarios = [
        ("burning between turns", "weights", on_move_share, None),
        ("burning between turns", "no weights", on_move_share, no_weights),
        ("burning before ready", "one after another", start_share, None),
        ("burning before ready", "started together", start_share, together),
        ("never ready (start-up 1 s)", "one after another",
         lambda f: start_share(f, hold_ms=5000, startup_ms=1000), None),
    ]
    for what, how, measure, patch in scenarios:
        shares = []
        for _ in range(args.runs):
            with tempfile.TemporaryDirectory(prefix="ct-share-") as tmp:
                if patch is None:
                    shares.append(measure(Path(tmp)))
                else:
                    with patch:
                        shares.append(measure(Path(tmp)))
        print(f"cpu_share: {what}, {how}: the burner's share "
              f"{' '.join(f'{s:.2f}' for s in shares)}", flush=True)


if __name__ == "__main__":
    main()
