"""Referee overhead per decision, next to a bare pipe round trip to the same kind of process.

Plays matches between three instant bots (``bench/instant_bot.py``, sandbox off) and divides the
wall time by the number of decisions asked; then, in the same run, times a bare echo round trip
(write a line, read a line) to a Python process of the same kind. The last line reads
``overhead: <X> x raw pipe round trip (<a> us vs <b> us per decision)``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from referee.bots.limits import Limits  # noqa: E402
from referee.game.rules import Deal  # noqa: E402
from referee.match.play import Entrant, play_match  # noqa: E402

ECHO = "import sys\nfor line in sys.stdin:\n    sys.stdout.write(line)\n    sys.stdout.flush()\n"
BOT = (sys.executable, str(ROOT / "bench" / "instant_bot.py"))


def referee_us(matches: int) -> tuple[float, float]:
    """Microseconds per decision over whole matches, and per decision excluding start-up."""
    entrants = [Entrant(f"instant{i}", BOT) for i in range(3)]
    total = decisions = 0.0
    for m in range(matches):
        start = time.perf_counter()
        record = play_match(f"bench-{m}", entrants, lambda k, m=m: Deal.from_seed(3, f"{m}:{k}"),
                            limits=Limits(move_ms=5000))
        total += time.perf_counter() - start
        decisions += sum(len(t.get("ms", [])) for h in record["hands"] for t in h["turns"])
    return total / decisions * 1e6, decisions


def play_only_us(matches: int) -> float:
    """Microseconds per decision counting only the decisions themselves (no start-up)."""
    from referee.match import play as match_module

    times: list[float] = []
    decisions = 0

    class Timing(match_module.Observer):
        def hand_started(self, number: int, hand: object) -> None:
            times.append(time.perf_counter())

        def hand_ended(self, number: int, scores: list[int], totals: list[int]) -> None:
            times.append(time.perf_counter())

    entrants = [Entrant(f"instant{i}", BOT) for i in range(3)]
    spent = 0.0
    for m in range(matches):
        times.clear()
        record = play_match(f"bench-{m}", entrants, lambda k, m=m: Deal.from_seed(3, f"{m}:{k}"),
                            limits=Limits(move_ms=5000), observer=Timing())
        spent += sum(times[i + 1] - times[i] for i in range(0, len(times), 2))
        decisions += sum(len(t.get("ms", [])) for h in record["hands"] for t in h["turns"])
    return spent / decisions * 1e6


def pipe_us(rounds: int) -> float:
    """Microseconds per bare round trip to an echoing Python process: one ``os.write`` of the
    line, then ``os.read`` until the echoed newline (the least a referee could do)."""
    proc = subprocess.Popen([sys.executable, "-c", ECHO], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, bufsize=0)
    assert proc.stdin is not None and proc.stdout is not None
    out, inp = proc.stdout.fileno(), proc.stdin.fileno()
    line = b"go hand 7c Kd 2h 9s 4d Qc 5h Ah table 3h Kh 8c Jd stock 24 ms 1000\n"

    def once() -> None:
        os.write(inp, line)
        got = os.read(out, 4096)
        while not got.endswith(b"\n"):
            got += os.read(out, 4096)

    for _ in range(200):
        once()
    start = time.perf_counter()
    for _ in range(rounds):
        once()
    spent = time.perf_counter() - start
    proc.stdin.close()
    proc.wait()
    return spent / rounds * 1e6


def main() -> None:
    matches = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    whole, decisions = referee_us(matches)
    print(f"{matches} matches, {decisions:.0f} decisions: {whole:.1f} us per decision "
          "including bot start-up")
    a = play_only_us(matches)
    b = pipe_us(20000)
    print(f"overhead: {a / b:.2f} x raw pipe round trip ({a:.1f} us vs {b:.1f} us per decision)")


if __name__ == "__main__":
    main()
