"""A bot that slows its opponents: between its turns it burns CPU.

``burner.py burn``: at start it forks a child that spins for ever (in its cgroup, on the CPUs
it may use: sharing one with its opponents, as a match's bots do with ``affinity``); it answers
each request at once. ``burner.py work N``: the honest opponent: N rounds of fixed CPU work
(a hash chain) before each answer, so its answer's time says how much CPU it got. ``burner.py
calm``: answers at once and burns nothing (the baseline's opponent). Every request is answered
``ok <request>`` (the echo protocol of the process tests, no game)."""

from __future__ import annotations

import hashlib
import os
import sys


def main() -> None:
    mode = sys.argv[1]
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    if mode == "burn" and os.fork() == 0:  # the burner: no stdin, no stdout, just CPU
        os.close(0)
        os.close(1)
        while True:
            pass
    for raw in sys.stdin:
        line = raw.strip()
        if line.startswith("chinese-ten"):
            print(f"ready {mode}", flush=True)
        elif line == "quit":
            return
        elif line:
            digest = b""
            for _ in range(rounds):
                digest = hashlib.sha256(digest).digest()
            print(f"ok {line}", flush=True)


if __name__ == "__main__":
    main()
