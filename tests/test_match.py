"""Whole matches: the match loop with in-process players (results, variants), and with real bot
processes where they are the point (faults, fallback play, no process left)."""

from __future__ import annotations

import sys
import time
import uuid
from pathlib import Path

import pytest

from conftest import ROOT, Scripted, ScriptedEntrant, bot, live_processes
from referee.bots.limits import Limits
from referee.game.cards import DECK
from referee.game.rules import Deal, Variant, rank
from referee.match.play import Entrant, play_match

INSTANT = (sys.executable, str(ROOT / "bench" / "instant_bot.py"))
LIMITS = Limits(startup_ms=2000, move_ms=400)


def deals(players: int, seed: str = "t") -> object:
    return lambda k: Deal.from_seed(players, f"{seed}:{k}")


def replay_totals(record: dict) -> list[int]:
    """Totals recomputed by the rules from the record's deals and moves."""
    from referee.records.positions import ReplayedTurn, Scored, positions

    totals: list[int] = []
    for pos in positions(record):  # type: ignore[arg-type]
        if isinstance(pos, ReplayedTurn):
            assert pos.seat == pos.record["seat"]
            got = [str(c) for e in (pos.play, pos.turned) for c in e.captured]
            assert got == pos.record["capture"] + pos.record["turn_capture"]
        elif isinstance(pos, Scored):
            assert pos.hand.is_over() and pos.hand.scores() == pos.scores
            totals = pos.totals
    return totals


@pytest.mark.process
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


@pytest.mark.parametrize("players", [2, 3, 4])
def test_in_process_players_play_a_whole_match(players: int) -> None:
    seats = [Scripted([]) for _ in range(players)]
    entrants = [ScriptedEntrant(f"s{i}", "-", make=lambda seat=seat: seat) for i, seat in
                enumerate(seats)]
    record = play_match("m1", entrants, deals(players), target=300, bot_id="b1")
    assert record["faults"] == [] and max(record["totals"]) >= 300
    assert replay_totals(record) == record["totals"]
    assert record["ranks"] == rank(record["totals"])
    for i, seat in enumerate(seats):
        assert seat.lines[0].startswith(f"match id b1 seat {i} players {players} ")
        assert seat.lines[-2:] == [f"end totals {' '.join(map(str, record['totals']))} ranks "
                                   f"{' '.join(map(str, record['ranks']))}", "(closed)"]


def test_both_variants_score_their_own_totals() -> None:
    entrants = [ScriptedEntrant(f"s{i}", "-") for i in range(3)]
    classic = play_match("m", entrants, deals(3), target=1)
    frog = play_match("m", entrants, deals(3), target=1, variant=Variant.RED_FROG)
    assert sum(classic["hands"][0]["scores"]) == 240
    assert sum(frog["hands"][0]["scores"]) == 218


@pytest.mark.parametrize(("answer", "fault"), [("I pass", "garbled"), ("unheld", "illegal")])
def test_a_bad_answer_is_a_fault_and_the_fallback_plays_on(answer: str, fault: str) -> None:
    """The second seat's first answer is bad: it is sent ``forfeit``, closed, and its seat is
    played by the fallback to the end; it ranks last."""
    first = Deal.from_seed(2, "t:1")
    if answer == "unheld":
        answer = str(next(c for c in DECK if c not in first.hands[1]))
    bad = Scripted([answer])
    entrants = [ScriptedEntrant("a", "-"), ScriptedEntrant("bad", "-", make=lambda: bad)]
    record = play_match("m", entrants, lambda k: first if k == 1 else Deal.from_seed(2, k),
                        target=100)
    assert [(f["seat"], f["fault"]) for f in record["faults"]] == [(1, fault)]
    assert bad.lines[-2:] == [f"forfeit {fault}", "(closed)"]
    assert record["ranks"][1] == 2 and replay_totals(record) == record["totals"]
    by = [t["by"] for h in record["hands"] for t in h["turns"] if t["seat"] == 1]
    assert by[0] == "fallback" and set(by) == {"fallback"}


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


