"""The example bots in bots/, each run as a real subprocess and driven through scripted transcripts.

Deliberately independent of the referee package: legality is checked by the small helper below,
written straight from rules.md. Every read has a deadline so a broken bot cannot hang the suite.
"""

from __future__ import annotations

import os
import select
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import EXAMPLES

READ_TIMEOUT = 5.0
STARTUP_TIMEOUT = 20.0  # a cold JVM on a busy CI machine can be slow
RANKS = "A23456789TJQK"
SUITS = "cdhs"


# ---------------------------------------------------------------- legality, from rules.md
def sum_value(card: str) -> int:
    return RANKS.index(card[0]) + 1 if card[0] in "A23456789" else 0


def captures(card: str, target: str) -> bool:
    a, b = sum_value(card), sum_value(target)
    if a and b:
        return a + b == 10
    return card[0] == target[0]


def go_error(answer: str, hand: list[str], table: list[str]) -> str | None:
    """Why `answer` to `go hand <hand> table <table>` is illegal, or None when it is legal."""
    tokens = answer.split(" ")
    if not 1 <= len(tokens) <= 2:
        return f"garbled answer {answer!r}"
    card = tokens[0]
    if card not in hand:  # the bots must write canonical cards, so exact match
        return f"{card!r} is not in hand {hand}"
    targets = [t for t in table if captures(card, t)]
    if len(tokens) == 2:
        return None if tokens[1] in targets else f"{card} cannot capture {tokens[1]!r}"
    sweep = len(targets) == 3 and card[0] in "5TJQK" and all(t[0] == card[0] for t in targets)
    if len(targets) > 1 and not sweep:
        return f"{card} needs a target among {targets}"
    return None


def sample_legal_answers() -> None:
    """The helper itself, on a few hand-made cases (run by test_legality_helper)."""
    assert go_error("7c 3h", ["7c"], ["3h", "3s"]) is None
    assert go_error("7c", ["7c"], ["3h", "3s"]) is not None
    assert go_error("7c", ["7c"], ["3h"]) is None
    assert go_error("7c", ["7c"], ["4h"]) is None
    assert go_error("7c 4h", ["7c"], ["4h"]) is not None
    assert go_error("Kc", ["Kc"], ["Kh", "Ks", "Kd"]) is None
    assert go_error("Kc Ks", ["Kc"], ["Kh", "Ks", "Kd"]) is None
    assert go_error("Qc", ["Kc"], ["Kh"]) is not None
    assert go_error("Tc", ["Tc"], ["Th", "Ts"]) is not None
    assert go_error("Kc Kh extra", ["Kc"], ["Kh"]) is not None


def test_legality_helper() -> None:
    sample_legal_answers()


# ---------------------------------------------------------------- bot commands
def _need(tool: str) -> str:
    path = shutil.which(tool)
    if path is None:
        pytest.skip(f"{tool} is not installed")
    return path


@pytest.fixture(scope="module")
def build_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("bots")


def bot_command(kind: str, build_dir: Path) -> list[str]:
    if kind == "random":
        return [sys.executable, str(EXAMPLES / "random_bot.py")]
    if kind == "greedy":
        return [sys.executable, str(EXAMPLES / "greedy_bot.py")]
    if kind == "js":
        return [_need("node"), str(EXAMPLES / "starter.js")]
    if kind == "c":
        binary = build_dir / "starter.bin"
        if not binary.exists():
            cc = _need("cc")
            build = [
                cc,
                "-std=c99",
                "-Wall",
                "-Wextra",
                "-Werror",
                "-O2",
                "-o",
                str(binary),
                str(EXAMPLES / "starter.c"),
            ]
            subprocess.run(build, check=True, timeout=120)
        return [str(binary)]
    if kind == "java":
        java = _need("java")
        if not (build_dir / "Starter.class").exists():
            javac = _need("javac")
            build = [javac, "-d", str(build_dir), str(EXAMPLES / "Starter.java")]
            subprocess.run(build, check=True, timeout=300)
        return [java, "-cp", str(build_dir), "Starter"]
    raise ValueError(kind)


