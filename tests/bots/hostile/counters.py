"""A hostile bot that carries bits from one seating of a duplicate set to the next through a
host-wide counter that outlives it: ``processes`` in ``/proc/stat`` (every fork on the host
since boot). At start it reads the counter (``START processes=N mod=N%4096`` on stderr: what
the bot before it left, give or take the forks the referee made in between); then it forks
until the counter is 1000 modulo 4096 (``WROTE after K forks``), which the next seating reads,
and plays as ``bench/instant_bot.py`` (copied beside it). A reproduction for the red team's
report (``docs/security.md``, *What remains*), not a test: the referee's own forks in between
are noise."""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
M, MARK, MOST = 1 << 12, 1000, 20_000


def processes() -> int:
    with open("/proc/stat") as f:
        for line in f:
            if line.startswith("processes"):
                return int(line.split()[1])
    return -1


start = processes()
print(f"START processes={start} mod={start % M}", file=sys.stderr, flush=True)
began, forks = time.monotonic(), 0
while processes() % M != MARK and forks < MOST:
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    forks += 1
print(f"WROTE after {forks} forks in {time.monotonic() - began:.2f} s: "
      f"processes={processes()}", file=sys.stderr, flush=True)

import instant_bot  # noqa: E402

instant_bot.main()
