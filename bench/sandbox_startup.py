"""Start-up time of a Python bot with and without the hardened sandbox.

Times spawn to first line of ``python3 -c 'print("ready x")'`` (Debian's ``/usr/bin/python3``
and ``python3`` as found on ``PATH``, e.g. a pyenv one), ``RUNS`` interleaved runs each, with
:func:`referee.bots.process.start_process`: no sandbox; sandboxed with cgroups; sandboxed with
rlimits only. Prints the median and minimum per variant, and the median of ``Process.stop``.
Needs a working sandbox (``ct-referee sandbox``); run as root, or as a user delegated a cgroup
subtree (``ct-referee sandbox --delegate USER``), for cgroups. Run as a user with a range in
``/etc/subuid``, it compares each bot on a subordinate uid of its own (mode ``auto``: a user
namespace mapped by ``newuidmap`` per bot), with cgroups where delegated and with rlimits only,
with every bot on the user's own uid (mode ``userns``, ``bot_uids: shared``).
"""

from __future__ import annotations

import dataclasses
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.folders import scratch  # noqa: E402
from referee.bots.policy import SandboxPolicy  # noqa: E402
from referee.bots.probing import capabilities  # noqa: E402
from referee.bots.process import Launcher, Process, start_process  # noqa: E402

RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 20
CODE = "print('ready x', flush=True)"


def once(argv: list[str], workdir: Path, policy: SandboxPolicy | None,
         stops: list[float]) -> float:
    t0 = time.perf_counter()
    proc: Process = start_process(argv, workdir=workdir, launcher=Launcher(policy))
    data = b""
    while b"\n" not in data:
        try:
            chunk = __import__("os").read(proc.stdout, 100)
        except BlockingIOError:
            time.sleep(0.0005)
            continue
        if not chunk:
            raise RuntimeError(f"no ready from {argv}")
        data += chunk
    dt = time.perf_counter() - t0
    t1 = time.perf_counter()
    proc.stop(0)
    stops.append(time.perf_counter() - t1)
    return dt


def main() -> None:
    if not capabilities().works:
        print(f"no sandbox here: {capabilities().summary()}")
        return
    hardened = SandboxPolicy()
    variants = {"no sandbox": None, "sandbox, cgroups": hardened,
                "sandbox, rlimits only": dataclasses.replace(hardened, cgroups=False)}
    if not capabilities().root:  # auto is a subordinate uid where there is one
        sub = "subordinate uid" if capabilities().ok("subuid") else "auto"
        delegated = any(capabilities().cgroup_ok(c) for c in ("memory", "pids", "cpu"))
        variants = {"no sandbox": None,
                    f"sandbox, {sub}" + (", cgroups" if delegated else ""): hardened}
        if delegated:  # a subtree of its user's: the same without
            variants[f"sandbox, {sub}, rlimits"] = dataclasses.replace(hardened, cgroups=False)
        variants["sandbox, shared uid"] = dataclasses.replace(hardened, mode="userns")
    pythons = ["/usr/bin/python3", "python3"]
    rows = [(py, name, policy) for py in pythons for name, policy in variants.items()]
    times: dict[tuple[str, str], list[float]] = {(py, n): [] for py, n, _ in rows}
    stops: dict[tuple[str, str], list[float]] = {(py, n): [] for py, n, _ in rows}
    with scratch(".bench-") as folder:
        for run in range(RUNS + 2):  # two warm-up rounds, interleaved runs
            for py, name, policy in rows:
                dt = once([py, "-c", CODE], folder, policy, stops[py, name])
                if run >= 2:
                    times[py, name].append(dt)
        print(f"spawn -> first line, {RUNS} runs each (ms; median, min; stop median):")
        for py, name, _ in rows:
            xs = times[py, name]
            print(f"  {py:18} {name:34} {statistics.median(xs) * 1e3:6.1f} "
                  f"{min(xs) * 1e3:6.1f}   stop {statistics.median(stops[py, name]) * 1e3:5.1f}")


if __name__ == "__main__":
    main()
