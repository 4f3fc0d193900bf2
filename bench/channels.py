"""What a bot carries from one seating of a duplicate set to the next through the kernel's
caches, measured: the cache bot (``tests/bots/hostile/caches.py``: negative dentries of made-up
names and cold pages of system files, read back by timing) against an instant bot, one
duplicate set of two seatings a run, ``sandbox: none`` (the control: the channel on the host's
disk) and the default alternated. Prints, per channel, the later seating's hands where it named
its opponent's exact 12 cards, and the cards it named that the opponent held against all it
named (chance: about a third).

``python3 bench/channels.py [RUNS]`` (default 4); run it as root and as a user who is not root.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.folders import scratch  # noqa: E402
from referee.records.record import read_record  # noqa: E402

CLI = [sys.executable, "-c", "from referee.cli import main; main()"]
HOSTILE = ROOT / "tests" / "bots" / "hostile" / "caches.py"
INSTANT = ROOT / "bench" / "instant_bot.py"


def field(root: Path, sandbox: str) -> Path:
    for name, files in (("attacker", (HOSTILE, INSTANT)), ("victim", (INSTANT,))):
        (root / name).mkdir(mode=0o755, exist_ok=True)
        for f in files:
            shutil.copy(f, root / name / f.name)
    path = root / f"{sandbox}.yaml"
    path.write_text(f"players: 2\ntarget: 300\nconcurrency: 1\nsandbox: {sandbox}\n"
                    f"output: out-{sandbox}\nentrants:\n"
                    f"  - name: attacker\n    command: {sys.executable} caches.py\n"
                    f"    workdir: attacker\n"
                    f"  - name: victim\n    command: {sys.executable} instant_bot.py\n"
                    f"    workdir: victim\n")
    return path


def read_back(out: Path) -> dict[str, list[int]]:
    lines = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    order = [line["id"] for line in lines if "players" in line]
    found = {c: [0, 0, 0, 0] for c in ("dentry", "page")}  # exact, later hands, right, named
    for n, match in enumerate(order):
        record = read_record(out / "games" / f"{match}.json.gz")
        seat = record["players"].index("attacker")
        if n == 1:
            for c in found:
                found[c][1] += len(record["hands"])
        log = (out / "logs" / match / f"{seat}-attacker.stderr").read_text().splitlines()
        for line in log:
            words = line.split()
            if n != 1 or not words or words[0] != "KNEW":
                continue
            k, named = int(words[3].rstrip(":")), set(line.split(":", 1)[1].split())
            held = set(record["hands"][k - 1]["hands"][1 - seat])
            tally = found[words[1]]
            tally[0] += named == held
            tally[2] += len(named & held)
            tally[3] += len(named)
    return found


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    totals = {m: {c: [0, 0, 0, 0] for c in ("dentry", "page")} for m in ("none", "auto")}
    with scratch("ct-bench-channels-") as work:
        for _ in range(runs):
            for mode in ("none", "auto"):
                path = field(work, mode)
                done = subprocess.run([*CLI, "tournament", str(path), "--fresh"], cwd=work,
                                      capture_output=True, text=True, check=False)
                if done.returncode != 0:
                    raise SystemExit(done.stdout[-1500:] + done.stderr[-1500:])
                for c, v in read_back(work / f"out-{mode}").items():
                    totals[mode][c] = [a + b for a, b in zip(totals[mode][c], v, strict=True)]
        for mode, label in (("none", "sandbox: none (control)"), ("auto", "sandboxed")):
            for c, (exact, hands, right, named) in totals[mode].items():
                share = f"{100 * right / named:.0f}%" if named else "-"
                print(f"{label:<24} {c:<7} exact hands {exact}/{hands}, cards right "
                      f"{right}/{named} ({share})")


if __name__ == "__main__":
    main()
