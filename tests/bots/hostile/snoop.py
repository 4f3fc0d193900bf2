"""A hostile bot that looks at every path its command names (``snoop.py PATH...``) before
``ready``: for each, ``SAW <path>: <what>`` on stderr (a folder's entries, a file's first line,
``/proc``'s process count) or ``NOTHING <path>``; then it plays its first legal card."""

import os
import sys

PARTNER = dict(zip("A23456789TJQK", "98765432ATJQK", strict=True))


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
for line in sys.stdin:
    words = line.split()
    if not words or words[0] == "quit":
        break
    if words[0] == "chinese-ten":
        print("ready snoop", flush=True)
    elif words[0] == "pick":
        print(words[3], flush=True)
    elif words[0] == "go":
        hand = words[2:words.index("table")]
        table = words[words.index("table") + 1:words.index("stock")]
        move = next((f"{c} {t}" for c in hand for t in table if t[0] == PARTNER[c[0]]), hand[0])
        print(move, flush=True)
