"""Whole matches with real bot processes: results, faults, fallback play, no process left."""

from __future__ import annotations

import os
import sys
import time
import uuid
from pathlib import Path

import pytest

from referee.match import Entrant, Limits, play_match
from referee.rules import Deal, Variant, rank

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
INSTANT = (sys.executable, str(ROOT / "bench" / "instant_bot.py"))
LIMITS = Limits(startup_ms=2000, move_ms=400)


def deals(players: int, seed: str = "t") -> object:
    return lambda k: Deal.from_seed(players, f"{seed}:{k}")


def processes_with(marker: str) -> list[int]:
    """Pids of live processes whose command line holds ``marker``."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        if marker.encode() in cmdline and stat.split(") ")[-1][0] != "Z":
            found.append(int(pid))
    return found


def replay_totals(record: dict) -> list[int]:
    """Totals recomputed by the rules from the record's deals and moves."""
    from referee.positions import Played, Scored, positions

    totals: list[int] = []
    for pos in positions(record):  # type: ignore[arg-type]
        if isinstance(pos, Played):
            assert pos.seat == pos.record["seat"]
            got = [str(c) for e in (pos.play, pos.turned) for c in e.captured]
            assert got == pos.record["capture"] + pos.record["turn_capture"]
        elif isinstance(pos, Scored):
            assert pos.hand.is_over() and pos.hand.scores() == pos.scores
            totals = pos.totals
    return totals


@pytest.mark.parametrize("players", [2, 3, 4])
def test_instant_bots_play_a_whole_match(players: int, tmp_path: Path) -> None:
    entrants = [Entrant(f"b{i}", INSTANT) for i in range(players)]
    record = play_match("m1", entrants, deals(players), target=300, limits=LIMITS,
                        logs_dir=tmp_path / "logs")
    assert record["faults"] == []
    assert max(record["totals"]) >= 300
    assert replay_totals(record) == record["totals"]
    assert record["ranks"] == rank(record["totals"])
    assert all(t["by"] == "bot" for h in record["hands"] for t in h["turns"])
    assert sorted(p.name for p in (tmp_path / "logs").iterdir()) == [
        f"{i}-b{i}.stderr" for i in range(players)]


def test_both_variants_score_their_own_totals() -> None:
    entrants = [Entrant(f"b{i}", INSTANT) for i in range(3)]
    classic = play_match("m", entrants, deals(3), target=1, limits=LIMITS)
    frog = play_match("m", entrants, deals(3), target=1, limits=LIMITS,
                      variant=Variant.RED_FROG)
    assert sum(classic["hands"][0]["scores"]) == 240
    assert sum(frog["hands"][0]["scores"]) == 218


# mode, decision at which it misbehaves, fault expected
FAULTS = [
    ("sleep", 3, "timeout"),
    ("exit", 2, "crash"),
    ("unheld", 2, "illegal"),
    ("garbage", 1, "garbled"),
    ("longline", 2, "garbled"),
    ("extra", 2, "garbled"),
    ("noready", 1, "startup"),
    ("stubborn", 2, "garbled"),
    ("child", 2, "crash"),
]


@pytest.mark.parametrize(("mode", "at", "fault"), FAULTS)
def test_a_misbehaving_bot_is_a_recorded_fault(mode: str, at: int, fault: str,
                                               tmp_path: Path) -> None:
    marker = f"ct-test-{uuid.uuid4().hex}"
    bad = Entrant("bad", (sys.executable, str(HERE / "bots" / "faulty.py"), mode, str(at),
                          marker))
    entrants = [Entrant("a", INSTANT), bad, Entrant("c", INSTANT)]
    start = time.monotonic()
    record = play_match("m", entrants, deals(3), target=200, limits=LIMITS,
                        logs_dir=tmp_path)
    elapsed = time.monotonic() - start
    assert [(f["seat"], f["fault"]) for f in record["faults"]] == [(1, fault)]
    assert record["faults"][0]["detail"]
    assert record["ranks"][1] == 3, "a faulting bot ranks below every other"
    assert replay_totals(record) == record["totals"]
    by = [t["by"] for h in record["hands"] for t in h["turns"] if t["seat"] == 1]
    assert by[-1] == "fallback"
    # The referee waited at most one limit (start-up or move) plus a margin.
    assert elapsed < 2.0 + 3.0
    deadline = time.monotonic() + 2
    while processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_with(marker) == [], "a process the bot started outlived its match"


def test_stderr_flood_is_capped_and_does_not_block(tmp_path: Path) -> None:
    flood = Entrant("flood", (sys.executable, str(HERE / "bots" / "faulty.py"), "stderr", "1"))
    record = play_match("m", [flood, Entrant("b", INSTANT)], deals(2), target=100,
                        limits=Limits(move_ms=5000, stderr_cap=100_000), logs_dir=tmp_path)
    assert record["faults"] == []
    size = (tmp_path / "0-flood.stderr").stat().st_size
    assert 100_000 <= size < 100_200


def test_missing_command_is_a_clear_error() -> None:
    from referee.process import BotCommandError

    with pytest.raises(BotCommandError, match="no-such-bot"):
        play_match("m", [Entrant("x", ("./no-such-bot",)), Entrant("b", INSTANT)], deals(2),
                   target=100, limits=LIMITS)


def test_stop_during_start_up_aborts_within_a_moment() -> None:
    """Ctrl-C in a tournament sets the stop event: a match whose bot is slow to say ``ready``
    (here: never) ends at once, not after the start-up limit, and leaves no process."""
    import threading

    from referee.match import MatchAborted

    marker = f"ct-test-{uuid.uuid4().hex}"
    silent = Entrant("silent", (sys.executable, "-c", "import time; time.sleep(60)", marker))
    stop = threading.Event()
    threading.Timer(0.3, stop.set).start()
    start = time.monotonic()
    with pytest.raises(MatchAborted):
        play_match("m", [Entrant("a", INSTANT), silent], deals(2), target=100,
                   limits=Limits(startup_ms=30_000, move_ms=400), stop=stop)
    assert time.monotonic() - start < 3
    assert processes_with(marker) == []
