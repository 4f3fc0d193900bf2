"""A bot that says ``ready`` and then misbehaves as its first argument says."""

import os
import signal
import subprocess
import sys
import time


def say(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def requests():
    """Yield each request line (``go``/``pick``), after answering the handshake."""
    for line in sys.stdin:
        if line.startswith("chinese-ten"):
            say("ready misbehave\n")
        elif line.startswith("quit"):
            return
        elif line.startswith(("go", "pick")):
            yield line.strip()


def main(mode: str, arg: str) -> None:
    if mode == "noready":
        time.sleep(60)
    elif mode == "garbage":
        say("hello referee\n")
        time.sleep(60)
    elif mode == "exit-early":
        sys.exit(5)
    elif mode == "unsolicited":
        sys.stdin.readline()
        say("ready\n7c\n")
        time.sleep(60)
    elif mode == "stubborn":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        for _ in requests():
            say("ok\n")
        time.sleep(60)
    elif mode == "child":  # a grandchild that holds stdout and stderr open
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        for _ in requests():
            say(f"child {child.pid}\n")
    for number, _ in enumerate(requests(), 1):
        if mode == "sleep":
            time.sleep(60)
        elif mode == "crash" and number == 2:
            sys.exit(3)
        elif mode == "orphan":  # exits, leaving a child that holds stdout open
            subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
            os._exit(4)
        elif mode == "longline":
            say("x" * 10_000_000)
            time.sleep(60)
        elif mode == "half":
            say("7c")
            time.sleep(60)
        elif mode == "stderr":
            sys.stderr.buffer.write(b"e" * 50_000_000)
            sys.stderr.flush()
        elif mode == "info":
            for i in range(40):
                say(f"info {i} " + "y" * (2000 if i == 0 else 0) + "\n")
        elif mode == "info-after":  # an info line after the answer, in the same write
            say(f"ok\ninfo after {number}\n")
            continue
        elif mode == "memory":
            block = bytearray(int(arg) << 20)
            block[::4096] = b"z" * len(block[::4096])
        elif mode == "bigfile":
            with open(arg, "wb") as f:
                f.write(b"f" * (2 << 20))
        elif mode == "slowread":  # stops reading its input
            time.sleep(60)
        say("ok\n")


if __name__ == "__main__":
    main(sys.argv[1], (sys.argv[2:] or [""])[0])
