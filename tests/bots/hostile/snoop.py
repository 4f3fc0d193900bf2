"""A hostile bot that looks at every path its command names (``snoop.py PATH...``) before
``ready``: for each, ``SAW <path>: <what>`` on stderr (a folder's entries, a file's first line,
``/proc``'s process count) or ``NOTHING <path>``; then it plays as ``bench/instant_bot.py``
(which the tests copy beside it)."""

import os
import sys

import instant_bot


def look(path: str) -> str | None:
    try:
        if os.path.isdir(path):
            names = sorted(os.listdir(path))
            if path.rstrip("/") == "/proc":
                return f"{sum(n.isdigit() for n in names)} processes"
            return " ".join(names[:20]) or None
        with open(path, errors="replace") as f:
            return f.readline().strip() or "(empty)"
    except OSError:
        return None


for arg in sys.argv[1:]:
    seen = look(arg)
    print(f"SAW {arg}: {seen}" if seen else f"NOTHING {arg}", file=sys.stderr, flush=True)
instant_bot.main()  # then it plays like the instant bot (copied beside it)
