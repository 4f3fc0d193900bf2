"""mc-bot (bots/mc_bot.py): protocol v1 transcripts against the real process, and strength.

A small referee of its own plays hands with :mod:`referee.game.rules`: the bot's seat is asked over
stdin/stdout (read with select-based deadlines), the other seats move at random. Every answer is
applied with :meth:`Hand.play` / :meth:`Hand.pick`, which raise on anything illegal.
"""

from __future__ import annotations

import os
import random
import select
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import EXAMPLES, tournament_yaml
from referee.game.cards import DECK, Card, format_cards
from referee.game.rules import TURNS_PER_HAND, Deal, Hand, Variant

BOT = EXAMPLES / "mc_bot.py"
sys.path.insert(0, str(EXAMPLES))

import mc_bot  # noqa: E402


@dataclass
class Seen:
    """What a hand's requests showed, to check a scenario was really exercised."""

    multi_target: bool = False
    sweep: bool = False
    no_capture: bool = False
    pick: bool = False
    take: bool = False


class Driver:
    """The bot as a subprocess, with deadlines on every read."""

    def __init__(self, *args: str) -> None:
        self.stderr = tempfile.TemporaryFile()  # noqa: SIM115 (closed in close())
        self.proc = subprocess.Popen(
            [sys.executable, str(BOT), *args], cwd="/", stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=self.stderr)
        self.buf = b""

    def log(self) -> str:
        """What the bot wrote to stderr so far."""
        self.stderr.seek(0)
        return self.stderr.read().decode(errors="replace")

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()

    def read(self, timeout: float) -> str | None:
        """One line, or ``None`` if none is complete within ``timeout`` seconds."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        end = time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = end - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return None
            chunk = os.read(fd, 4096)
            if not chunk:
                return None
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode().rstrip("\r")

    def assert_silent(self, wait: float = 0.0) -> None:
        """No unsolicited line (the referee's ``garbled`` check before each request)."""
        assert self.read(wait) is None

    def ask(self, line: str, ms: int) -> str:
        """Sends a request; returns the answer (waited for ``ms`` and 2 s more)."""
        self.assert_silent()
        self.send(line)
        answer = self.read(ms / 1000 + 2.0)
        assert answer is not None, f"no answer to {line!r}"
        return answer

    def handshake(self) -> None:
        self.send("chinese-ten 1")
        assert self.read(10.0) == "ready mc-bot 1.0"

    def quit(self) -> None:
        self.send("quit")
        assert self.proc.wait(timeout=5) == 0

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.stderr.close()


@pytest.fixture
def bot_args() -> list[str]:
    return ["--max-ms", "40"]


@pytest.fixture
def driver(bot_args: list[str]):
    d = Driver(*bot_args)
    d.handshake()
    yield d
    d.close()


def match_line(seat: int, players: int, variant: Variant, mid: str = "t-1") -> str:
    names = " ".join(f"p{i}" for i in range(players))
    return (f"match id {mid} seat {seat} players {players} variant {variant.value} "
            f"target 1000 names {names}")


def play_hand(d: Driver, hand: Hand, seat: int, k: int = 1, ms: int = 300,
              rng: random.Random | None = None, extra: str = "") -> Seen:
    """Plays ``hand`` to the end with the bot in ``seat``, checking every answer."""
    rng = rng or random.Random(k)
    seen = Seen()
    fmt = format_cards
    d.send(f"hand {k} dealer {hand.dealer} cards {fmt(hand.deal.hands[seat])} "
           f"layout {fmt(hand.deal.layout)}")
    sent = 0
    while True:
        for e in hand.events[sent:]:
            if e.kind == "take":
                seen.take = True
                d.send(f"take {e.seat} {fmt(e.captured)}")
            else:
                d.send(f"{e.kind} {e.seat} {fmt((e.card, *e.captured))}")
        sent = len(hand.events)
        if hand.is_over():
            break
        if hand.to_move != seat:
            if hand.pick_card is not None:
                hand.pick(rng.choice(hand.pick_options))
            else:
                hand.play(*rng.choice(hand.legal_moves()))
            continue
        if hand.pick_card is not None:
            seen.pick = True
            answer = d.ask(f"pick {hand.pick_card} from {fmt(hand.pick_options)} "
                                 f"ms {ms}{extra}", ms)
            hand.pick(Card.parse(answer))
        else:
            found = [hand.targets(c) for c in hand.hands[seat]]
            seen.no_capture |= not any(found)
            seen.multi_target |= any(len(f) > 1 and not hand._sweeps(c, f)
                                     for c, f in zip(hand.hands[seat], found, strict=True))
            seen.sweep |= any(hand._sweeps(c, f)
                              for c, f in zip(hand.hands[seat], found, strict=True))
            answer = d.ask(f"go hand {fmt(hand.hands[seat])} table {fmt(hand.table)} "
                                 f"stock {len(hand.stock)} ms {ms}{extra}", ms)
            parts = [Card.parse(t) for t in answer.split()]
            assert 1 <= len(parts) <= 2, answer
            hand.play(*parts)
    scores = hand.scores()
    d.send(f"score {' '.join(map(str, scores))} totals {' '.join(map(str, scores))}")
    d.assert_silent(0.05)
    assert "greedily" not in d.log(), "the bot lost track of the hand"
    return seen


def crafted(players: int, fixed: dict[str, list[str]], seed: int = 0) -> Deal:
    """A deal with some cards fixed (``hand0``.., ``layout``, ``stock`` prefixes), the rest
    shuffled in."""
    used = {Card.parse(c) for cs in fixed.values() for c in cs}
    rest = [c for c in DECK if c not in used]
    random.Random(seed).shuffle(rest)
    size = TURNS_PER_HAND // players

    def fill(key: str, n: int) -> list[Card]:
        got = [Card.parse(c) for c in fixed.get(key, [])]
        while len(got) < n:
            got.append(rest.pop())
        return got

    hands = [fill(f"hand{s}", size) for s in range(players)]
    return Deal.from_cards(hands, fill("layout", 4), fill("stock", 24))


@pytest.mark.process
def test_handshake_unknown_lines_and_quit() -> None:
    d = Driver()
    try:
        d.handshake()
        d.send("hello there 1 2 3")
        d.send(match_line(0, 3, Variant.CLASSIC) + " colour blue")
        d.assert_silent(0.2)
        d.quit()
    finally:
        d.close()


@pytest.mark.process
def test_several_targets_and_a_pick(driver: Driver) -> None:
    # 7h has three 3s to choose from; the first card turned (7c) then has two or three targets.
    deal = crafted(3, {"hand0": ["7h"], "layout": ["3c", "3d", "3s", "9c"],
                       "stock": ["7c", "7d"]}, seed=1)
    driver.send(match_line(0, 3, Variant.CLASSIC))
    seen = play_hand(driver, Hand(deal, dealer=2), seat=0)
    assert seen.multi_target and seen.pick


@pytest.mark.process
def test_sweep_two_players_red_frog(driver: Driver) -> None:
    deal = crafted(2, {"hand1": ["5s", "Ks"], "layout": ["5c", "5d", "5h", "Kc"]}, seed=2)
    driver.send(match_line(1, 2, Variant.RED_FROG))
    seen = play_hand(driver, Hand(deal, dealer=0, variant=Variant.RED_FROG), seat=1)
    assert seen.sweep


@pytest.mark.process
def test_dealer_take_and_no_capture_four_players(driver: Driver) -> None:
    # The dealer (the bot) takes four queens: the first player finds an empty table.
    deal = crafted(4, {"layout": ["Qc", "Qd", "Qh", "Qs"]}, seed=3)
    driver.send(match_line(0, 4, Variant.CLASSIC))
    seen = play_hand(driver, Hand(deal, dealer=0), seat=0)
    assert seen.take
    # Seat 1 moves first on an empty table; the bot (seat 1 here) cannot capture.
    deal = crafted(4, {"layout": ["Kc", "Kd", "Kh", "Ks"]}, seed=4)
    driver.send(match_line(1, 4, Variant.RED_FROG, mid="t-2"))
    seen = play_hand(driver, Hand(deal, dealer=0, variant=Variant.RED_FROG), seat=1)
    assert seen.take and seen.no_capture


@pytest.mark.process
def test_second_match_after_end(driver: Driver) -> None:
    driver.send(match_line(2, 3, Variant.CLASSIC, mid="m-1"))
    play_hand(driver, Hand(Deal.from_seed(3, "a"), dealer=0), seat=2, k=1)
    play_hand(driver, Hand(Deal.from_seed(3, "b"), dealer=1), seat=2, k=2)
    driver.send("end totals 300 200 220 ranks 1 3 2")
    driver.send(match_line(0, 2, Variant.RED_FROG, mid="m-2"))
    play_hand(driver, Hand(Deal.from_seed(2, "c"), dealer=0, variant=Variant.RED_FROG), seat=0)
    driver.send("end totals 100 118 ranks 2 1")
    driver.quit()


def test_the_thinking_budget_leaves_the_referee_its_margin() -> None:
    """The bot thinks min(ms / 2, ms - 150) ms from when it read the request, never less than
    none, capped by --max-ms; with --playouts, as long as the playouts take. (How long its
    answers take from outside: bench/bot_clock.py.)"""
    free, capped = mc_bot.Bot(None, 1), mc_bot.Bot(40, 1)
    assert free.budget(1000, 2.0) == 2.5  # half of a long limit
    assert free.budget(300, 2.0) == 2.15  # a short one: 150 ms kept for the pipes
    assert free.budget(100, 2.0) == 2.0  # shorter than the margin: answer at once
    assert capped.budget(1000, 2.0) == 2.04
    assert mc_bot.Bot(None, 1, playouts=25).budget(1000, 2.0) == float("inf")


@pytest.mark.process
def test_random_hands_all_sizes(driver: Driver) -> None:
    rng = random.Random(5)
    for i, (players, variant) in enumerate(
            [(2, Variant.CLASSIC), (3, Variant.RED_FROG), (4, Variant.CLASSIC)]):
        seat = rng.randrange(players)
        driver.send(match_line(seat, players, variant, mid=f"r-{i}"))
        hand = Hand(Deal.random(players, rng), dealer=rng.randrange(players), variant=variant)
        play_hand(driver, hand, seat, ms=200, rng=rng)
        driver.send("end totals 0 0 0 0 ranks 1 1 1 1")


@pytest.mark.process
def test_stateless_go_is_answered_legally(driver: Driver) -> None:
    # No hand line was seen: the bot falls back to the request alone.
    driver.send(match_line(0, 3, Variant.CLASSIC))
    answer = driver.ask("go hand 7h 5s Kd table 3c 3d 5c stock 24 ms 300", 300)
    assert answer in ("7h 3c", "7h 3d", "5s", "5s 5c")
    answer = driver.ask("pick 7c from 3c 3d ms 300", 300)
    assert answer in ("3c", "3d")
    assert "greedily" in driver.log()


def test_in_process_mc_beats_random() -> None:
    """Duplicate deals, 3 players: mc in each seat in turn against two random players."""
    mc_points, random_points = [], []
    for i in range(3):
        deal = Deal.from_seed(3, f"strength-{i}")
        for mc_seat in range(3):
            hand = Hand(deal, dealer=i % 3)
            brain, rng = mc_bot.Brain(seed=i), random.Random(i)
            while not hand.is_over():
                far = time.perf_counter() + 5.0
                if hand.to_move == mc_seat and hand.pick_card is not None:
                    hand.pick(brain.choose_pick(hand, far, max_worlds=30))
                elif hand.to_move == mc_seat:
                    hand.play(*brain.choose_move(hand, far, max_worlds=30))
                elif hand.pick_card is not None:
                    hand.pick(rng.choice(hand.pick_options))
                else:
                    hand.play(*rng.choice(hand.legal_moves()))
            scores = hand.scores()
            mc_points.append(scores[mc_seat])
            random_points += [s for seat, s in enumerate(scores) if seat != mc_seat]
    mc_mean = sum(mc_points) / len(mc_points)
    random_mean = sum(random_points) / len(random_points)
    assert mc_mean > random_mean + 25, (mc_mean, random_mean)


# -- --playouts: a fixed amount of work, the same tournament every time -------------------------


@pytest.mark.process
@pytest.mark.slow
def test_playouts_make_a_tournament_reproducible_and_resumable(tmp_path: Path) -> None:
    import json
    import threading

    from referee.tournament.run import Reporter, load_config, read_deal_secret, run

    bots = Path(__file__).resolve().parent.parent / "bots"
    path = tournament_yaml(tmp_path, {
        "mc": f"{sys.executable} {bots}/mc_bot.py --playouts 25",
        "mc-b": f"{sys.executable} {bots}/mc_bot.py --playouts 40",
        "greedy": f"{sys.executable} {bots}/greedy_bot.py",
    }, players=2, target=300, sandbox="none", concurrency=2, limits={"move_ms": 5000})

    def outcome(out: Path, secret: bytes | None, stop_after: int | None = None) -> None:
        stop = threading.Event()

        class Stopper(Reporter):
            def match_done(self, spec: object, result: object, done: int,
                           table: object) -> None:
                if stop_after is not None and done >= stop_after:
                    stop.set()

        run(load_config(path, output=out), deal_secret=secret, reporter=Stopper(), stop=stop)

    def results(out: Path) -> list[str]:
        return sorted((out / "results.jsonl").read_text().splitlines())

    outcome(tmp_path / "a", None)
    secret = read_deal_secret(tmp_path / "a" / ".deal-secret")
    outcome(tmp_path / "b", secret)  # played again, with the same deals
    outcome(tmp_path / "c", secret, stop_after=2)  # interrupted...
    assert len(results(tmp_path / "c")) < len(results(tmp_path / "a"))
    outcome(tmp_path / "c", None)  # ...and resumed
    standings = (tmp_path / "a" / "standings.json").read_text()
    assert len(json.loads(standings)["standings"]) == 3
    for other in ("b", "c"):
        assert results(tmp_path / other) == results(tmp_path / "a")
        assert (tmp_path / other / "standings.json").read_text() == standings


@pytest.mark.process
def test_playouts_and_max_ms_exclude_each_other() -> None:
    bot = str(Path(__file__).resolve().parent.parent / "bots" / "mc_bot.py")
    for args in (["--playouts", "5", "--max-ms", "10"], ["--playouts", "0"]):
        done = subprocess.run([sys.executable, bot, *args], capture_output=True, text=True,
                              timeout=30, check=False, stdin=subprocess.DEVNULL)
        assert done.returncode == 2 and "Traceback" not in done.stderr


@pytest.mark.process
def test_without_the_engine_it_says_what_to_do(tmp_path: Path) -> None:
    """Run where the package is not importable (a copy outside the repository, ``python -S``:
    no site-packages, as a sandbox with a Python that lacks ct-referee), the bot exits with one
    line saying which Python to use, not a traceback."""
    copy = tmp_path / "mc_bot.py"
    copy.write_text((EXAMPLES / "mc_bot.py").read_text())
    done = subprocess.run([sys.executable, "-S", "-I", str(copy)], input="", text=True,
                          capture_output=True, timeout=30, cwd=tmp_path)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert "cannot import ct-referee's rules engine" in done.stderr
    assert ".venv/bin/activate" in done.stderr
