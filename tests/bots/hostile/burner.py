"""A bot that slows its opponents: it burns CPU while they need it.

Every request is answered ``ok <request>`` (the echo protocol of the process tests, no game:
in a real match each answer is a garbled fault, and the fallback plays on). What each process
got of the CPU is written to stderr as it goes (``CLOCK_MONOTONIC`` is one clock for every
process of the machine, sandboxed or not), so a test can tell how the CPU was shared between
two bots whatever else the machine runs.

- ``burner.py burn``: at start it forks a child that spins for ever (in its cgroup, on the CPUs
  it may use: sharing one with its opponents, as a match's bots do with ``affinity``), writing
  ``burn <monotonic s> <its CPU s>`` every 2 ms it runs; the bot answers each request at once.
- ``burner.py hold MS``: the same child, and the bot holds its own ``ready`` back ``MS`` ms: it
  burns at its start-up's full weight while the others start.
- ``burner.py work N``: the honest opponent: N rounds of fixed CPU work (a hash chain) before
  each answer, then ``work <from> <to> <CPU s>`` (monotonic seconds, its CPU between).
- ``burner.py startwork N``: the honest opponent at start-up: N rounds before ``ready``, then
  ``start <from> <to> <CPU s>``.
- ``burner.py calm``: answers at once and burns nothing.
"""

from __future__ import annotations

import hashlib
import os
import sys
import time


def chain(rounds: int) -> None:
    digest = b""
    for _ in range(rounds):
        digest = hashlib.sha256(digest).digest()


def timed(what: str, rounds: int) -> None:
    """``rounds`` of work, then one line on stderr: when it ran and the CPU it took."""
    start, cpu = time.monotonic(), time.process_time()
    chain(rounds)
    os.write(2, f"{what} {start:.6f} {time.monotonic():.6f} "
                f"{time.process_time() - cpu:.6f}\n".encode())


def burn() -> None:
    """Spins for ever, saying every 2 ms it runs how much CPU it has had."""
    os.close(0)
    os.close(1)
    last = 0.0
    while True:
        now = time.monotonic()
        if now - last >= 0.002:
            os.write(2, f"burn {now:.6f} {time.process_time():.6f}\n".encode())
            last = now


def main() -> None:
    mode = sys.argv[1]
    number = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    if mode in ("burn", "hold") and os.fork() == 0:
        burn()
    for raw in sys.stdin:
        line = raw.strip()
        if line.startswith("chinese-ten"):
            if mode == "hold":
                time.sleep(number / 1000)
            elif mode == "startwork":
                timed("start", number)
            print(f"ready {mode}", flush=True)
        elif line == "quit":
            return
        elif line:
            if mode == "work":
                timed("work", number)
            print(f"ok {line}", flush=True)


if __name__ == "__main__":
    main()
