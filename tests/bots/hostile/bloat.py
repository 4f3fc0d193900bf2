"""A hostile bot that bloats its match record: 32 ``info`` lines of 1 KiB of control characters
(each six bytes in JSON) with every answer, then its first capture or first card."""

import sys

BLOAT = ("info " + "\x01" * 1019 + "\n") * 32
PARTNER = dict(zip("A23456789TJQK", "98765432ATJQK", strict=True))
for line in sys.stdin:
    words = line.split()
    if not words or words[0] == "quit":
        break
    if words[0] == "chinese-ten":
        print("ready bloat", flush=True)
    elif words[0] == "pick":
        sys.stdout.write(BLOAT)
        print(words[3], flush=True)
    elif words[0] == "go":
        hand = words[2:words.index("table")]
        table = words[words.index("table") + 1:words.index("stock")]
        sys.stdout.write(BLOAT)
        print(next((f"{c} {t}" for c in hand for t in table if t[0] == PARTNER[c[0]]),
                   hand[0]), flush=True)
