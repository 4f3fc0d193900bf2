"""How long the referee's clocks take, measured from outside: the figures the tests used to
assert on wall-clock time (tests/test_bot.py, tests/test_bot_protocol.py, tests/test_match.py)
now print here, the tests asserting what happened instead (the fault, its code, its words).

Each line: what, the limit the referee was given, the median and the largest of ``RUNS`` runs
(argument 1, default 5), in ms; mc_bot's answers over one hand (tests/test_mc_bot.py checks
its thinking budget). Run: ``.venv/bin/python bench/bot_clock.py [RUNS]``.
"""

from __future__ import annotations

import contextlib
import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from referee.bots.bot import Bot, BotError  # noqa: E402
from referee.bots.limits import Limits  # noqa: E402
from referee.bots.spawn import BotCommand  # noqa: E402
from referee.game.rules import Deal  # noqa: E402
from referee.match.play import Entrant, MatchAborted, play_match  # noqa: E402

RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 5
BOTS = ROOT / "tests" / "bots"
GO = "go hand 7c Kd table 3h stock 24 ms 1000"


def misbehave(mode: str) -> Bot:
    bot = Bot(BotCommand.of([sys.executable, str(BOTS / "misbehave.py"), mode, ""]))
    bot.start(10_000)
    return bot


def timed(what: Callable[[], object]) -> float:
    t0 = time.monotonic()
    with contextlib.suppress(BotError, MatchAborted):
        what()
    return (time.monotonic() - t0) * 1000


def line(name: str, limit_ms: float | None, runs: list[float]) -> None:
    limit = f"{limit_ms:>7.0f}" if limit_ms is not None else "      -"
    print(f"{name:<52} limit {limit} ms  median {statistics.median(runs):7.1f} ms  "
          f"max {max(runs):7.1f} ms")


def request(mode: str, ms: int) -> float:
    with misbehave(mode) as bot:
        return timed(lambda: bot.request(GO, ms))


def close(mode: str, grace_ms: int) -> float:
    bot = misbehave(mode)
    bot.request(GO, 5000)
    return timed(lambda: bot.close(grace_ms=grace_ms))


def stop_at_start_up() -> float:
    silent = Entrant("silent", (sys.executable, "-c", "import time; time.sleep(60)"))
    instant = Entrant("a", (sys.executable, str(ROOT / "bench" / "instant_bot.py")))
    stop = threading.Event()
    threading.Timer(0.3, stop.set).start()
    deals = lambda k: Deal.from_seed(2, f"t:{k}")  # noqa: E731
    limits = Limits(startup_ms=30_000, move_ms=400)
    return timed(lambda: play_match("m", [instant, silent], deals, target=100, limits=limits,
                                    stop=stop)) - 300


def mc_answers() -> list[float]:
    """bots/mc_bot.py without --max-ms (it thinks min(ms / 2, ms - 150) ms) against greedy,
    a move limit of 1000 ms: the time of each of mc's answers, as the referee recorded it."""
    bots = ROOT / "bots"
    seats = [Entrant("mc", (sys.executable, str(bots / "mc_bot.py"))),
             Entrant("greedy", (sys.executable, str(bots / "greedy_bot.py")))]
    record = play_match("m", seats, lambda k: Deal.from_seed(2, f"mc:{k}"), target=1,
                        limits=Limits(move_ms=1000))
    return [float(x) for h in record["hands"] for t in h["turns"]
            if t["seat"] == 0 for x in t.get("ms", [])]


def main() -> None:
    line("a request the bot never answers (timeout)", 300,
         [request("sleep", 300) for _ in range(RUNS)])
    line("a bot that exits leaving a child on stdout (crash)", 5000,
         [request("orphan", 5000) for _ in range(RUNS)])
    line("close of a bot that ignores quit and SIGTERM", 200,
         [close("stubborn", 200) for _ in range(RUNS)])
    line("close of a bot whose child holds its pipes", 100,
         [close("child", 100) for _ in range(RUNS)])
    line("a match stopped while a bot starts (after the stop)", 30_000,
         [stop_at_start_up() for _ in range(RUNS)])
    line("mc_bot's answers, no --max-ms (it thinks 500 ms)", 1000, mc_answers())


if __name__ == "__main__":
    main()
