"""A bot that leaves a detached child behind: a new session and a double fork, so the child is in
neither the bot's process group nor its parent's care. The child says so on the bot's stdout
(``child <pid> dumpable <0 or 1>``), then holds on: it sleeps (``sleep``, the default) or,
with ``busy``, touches MiB after MiB of memory so that dying takes it a while; ``hidden`` is
``busy`` made non-dumpable first (most of its ``/proc`` files then show another owner).

Usage: ``escaper.py [sleep|busy|hidden]``; the bot says ``ready escaper`` once the child is out."""

import os
import sys
import time


def child(mode: str) -> None:
    os.setsid()
    if os.fork():
        os._exit(0)
    while os.getppid() != 1:  # until the middle process is gone (the bot is pid 1 inside)
        time.sleep(0.001)
    dumpable = 1
    if mode == "hidden":
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE, 0
        dumpable = libc.prctl(3, 0, 0, 0, 0)  # PR_GET_DUMPABLE
    sys.stdout.write(f"child {os.getpid()} dumpable {dumpable}\n")
    sys.stdout.flush()
    os.close(1)
    if mode in ("busy", "hidden"):
        held = []
        for _ in range(256):
            held.append(bytearray(1 << 20))
    time.sleep(600)
    os._exit(0)


def main() -> None:
    mode = sys.argv[1] if len(sys.argv) > 1 else "sleep"
    pid = os.fork()
    if pid == 0:
        child(mode)
    os.waitpid(pid, 0)  # the first fork exits at once: the child is an orphan
    for line in sys.stdin:
        if line.startswith("chinese-ten"):
            sys.stdout.write("ready escaper\n")
            sys.stdout.flush()
        elif line.startswith("quit"):
            return


if __name__ == "__main__":
    main()
