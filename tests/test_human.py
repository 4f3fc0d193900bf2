"""The human seat: parsers and choices in-process, and a whole hand through piped stdin."""

from __future__ import annotations

import io
import subprocess

import pytest
from rich.console import Console

from conftest import CLI, ROOT
from referee.game.cards import parse_cards
from referee.game.faults import Fault
from referee.game.rules import Move
from referee.match.human import HumanLeft, HumanPlayer, legal_moves

PLAY = [CLI, "play", "human", "python3 bots/random_bot.py", "python3 bots/greedy_bot.py",
        "--target", "1", "--seed", "3", "--sandbox", "none"]


def player(typed: str) -> tuple[HumanPlayer, io.StringIO]:
    out = io.StringIO()
    console = Console(file=out, no_color=True, width=100, highlight=False)
    return HumanPlayer("me", console=console, source=io.StringIO(typed), ascii_only=True), out


def test_legal_moves_targets_and_sweep() -> None:
    moves = legal_moves(parse_cards("8c 5s 9h"), parse_cards("2c 2d 5c 5d 5h"))
    assert moves == [Move(*parse_cards("8c 2c")), Move(*parse_cards("8c 2d")),
                     Move(parse_cards("5s")[0]), Move(parse_cards("9h")[0])]


def test_go_retries_bad_input_then_accepts_a_typed_card() -> None:
    me, out = player("\nzz\n42\nKd\n8c\n8C 2D\n")
    me.send("match id m seat 1 players 2 variant classic target 1 names a me")
    answer = me.request("go hand 8c 9h table 2c 2d stock 20 ms 1000", timeout_ms=0.001)
    assert answer.line == "8c 2d"
    text = out.getvalue()
    assert "type a number from 1 to 3" in text
    assert "you do not hold Kd" in text
    assert "8c can take 2c or 2d" in text
    assert "table 2c 2d" in text and "1  8c takes 2c" in text


def test_go_by_number_sweep_with_a_named_target_and_pick() -> None:
    me, _ = player("2\n5s 5d\n9\n4D\n")
    assert me.request("go hand 8c 9h table 2c 2d stock 20 ms 9", 9).line == "8c 2d"
    assert me.request("go hand 5s table 5c 5d 5h stock 2 ms 9", 9).line == "5s"
    assert me.request("pick 6d from 4c 4d ms 9", 9).line == "4d"


def test_end_of_input_leaves_the_match() -> None:
    me, out = player("")
    with pytest.raises(HumanLeft) as info:
        me.request("go hand 8c table stock 20 ms 9", 9)
    assert info.value.fault == "crash"
    me.forfeit(Fault.CRASH)
    assert "you left" in out.getvalue()


def test_events_are_drawn() -> None:
    me, out = player("")
    me.send("match id m seat 0 players 3 variant classic target 1000 names me bob carol")
    me.send("hand 1 dealer 0 cards 7c Kd layout Qc Qd Qh Qs")
    me.send("take 0 Qc Qd Qh Qs")
    me.send("play 1 7s 3h")
    me.send("turn 1 Ks")
    me.send("score 10 20 30 totals 10 20 30")
    me.send("end totals 10 20 30 ranks 3 2 1")
    text = out.getvalue()
    for part in ("You sit in seat 0, against bob (seat 1), carol (seat 2)", "your cards 7c Kd",
                 "you deal and take the layout's four of a kind: Qc Qd Qh Qs",
                 "bob plays 7s, takes 3h", "bob turns Ks", "hand over: you 10 (total 10)",
                 "match over: you rank 3"):
        assert part in text, text


@pytest.mark.process
def test_piped_game_plays_a_full_hand() -> None:
    typed = "hello\n0\n9z\n" + "1\n" * 40
    done = subprocess.run(PLAY, cwd=ROOT, input=typed, capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "type a number from 1 to" in out
    assert "your turn" in out and "you play" in out
    assert "hand  1 (dealer human)" in out  # the hand was played to its score
    assert "faults" in out and "crash" not in out  # the final table, nobody faulted
    assert "Traceback" not in done.stderr


@pytest.mark.process
def test_piped_game_end_of_input_forfeits_cleanly() -> None:
    done = subprocess.run(PLAY, cwd=ROOT, input="1\n", capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "you left" in done.stdout
    assert "crash (hand 1)" in done.stdout


@pytest.mark.process
def test_human_in_another_seat_and_only_one() -> None:
    cmd = [CLI, "play", "python3 bots/random_bot.py", "human", "--target", "1", "--seed", "4",
           "--sandbox", "none", "--ascii"]
    done = subprocess.run(cmd, cwd=ROOT, input="1\n" * 20, capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "You sit in seat 1" in done.stdout
    two = subprocess.run([*cmd[:3], "human", "human"], cwd=ROOT, capture_output=True, text=True,
                         timeout=60, check=False)
    assert two.returncode == 2 and "at most one seat can be human" in two.stderr


def test_the_prompt_names_the_numbers_to_choose_from() -> None:
    me, out = player("1\n1\n")
    assert me.request("go hand 8c table stock 20 ms 9", 9).line == "8c"
    assert "your move [1 or a card]: " in out.getvalue()
    assert me.request("go hand 8c 9h table 2c 2d stock 20 ms 9", 9).line == "8c 2c"
    assert "your move [1-3 or a card]: " in out.getvalue()


def test_typed_text_is_echoed_as_is() -> None:
    me, out = player("[red]x\n1\n")
    me.request("go hand 8c table stock 20 ms 9", 9)
    assert "[red]x" in out.getvalue()
