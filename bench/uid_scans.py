"""What a bot's uid lease costs now that it looks at ``/proc``: the allocator skips a uid some
live process runs as, and the release, where no cgroup was emptied, kills and waits for what
is left of the uid; each is one :func:`~referee.bots.uids.processes_of` at least (a ``stat`` of
each ``/proc/<pid>``). They run once per bot, so they are measured against one sandboxed bot's
start and stop, in the same run, on this host as it is and with ``EXTRA`` more idle processes
(a busy host).

Usage: ``python3 bench/uid_scans.py [RUNS] [EXTRA]`` (default 20 runs, 500 extra processes).
Prints per variant the median (and minimum: a loaded host inflates medians) of each part in ms,
and the scans' share of a bot's start+stop.
Needs a working sandbox (``ct-referee sandbox``).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from referee.bots.policy import SandboxPolicy  # noqa: E402
from referee.bots.probing import capabilities  # noqa: E402
from referee.bots.process import Launcher, start_process  # noqa: E402
from referee.bots.uids import processes_of  # noqa: E402

RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 20
EXTRA = int(sys.argv[2]) if len(sys.argv) > 2 else 500
CODE = "print('ready x', flush=True)"


def timed(f: object) -> float:
    t0 = time.perf_counter()
    f()  # type: ignore[operator]
    return (time.perf_counter() - t0) * 1000


def bot(workdir: Path) -> float:
    """One sandboxed bot started (to its first line) and stopped, in ms."""
    t0 = time.perf_counter()
    proc = start_process([sys.executable, "-c", CODE], workdir=workdir,
                         launcher=Launcher(SandboxPolicy(mode="auto")))
    data = b""
    while b"\n" not in data:
        try:
            chunk = os.read(proc.stdout, 100)
        except BlockingIOError:
            time.sleep(0.0005)
            continue
        if not chunk:
            raise RuntimeError("no ready from the bot")
        data += chunk
    proc.stop(0.5)
    return (time.perf_counter() - t0) * 1000


def measure(label: str, workdir: Path) -> None:
    procs = sum(1 for e in os.listdir("/proc") if e.isdigit())
    scans = [timed(lambda: processes_of(64999)) for _ in range(RUNS)]
    bots = [bot(workdir) for _ in range(RUNS)]
    scan, start = statistics.median(scans), statistics.median(bots)
    print(f"{label:>12}: {procs:5d} processes | one scan {scan:6.2f} ms (min {min(scans):.2f}) "
          f"| bot start+stop {start:7.1f} ms (min {min(bots):.1f}) | two scans (allocate, "
          f"release) {2 * scan / start:6.1%} of it (of the minima "
          f"{2 * min(scans) / min(bots):.1%})")


def main() -> None:
    if not capabilities().works:
        print(f"no sandbox here: {capabilities().summary()}")
        return
    print(f"python3 bench/uid_scans.py {RUNS} {EXTRA}  (medians of {RUNS})")
    with tempfile.TemporaryDirectory(prefix=".bench-", dir="/var/tmp") as tmp:
        workdir = Path(tmp)
        os.chmod(workdir, 0o755)
        measure("this host", workdir)
        idle = [subprocess.Popen(["sleep", "600"]) for _ in range(EXTRA)]
        try:
            measure(f"+{EXTRA} idle", workdir)
        finally:
            for p in idle:
                p.kill()
            for p in idle:
                p.wait()


if __name__ == "__main__":
    main()
