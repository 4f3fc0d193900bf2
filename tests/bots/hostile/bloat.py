"""A hostile bot that bloats its match record: 32 ``info`` lines of 1 KiB of control characters
(each six bytes in JSON) with every answer, then the answer ``bench/instant_bot.py`` gives (its
first capture or first card)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))
import instant_bot

BLOAT = ("info " + "\x01" * 1019 + "\n") * 32
for line in sys.stdin:
    words = line.split()
    if not words or words[0] == "quit":
        break
    if words[0] == "chinese-ten":
        print("ready bloat", flush=True)
        continue
    reply = instant_bot.answer(line)
    if reply is not None:
        sys.stdout.write(BLOAT)
        print(reply, flush=True)
