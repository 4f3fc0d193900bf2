"""A bot that plays legally, then misbehaves at its Nth decision as ``mode`` says.

Usage: ``faulty.py MODE N [MARKER]``. MARKER is ignored; tests put a unique word on the command
line so they can find every process the bot left behind.
"""

import os
import signal
import subprocess
import sys
import time

from base import requests
from legal import answer, say, unheld


def misbehave(mode: str, line: str) -> None:
    if mode == "sleep":
        time.sleep(600)
    elif mode == "exit":
        sys.exit(3)
    elif mode == "unheld":
        say(unheld(line) + "\n")
    elif mode == "garbage":
        say("I think I will play the seven\n")
    elif mode == "longline":
        say("x" * 10_000_000 + "\n")
    elif mode == "stderr":
        sys.stderr.write("e" * 20_000_000)
        sys.stderr.flush()
        say(answer(line) + "\n")
        return
    elif mode == "stubborn":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        say("7c 7c 7c\n")
    elif mode == "child":
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", *sys.argv[3:]])
        os._exit(4)
    elif mode == "extra":
        say(answer(line) + "\nthinking...\n")
        return
    time.sleep(600)


def main() -> None:
    mode, at = sys.argv[1], int(sys.argv[2])
    if mode == "noready":
        time.sleep(600)
    if mode == "stubborn":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    requested = requests("faulty", prefixes=("go ", "pick "), until_quit=mode != "stubborn")
    for decisions, line in enumerate(requested, 1):
        if decisions == at:
            misbehave(mode, line)
        else:
            say(answer(line) + "\n")
    if mode == "stubborn":
        time.sleep(600)


if __name__ == "__main__":
    main()
