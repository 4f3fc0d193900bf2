"""A hostile bot: runs one attack of referee/bots/probes/attacks.py (``argv[1]``) before ``ready``,
writes its outcome to stderr (the referee keeps it), then plays its first legal card. ``argv[2]``,
if given, is the CPU quota the ``cpu`` attack judges itself by (``CT_PROBE_CPUS``: a
tournament's bots get no environment of their own)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))))
from referee.bots.probes import attacks

name = sys.argv[1]
if len(sys.argv) > 2:
    os.environ["CT_PROBE_CPUS"] = sys.argv[2]
got = {**attacks.ATTACKS, "burn": attacks.burn, "orphan": attacks.orphan}[name]()
print(f"ALLOWED {name}: {got}" if got else f"refused {name}", file=sys.stderr, flush=True)
PARTNER = dict(zip("A23456789TJQK", "98765432ATJQK", strict=True))
for line in sys.stdin:
    words = line.split()
    if not words or words[0] == "quit":
        break
    if words[0] == "chinese-ten":
        print("ready attacker", flush=True)
    elif words[0] == "pick":
        print(words[3], flush=True)
    elif words[0] == "go":
        hand = words[2:words.index("table")]
        table = words[words.index("table") + 1:words.index("stock")]
        move = next((f"{c} {t}" for c in hand for t in table if t[0] == PARTNER[c[0]]), hand[0])
        print(move, flush=True)
