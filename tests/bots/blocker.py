"""A deterministic bot (the first legal move, ``legal.py``) that, the first time any copy of it
is asked to move, writes its parent's pid to ``FOLDER/blocked`` and waits until ``FOLDER/go``
exists: a test then knows a match is running, and in which process.

Run: python3 blocker.py FOLDER
"""

import os
import sys
import time
from pathlib import Path

import legal
from base import requests


def block_once(folder: Path) -> None:
    """Blocks the first caller (across processes) until ``folder/go`` appears."""
    try:
        fd = os.open(folder / "blocked", os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return
    os.write(fd, f"{os.getppid()}\n".encode())
    os.close(fd)
    while not (folder / "go").exists():
        time.sleep(0.02)


def main() -> None:
    folder = Path(sys.argv[1])
    for line in requests("blocker"):
        block_once(folder)
        legal.say(legal.answer(line) + "\n")


if __name__ == "__main__":
    main()