ALL_BOTS = ["random", "greedy", "js", "c", "java"]


class Bot:
    """One bot process; `ask` writes a request and returns its answer line."""

    def __init__(self, command: list[str], stderr_path: Path) -> None:
        self.stderr = stderr_path.open("wb")
        self.proc = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            start_new_session=True,
        )
        self.buffer = b""

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()

    def read_line(self, timeout: float = READ_TIMEOUT) -> str:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise AssertionError(f"no answer within {timeout} s (got {self.buffer!r})")
            chunk = os.read(fd, 4096)
            if not chunk:
                raise AssertionError(f"bot closed stdout (exit {self.proc.poll()})")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line.decode("ascii").rstrip("\r")

    def ask(self, line: str, timeout: float = READ_TIMEOUT) -> str:
        self.send(line)
        return self.read_line(timeout)

    def handshake(self) -> str:
        answer = self.ask("chinese-ten 1", STARTUP_TIMEOUT)
        assert answer.startswith("ready"), answer
        return answer

    def finish(self, *, quit_: bool = True) -> tuple[int, bytes]:
        """Send quit (or close stdin); return the exit code and anything left on stdout."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        if quit_:
            self.send("quit")
        self.proc.stdin.close()
        try:
            rc = self.proc.wait(timeout=READ_TIMEOUT)
        finally:
            self.close()
        return rc, self.buffer + self.proc.stdout.read()

    def close(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, 9)
            self.proc.wait()
        self.stderr.close()


@pytest.fixture
def start_bot(build_dir: Path, tmp_path: Path) -> Iterator:
    bots: list[Bot] = []

    def start(kind: str, *extra: str) -> Bot:
        bot = Bot(bot_command(kind, build_dir) + list(extra), tmp_path / f"{len(bots)}.stderr")
        bots.append(bot)
        return bot

    yield start
    for bot in bots:
        if bot.proc.stdin and not bot.proc.stdin.closed:
            bot.proc.stdin.close()
        bot.close()
        bot.proc.stdout.close()  # type: ignore[union-attr]


def go_line(hand: str, table: str, stock: int = 20) -> str:
    return f"go hand {hand} table {table} stock {stock} ms 1000"


def ask_go(bot: Bot, hand: str, table: str, line: str | None = None) -> str:
    answer = bot.ask(line or go_line(hand, table))
    error = go_error(answer, hand.split(), table.split())
    assert error is None, f"illegal answer {answer!r} to hand {hand} table {table}: {error}"
    return answer


# ---------------------------------------------------------------- the full transcript, every bot
@pytest.mark.process
@pytest.mark.parametrize("kind", ALL_BOTS)
def test_full_transcript(kind: str, start_bot) -> None:
    bot = start_bot(kind)
    ready = bot.handshake()
    assert len(ready.split(" ")) >= 2, "ready should carry a name"
    bot.send("hello-from-the-future x 1")  # unknown keyword: ignored, no answer
    bot.send("match id demo-17 seat 1 players 3 variant classic target 1000 names alice bob carol")
    bot.send("hand 1 dealer 0 cards 7c Kd 2h 9s 4d Qc 5h Ah layout 3h Kh 8c Jd")
    # several cards with exactly one capture target each (7c: 3h, Kd: Kh, 2h: 8c, Ah: 9s)
    ask_go(bot, "7c Kd 2h 9s 4d Qc 5h Ah", "3h Kh 8c Jd")
    bot.send("play 1 7c 3h")
    bot.send("turn 1 Ks Kh")
    bot.send("play 2 4h")
    bot.send("turn 2 6d 4h")
    # zero capture targets
    ask_go(bot, "Kd 2h 9s", "Jd 5c 4s")
    # several targets for one card (4d: 6h or 6s), keys in another order, unknown keys
    line = "go seen Ah 2c table 6h 6s Qs hand 4d 9c future 1 2 3 ms 1000 stock 17 extra"
    ask_go(bot, "4d 9c", "6h 6s Qs", line)
    # several cards with several targets each
    ask_go(bot, "4d 7h Ac", "6h 6s 3c 3d 9d 9h")
    # sweep: three Ks from the layout, the fourth K in hand
    answer = ask_go(bot, "Kc 3s", "Kh Ks Kd 4c")
    # a single card whose only legal play captures one of two
    answer = ask_go(bot, "5c", "5h 5s")
    assert answer.split(" ")[0] == "5c"
    answer = bot.ask("pick 7d from 3h 3s ms 1000")
    assert answer in ("3h", "3s"), answer
    bot.send("take 0 Qc Qd Qh Qs")
    bot.send("score 120 80 40 totals 120 80 40")
    bot.send("end totals 1010 640 480 ranks 1 2 3")
    # a second match in the same process
    bot.send("match id demo-18 seat 0 players 2 variant red-frog-black-frog target 500 names a b")
    bot.send("hand 1 dealer 0 cards 2c 8s Ts 4h 9c Jh 3d Qs layout Ad 6c Jc 7h")
    ask_go(bot, "2c 8s Ts 4h 9c Jh 3d Qs", "Ad 6c Jc 7h")
    answer = bot.ask("pick 5d from 5h 5s ms 250")
    assert answer in ("5h", "5s"), answer
    bot.send("forfeit timeout")
    rc, rest = bot.finish()
    assert rc == 0
    assert rest == b"", f"unexpected output after quit: {rest!r}"


@pytest.mark.process
@pytest.mark.parametrize("kind", ALL_BOTS)
def test_exits_on_eof(kind: str, start_bot) -> None:
    bot = start_bot(kind)
    bot.handshake()
    bot.send("match id eof-1 seat 0 players 3 variant classic target 1000 names a b c")
    rc, rest = bot.finish(quit_=False)
    assert rc == 0
    assert rest == b""


@pytest.mark.process
@pytest.mark.parametrize("kind", ALL_BOTS)
def test_crlf_lines(kind: str, start_bot) -> None:
    bot = start_bot(kind)
    assert bot.ask("chinese-ten 1\r", STARTUP_TIMEOUT).startswith("ready")
    answer = ask_go(bot, "7c 2h", "3h Qs", go_line("7c 2h", "3h Qs") + "\r")
    assert answer.split(" ")[0] in ("7c", "2h")
    rc, _ = bot.finish()
    assert rc == 0


# ---------------------------------------------------------------- greedy-bot
def greedy_answers(start_bot, variant: str, requests: list[str]) -> list[str]:
    bot = start_bot("greedy")
    bot.handshake()
    bot.send(f"match id g-1 seat 0 players 3 variant {variant} target 1000 names a b c")
    answers = [bot.ask(r) for r in requests]
    assert bot.finish()[0] == 0
    return answers


@pytest.mark.process
@pytest.mark.parametrize(
    ("variant", "hand", "table", "expected"),
    [
        # best capture: Ah+9c is 20 in classic; 2c+8s is 10 (vs 9) in red-frog-black-frog
        ("classic", "2c Ah", "9c 8s", ["Ah 9c"]),
        ("red-frog-black-frog", "Ah 2c", "9c 8s", ["2c 8s"]),
        # which five to play onto 5d: the red one in classic, the black one in RFBF
        ("classic", "5s 5h", "5d", ["5h 5d", "5h"]),
        ("red-frog-black-frog", "5h 5s", "5d", ["5s 5d", "5s"]),
        # which target: 3h scores in classic, 3s (and the black 7) in RFBF
        ("classic", "7c", "3s 3h", ["7c 3h"]),
        ("red-frog-black-frog", "7c", "3h 3s", ["7c 3s"]),
        # sweep counts all three kings: 20 beats 7h+3d = 10 in classic
        ("classic", "7h Kc", "3d Kh Ks Kd", ["Kc", "Kc Kh", "Kc Ks", "Kc Kd"]),
        # nothing captures: throw a card worth nothing
        ("classic", "Kh 9d 4c", "Qs 2s", ["4c"]),
        ("red-frog-black-frog", "4c Kh", "Qs 2s", ["Kh"]),
        # ace of spades: 30 / 50 points
        ("red-frog-black-frog", "9h 9c", "Ah As", ["9c As"]),
    ],
)
def test_greedy_best_capture(
    start_bot, variant: str, hand: str, table: str, expected: list[str]
) -> None:
    [answer] = greedy_answers(start_bot, variant, [go_line(hand, table)])
    assert go_error(answer, hand.split(), table.split()) is None
    assert answer in expected, f"{variant}: hand {hand} table {table} -> {answer}"


@pytest.mark.process
@pytest.mark.parametrize(
    ("variant", "offered", "expected"),
    [
        ("classic", "3s 3h", "3h"),
        ("red-frog-black-frog", "3h 3s", "3s"),
        ("classic", "9c 9d 9s", "9d"),
        ("red-frog-black-frog", "Ad Ah As", "As"),
    ],
)
def test_greedy_pick(start_bot, variant: str, offered: str, expected: str) -> None:
    card = {"3": "7d", "9": "Ac", "A": "9c"}[offered[0]]
    [answer] = greedy_answers(start_bot, variant, [f"pick {card} from {offered} ms 1000"])
    assert answer == expected


@pytest.mark.process
def test_greedy_is_deterministic(start_bot) -> None:
    requests = [
        go_line("4d 7h Ac 6c", "6h 6s 3c 3d 9d 9h"),
        go_line("Kh 9d 4c 4s", "Qs 2s"),
        "pick 7d from 3c 3d ms 10",
    ]
    assert greedy_answers(start_bot, "classic", requests) == greedy_answers(
        start_bot, "classic", requests
    )


# ---------------------------------------------------------------- random-bot
RANDOM_REQUESTS = [
    request
    for stock in range(20, 0, -4)  # distinct lines: the bot seeds each answer from its request
    for request in (
        go_line("Ac 2c 3c 4c 5c 6c 7c 8c", "9d 8d 7d 6d 5d 4d 3d 2d", stock),
        go_line("9s 9h 9c Ad", "Ah As Ac 2h 3h", stock),
        f"pick 7d from 3c 3d 3h ms {stock}",
        go_line("Tc Jc Qc Kc 2s 3s", "4h 5h", stock),
    )
]


def random_answers(start_bot, match_id: str, seat: int, *extra: str) -> list[str]:
    bot = start_bot("random", *extra)
    bot.handshake()
    bot.send(f"match id {match_id} seat {seat} players 3 variant classic target 1000 names a b c")
    answers = []
    for request in RANDOM_REQUESTS:
        answer = bot.ask(request)
        if request.startswith("go"):
            tokens = request.split(" ")
            hand = tokens[tokens.index("hand") + 1 : tokens.index("table")]
            table = tokens[tokens.index("table") + 1 : tokens.index("stock")]
            assert go_error(answer, hand, table) is None, (request, answer)
        answers.append(answer)
    assert bot.finish()[0] == 0
    return answers


@pytest.mark.process
def test_random_deterministic_per_match_and_seat(start_bot) -> None:
    first = random_answers(start_bot, "m-1", 2)
    assert random_answers(start_bot, "m-1", 2) == first
    assert random_answers(start_bot, "m-1", 1) != first
    assert random_answers(start_bot, "m-2", 2) != first
    assert len(set(first)) > 4, "expected varied choices"


@pytest.mark.process
def test_random_seed_option(start_bot) -> None:
    one = random_answers(start_bot, "m-1", 0, "--seed", "1")
    assert random_answers(start_bot, "other", 2, "--seed", "1") == one
    assert random_answers(start_bot, "m-1", 0, "--seed", "2") != one


@pytest.mark.process
def test_random_answer_depends_only_on_the_request(start_bot) -> None:
    """Re-asking one decision without the earlier ones gives the same answer (replay)."""
    full = random_answers(start_bot, "m-3", 1)
    bot = start_bot("random")
    bot.handshake()
    bot.send("match id m-3 seat 1 players 3 variant classic target 1000 names a b c")
    assert bot.ask(RANDOM_REQUESTS[3]) == full[3]
    assert bot.finish()[0] == 0
