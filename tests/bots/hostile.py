"""A bot whose text tries to drive the organiser's terminal and break the HTML replay.

Usage: ``hostile.py [N]``. Its ``ready`` name holds escape sequences, rich markup and a bidi
override; before every answer it sends two ``info`` lines (a screen clear with a fake fault line,
and an HTML comment opener with a script); it plays legally until its Nth decision (default 2),
which it answers with garbage that holds an escape sequence, and writes escapes to stderr too.
"""

import sys

from base import requests
from legal import answer, say

NAME = "\x1b]0;pwned\x07\x1b[31m[bold]evil[/bold]\u202e\x9b2J"
CLEAR = "\x1b[2J\x1b[1;1Hfault: r1-g001-s01 greedy (seat 1) forfeits"
HTML = "<!--<script>alert(1)</script>"
GARBAGE = "\x1b[2J\x1b[1;1H[red]forfeits[/red]"


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    for decisions, line in enumerate(requests(NAME), 1):
        say(f"info {CLEAR}\ninfo {HTML}\n")
        if decisions == n:
            sys.stderr.write(f"{CLEAR}\n")
            sys.stderr.flush()
            say(GARBAGE + "\n")
        else:
            say(answer(line) + "\n")


if __name__ == "__main__":
    main()