@pytest.mark.process
@pytest.mark.parametrize(("mode", "at", "fault"), FAULTS)
def test_a_misbehaving_bot_is_a_recorded_fault(mode: str, at: int, fault: str,
                                               tmp_path: Path) -> None:
    marker = f"ct-test-{uuid.uuid4().hex}"
    bad = Entrant("bad", bot("faulty", mode, str(at), marker))
    entrants = [Entrant("a", INSTANT), bad, Entrant("c", INSTANT)]
    record = play_match("m", entrants, deals(3), target=200, limits=LIMITS,
                        logs_dir=tmp_path)
    assert [(f["seat"], f["fault"]) for f in record["faults"]] == [(1, fault)]
    assert record["faults"][0]["detail"]
    assert record["ranks"][1] == 3, "a faulting bot ranks below every other"
    assert replay_totals(record) == record["totals"]
    by = [t["by"] for h in record["hands"] for t in h["turns"] if t["seat"] == 1]
    assert by[-1] == "fallback"
    deadline = time.monotonic() + 2
    while live_processes(holding=marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert live_processes(holding=marker) == [], "a process the bot started outlived its match"


@pytest.mark.process
def test_stderr_flood_is_capped_and_does_not_block(tmp_path: Path) -> None:
    flood = Entrant("flood", bot("faulty", "stderr", "1"))
    record = play_match("m", [flood, Entrant("b", INSTANT)], deals(2), target=100,
                        limits=Limits(move_ms=5000, stderr_cap=100_000), logs_dir=tmp_path)
    assert record["faults"] == []
    size = (tmp_path / "0-flood.stderr").stat().st_size
    assert 100_000 <= size < 100_200


def test_missing_command_is_a_clear_error() -> None:
    from referee.bots.process import BotCommandError

    with pytest.raises(BotCommandError, match="no-such-bot"):
        play_match("m", [Entrant("x", ("./no-such-bot",)), ScriptedEntrant("b", "-")], deals(2),
                   target=100, limits=LIMITS)


@pytest.mark.process
def test_stop_during_start_up_aborts_within_a_moment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C in a tournament sets the stop event: a match whose bot is slow to say ``ready``
    (here: never) ends at once, not after the start-up limit, and leaves no process: the
    bot's start-up ends as stopped, not timed out."""
    import threading

    from referee.bots.bot import Bot, BotStartupError
    from referee.game.faults import Reason
    from referee.match.play import MatchAborted

    ended: list[Reason | None] = []
    real_start = Bot.start

    def start(self: Bot, *args: object, **kwargs: object) -> object:
        try:
            got = real_start(self, *args, **kwargs)  # type: ignore[arg-type]
        except BotStartupError as e:
            ended.append(e.code)
            raise
        ended.append(None)
        return got

    monkeypatch.setattr(Bot, "start", start)
    marker = f"ct-test-{uuid.uuid4().hex}"
    silent = Entrant("silent", (sys.executable, "-c", "import time; time.sleep(60)", marker))
    stop = threading.Event()
    threading.Timer(0.3, stop.set).start()
    with pytest.raises(MatchAborted, match="match m stopped"):
        play_match("m", [Entrant("a", INSTANT), silent], deals(2), target=100,
                   limits=Limits(startup_ms=30_000, move_ms=400), stop=stop)
    assert Reason.STOPPED in ended and Reason.NO_ANSWER not in ended, ended
    assert live_processes(holding=marker) == []


def fallback_moves(record: dict, seat: int) -> list[tuple[str, ...]]:
    return [(t["play"], *t["capture"]) for h in record["hands"]
            for t in h["turns"] if t["seat"] == seat and t["by"] == "fallback"]


def test_the_fallback_is_keyed_by_a_secret_not_the_match_id() -> None:
    """The same match, the same deals: the fallback's moves follow its key (a tournament's deal
    secret), which an opponent does not know, and the records verify without it."""
    from referee.records.verify import verify_record

    def once(key: bytes | None) -> dict:
        entrants = [ScriptedEntrant("a", "-"),
                    ScriptedEntrant("bad", "-", make=lambda: Scripted(["I pass"]))]
        return play_match("r1-g001-s01", entrants, deals(2), target=200,  # type: ignore[arg-type]
                          fallback_key=key)

    one, again, other = once(b"secret one"), once(b"secret one"), once(b"secret two")
    moves = fallback_moves(one, 1)
    assert len(moves) > 10
    assert fallback_moves(again, 1) == moves  # a match played again: the same choices
    assert fallback_moves(other, 1) != moves
    assert fallback_moves(once(None), 1) != moves  # no key: a fresh random one
    for record in (one, other):
        assert verify_record(record) == []
        assert replay_totals(record) == record["totals"]
