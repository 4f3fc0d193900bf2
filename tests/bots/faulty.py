"""A bot that plays legally, then misbehaves at its Nth decision as ``mode`` says.

Usage: ``faulty.py MODE N [MARKER]``. MARKER is ignored; tests put a unique word on the command
line so they can find every process the bot left behind.
"""

import os
import signal
import subprocess
import sys
import time

PARTNER = dict(zip("A23456789TJQK", "98765432ATJQK", strict=True))


def say(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def legal(line: str) -> str:
    words = line.split()
    if words[0] == "pick":
        return words[3]
    t, s = words.index("table"), words.index("stock")
    hand, table = words[2:t], words[t + 1:s]
    for card in hand:
        for target in table:
            if target[0] == PARTNER[card[0]]:
                return f"{card} {target}"
    return hand[0]


def unheld(line: str) -> str:
    words = line.split()
    t = words.index("table") if "table" in words else len(words)
    held = set(words[2:t]) | set(words[t:])
    return next(c + s for c in "A23456789TJQK" for s in "cdhs" if c + s not in held)


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
        say(legal(line) + "\n")
        return
    elif mode == "stubborn":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        say("7c 7c 7c\n")
    elif mode == "child":
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", *sys.argv[3:]])
        os._exit(4)
    elif mode == "extra":
        say(legal(line) + "\nthinking...\n")
        return
    time.sleep(600)


def main() -> None:
    mode, at = sys.argv[1], int(sys.argv[2])
    if mode == "noready":
        time.sleep(600)
    if mode == "stubborn":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    decisions = 0
    for line in sys.stdin:
        if line.startswith("chinese-ten"):
            say("ready faulty\n")
        elif line.startswith(("go ", "pick ")):
            decisions += 1
            if decisions == at:
                misbehave(mode, line)
            else:
                say(legal(line) + "\n")
        elif line.startswith("quit") and mode not in ("stubborn",):
            return
    if mode == "stubborn":
        time.sleep(600)


if __name__ == "__main__":
    main()
