"""The conformance checker behind ``ct-referee check``: a bot driven through scripted situations.

:func:`run_check` starts the bot, plays it through five short matches on hand-built deals
against scripted opponents (seeded random legal moves), and returns a :class:`CheckReport`:
one :class:`StepResult` per checked situation, plus timings and, if asked, the transcript.
The deals are built so that each asserted situation comes up at a known point whatever the bot
plays: its first ``go`` where every card has two targets, a ``pick``, a layout three of a kind
swept by the fourth card, the dealer's four of a kind, a hand where nothing can capture, an empty
table, both variants, 2, 3 and 4 players, a new ``match`` after ``end``, and ``quit``.

Every line sent is made by :mod:`referee.protocol.wire`, exactly as the referee writes it, and every
answer is judged by the rules engine, exactly as a match judges it. Rendering is the CLI's job.
"""

from __future__ import annotations

import random
import re
import signal
import statistics
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from referee.bots.bot import (
    Answer,
    Bot,
    BotCrash,
    BotError,
    BotGarbled,
    BotTimeout,
)
from referee.bots.limits import Limits, SandboxMode
from referee.bots.process import Launcher, stderr_tail
from referee.bots.snapshot import Sealed
from referee.bots.spawn import BotCommand
from referee.game.cards import DECK, Card, CardError
from referee.game.faults import Fault, Reason
from referee.game.rules import TURNS_PER_HAND, Deal, Hand, IllegalMoveError, Match, Move, Variant
from referee.protocol import narration
from referee.protocol import wire as protocol

PASS, FAIL, SKIP = "pass", "fail", "skip"
QUIT_GRACE_MS = 2000
"""How long a bot has to exit after ``quit``."""

HINT_FLUSH = "flush stdout after each line (the answer only came out when the bot exited)"
HINT_NEWLINE = "end every line with a newline (\\n), and flush"
HINT_READY = "print `ready <name>` after reading `chinese-ten 1`, and flush"
HINT_STDERR = "log to stderr instead: stdout carries answers only (and `info ...` lines)"
HINT_NOT_HELD = "you played a card not in your hand"
HINT_DEBUG = ("that is a debug line on stdout, read as your answer: write it to stderr (kept in "
              "the logs), or begin it with `info ` (a comment the replay shows)")
HINT_DEBUG_BETWEEN = ("that is a debug line on stdout, sent between requests: write it to stderr "
                      "(kept in the logs), or begin it with `info ` (a comment the replay shows)")
_DEBUG = re.compile(r"^\W*(debug|dbg|log|trace|warn(ing)?|error|note)\b", re.IGNORECASE)


def _garbled_hint(text: str, hint: str, *, debug: str = HINT_DEBUG) -> str:
    """``hint``, or ``debug`` for a line that looks like a debug line."""
    return debug if _DEBUG.match(text) else hint
HINT_CASE = "write cards as Ts/Ah (rank A 2-9 T J Q K, then suit c d h s in lower case)"
HINT_QUIT = "exit when you read `quit` (and at the end of input)"
HINT_AFTER_END = "keep reading after `end`: another `match` line may follow"
_TIMED_OUT = (Reason.NO_ANSWER, Reason.PARTIAL_LINE, Reason.NOT_READING)
"""Start-up error codes of a bot that did not say ``ready`` in time."""
_STOPPED = (Reason.EXITED, Reason.CLOSED_OUTPUT, Reason.CLOSED_INPUT)
"""Start-up error codes of a bot that stopped before ``ready``."""


@dataclass
class StepResult:
    """One checked situation: passed, failed (with what and why) or not reached."""

    title: str
    status: str = PASS
    note: str = ""
    """Short summary (the answer given, the time taken, an exit code)."""
    sent: str | None = None
    received: str | None = None
    expected: str | None = None
    hint: str | None = None
    warnings: list[str] = field(default_factory=list)
    stderr: list[str] = field(default_factory=list)
    """The last lines the bot wrote to stderr, when it failed."""

    @property
    def ok(self) -> bool:
        """Whether the step passed."""
        return self.status == PASS


@dataclass
class CheckReport:
    """Everything a check found; ``ok`` only when every step passed."""

    command: str
    sandbox: SandboxMode
    name: str | None = None
    steps: list[StepResult] = field(default_factory=list)
    startup_ms: float | None = None
    answer_ms: list[float] = field(default_factory=list)
    exit_code: int | None = None
    transcript: list[str] = field(default_factory=list)
    """Every line, ``> `` to the bot, ``< `` from it, ``# `` a comment of the checker."""

    @property
    def ok(self) -> bool:
        """Whether every step passed."""
        return bool(self.steps) and all(s.ok for s in self.steps)

    @property
    def median_ms(self) -> float | None:
        """Median answer time."""
        return statistics.median(self.answer_ms) if self.answer_ms else None

    @property
    def slowest_ms(self) -> float | None:
        """Slowest answer time."""
        return max(self.answer_ms) if self.answer_ms else None


class _Failed(Exception):
    """A request went wrong; carries the failed step's details. The bot must be restarted."""

    def __init__(self, step: StepResult, fault: Fault = Fault.ILLEGAL) -> None:
        super().__init__(step.title)
        self.step = step
        self.fault = fault


# -- the scripted situations ------------------------------------------------------------------

Adapt = Callable[[Move], Sequence[str]]
"""Given the bot's first move (its ``go`` in the first turn of hand 1, before any card is
turned), the cards to put on top of the stock (turned first)."""


@dataclass(frozen=True)
class _Mark:
    """A situation asserted at a known point: the first request of ``kind`` in ``hand``, or,
    with ``card``, the ``go`` the bot answers with that card."""

    title: str
    hand: int
    kind: str = "go"
    card: str | None = None


@dataclass(frozen=True)
class _Scenario:
    title: str
    players: int
    variant: Variant
    seat: int
    target: int
    deals: tuple[Callable[[], Deal], ...]
    marks: tuple[_Mark, ...]
    adapt: Adapt | None = None


def _deal(players: int, layout: str, seats: dict[int, str], top: str, seed: str) -> Deal:
    """A deal with the given layout, the given seats' cards and the first stock cards; every
    other card shuffled (seeded) into the other seats and the rest of the stock."""
    fixed = [Card.parse(t) for t in " ".join([layout, *seats.values(), top]).split()]
    rest = [c for c in DECK if c not in fixed]
    random.Random(seed).shuffle(rest)
    size = TURNS_PER_HAND // players
    hands: list[list[str] | list[Card]] = []
    for s in range(players):
        if s in seats:
            hands.append(seats[s].split())
        else:
            hands.append(rest[:size])
            del rest[:size]
    return Deal.from_cards(hands, layout.split(), [*top.split(), *rest])


def _pick_top(move: Move) -> Sequence[str]:
    # Layout 2c 2d 4c 4d. Whatever the bot did, the turned card finds two targets.
    return ["6d"] if move.target is not None and Card(move.target).rank == 1 else ["8d"]


SCENARIOS: tuple[_Scenario, ...] = (
    _Scenario(
        "match 1: 3 players, classic", 3, Variant.CLASSIC, seat=1, target=1,
        deals=(lambda: _deal(3, "2c 2d 4c 4d", {1: "8c 8d 8h 8s 6c 6d 6h 6s"}, "", "c1"),),
        marks=(_Mark("go with several targets (every card in hand has two)", 1),)),
    _Scenario(
        "match 2 (a new match after end): 4 players, classic", 4, Variant.CLASSIC, seat=1,
        target=1,
        deals=(lambda: _deal(4, "2c 2d 4c 4d", {1: "8c 8h 6c 6h 9c Jh"}, "8d 6d", "c2"),),
        marks=(_Mark("first go of a new match", 1),
               _Mark("pick: the turned card has two targets", 1, "pick")),
        adapt=_pick_top),
    _Scenario(
        "match 3: 2 players, red-frog-black-frog", 2, Variant.RED_FROG, seat=1, target=1,
        deals=(lambda: _deal(2, "5c 5d 5h Kc", {1: "5s 2c 3d 4h 6s 7c 8d 9h Jc Qd As Ts"}, "",
                             "c3"),),
        marks=(_Mark("sweep: 5s takes the layout's three 5s", 1, card="5s"),)),
    _Scenario(
        "match 4: 2 players, classic, two or more hands", 2, Variant.CLASSIC, seat=0, target=241,
        deals=(lambda: _deal(2, "Qc Qd Qh Qs", {}, "", "c4a"),
               lambda: _deal(2, "Kc Kd Kh Ks", {}, "", "c4b")),
        marks=(_Mark("you deal: `take` of the layout's four queens, then play on", 1),
               _Mark("empty table after the other dealer's `take` (`table stock 24`)", 2))),
    _Scenario(
        "match 5: 4 players, red-frog-black-frog", 4, Variant.RED_FROG, seat=1, target=1,
        deals=(lambda: _deal(4, "9c Jc Qc Kc", {1: "2c 3c 4c 5c 6c 7c"}, "", "c5"),),
        marks=(_Mark("no capture possible: answer a card alone", 1),)),
)


STEPS: tuple[str, ...] = (
    "start-up: `ready <name>`",
    *(title for sc in SCENARIOS
      for title in (*(m.title for m in sc.marks), f"{sc.title}: played to `end`")),
    "quit: the bot exits",
)
"""Every step a check reports, in order: each exactly once, whatever fails."""


# -- the checker ------------------------------------------------------------------------------


class _Conversation:
    """The conversation with the bot under check: its process (a fresh one after a failure),
    the transcript, start-up and quit, each request and, when one fails, the diagnosis of what
    the bot did instead (a step of :data:`STEPS` to report)."""

    def __init__(self, command: str | Sequence[str], *, move_ms: int, startup_ms: int,
                 launcher: Launcher, workdir: Path | None, report: CheckReport,
                 on_step: Callable[[StepResult], None], sealed: Sealed | None = None) -> None:
        self.command = command
        self.sealed = sealed
        self.launcher = launcher
        self.move_ms = move_ms
        self.startup_ms = startup_ms
        self.workdir = workdir
        self.report = report
        self.on_step = on_step
        self.tmp = tempfile.TemporaryDirectory(prefix="ct-check-")
        self.runs = 0
        self.bot: Bot | None = None
        self.stderr_path = Path(self.tmp.name, "stderr-0")
        self.last_sent = ""
        self.answered = 0
        self.warned: set[str] = set()
        self.ended = 0
        """Matches this process has seen end."""
        self.pending_warnings: list[str] = []
        self.asking: _Mark | None = None
        """The situation the pending request asserts, if any (a failure is that step)."""

    # Plumbing.

    def add(self, step: StepResult) -> None:
        self.report.steps.append(step)
        self.on_step(step)

    def log(self, prefix: str, line: str) -> None:
        self.report.transcript.append(f"{prefix} {line}")

    def spawn(self) -> Bot:
        self.stderr_path = Path(self.tmp.name, f"stderr-{self.runs}")
        self.runs += 1
        self.ended = 0
        return Bot(BotCommand.of(self.command, workdir=self.workdir,
                                 stderr_path=self.stderr_path, launcher=self.launcher,
                                 sealed=self.sealed))

    def stderr_tail(self, lines: int = 6) -> list[str]:
        return stderr_tail(self.stderr_path, lines)

    def send(self, line: str) -> None:
        assert self.bot is not None
        self.log(">", line)
        self.last_sent = line
        self.bot.send(line)

    def close(self) -> None:
        if self.bot is not None:
            self.bot.close()
            self.bot = None

    # Start-up and quit.

    def start(self, title: str) -> StepResult | None:
        """Starts a fresh bot; returns a failed step (titled ``title``, not yet added) unless
        it says ``ready``."""
        bot = self.bot = self.spawn()
        self.log(">", protocol.HELLO)
        t0 = time.monotonic()
        try:
            name = bot.start(self.startup_ms)
        except BotError as err:
            ms = (time.monotonic() - t0) * 1000
            step = StepResult(title, FAIL, sent=protocol.HELLO,
                              expected=f"`ready <name>` within {self.startup_ms} ms",
                              hint=HINT_READY)
            if err.code in _TIMED_OUT:
                late = bot.drain(QUIT_GRACE_MS, quit=True)
                step.received = f"nothing within {ms:.0f} ms"
                if late.strip():  # not as if on time: it came out only when asked to quit
                    step.received += f"; {late.strip().splitlines()[0]!r} came out at `quit`"
                if late.startswith("ready"):
                    step.hint = HINT_FLUSH if "\n" in late else HINT_NEWLINE
            else:
                step.received = err.detail
                if err.code in (Reason.NOT_READY, Reason.LONG_LINE):
                    step.hint = f"{HINT_READY}; {HINT_STDERR}"
                elif err.code in _STOPPED:
                    step.hint = f"it stopped before `ready`: see its stderr; {HINT_READY}"
            step.stderr = self.stderr_tail()
            self.close()
            return step
        ms = (time.monotonic() - t0) * 1000
        self.log("<", f"ready {name}".rstrip())
        if self.report.startup_ms is None:
            self.report.startup_ms = ms
            self.report.name = name
        return None

    def quit(self) -> None:
        bot = self.bot
        assert bot is not None
        self.log(">", "quit")
        t0 = time.monotonic()
        bot.close(grace_ms=QUIT_GRACE_MS)
        ms = (time.monotonic() - t0) * 1000
        self.bot = None
        code = bot.returncode
        self.report.exit_code = code
        step = StepResult("quit: the bot exits")
        if code is not None and code < 0:
            step.status, step.sent = FAIL, "quit"
            step.received = (f"still running after {QUIT_GRACE_MS} ms (killed)"
                             if code == -signal.SIGKILL else f"killed by signal {-code}")
            step.expected = "the process exits"
            step.hint = HINT_QUIT
        else:
            step.note = f"exit code {code} after {ms:.0f} ms"
            if code:
                step.warnings.append(f"exit code {code}: exit with 0 after `quit`")
        self.add(step)

    # Requests.

    def request(self, line: str) -> Answer:
        assert self.bot is not None
        prev = self.last_sent
        try:
            answer = self.bot.request(line, self.move_ms)
        except BotGarbled as err:
            if err.code == Reason.UNSOLICITED:  # found before the request was written
                raise _Failed(StepResult(
                    "", FAIL, sent=prev, received=err.quoted,
                    expected=f"nothing until the next request ({line.split()[0]})",
                    hint=_garbled_hint(err.quoted or "", HINT_STDERR, debug=HINT_DEBUG_BETWEEN)),
                    Fault.GARBLED) from None
            self.log(">", line)
            raise _Failed(StepResult("", FAIL, sent=line, received=err.detail,
                                     expected="one line under 4 KiB", hint=HINT_STDERR),
                          Fault.GARBLED) from None
        except BotTimeout:
            self.log(">", line)
            raise _Failed(self.diagnose_timeout(line), Fault.TIMEOUT) from None
        except BotCrash as err:
            self.log(">", line)
            hint = "the bot stopped: see its stderr"
            if self.answered == 0 and self.ended:
                hint = f"{HINT_AFTER_END}; {hint}"
            raise _Failed(StepResult("", FAIL, sent=line, received=err.detail,
                                     expected="an answer", hint=hint), Fault.CRASH) from None
        self.log(">", line)
        self.last_sent = line
        for info in answer.info:
            self.log("<", f"info {info}".rstrip())
        self.log("<", answer.line)
        self.report.answer_ms.append(answer.ms)
        self.answered += 1
        self.note_case(answer.line)
        return answer

    def diagnose_timeout(self, line: str) -> StepResult:
        assert self.bot is not None
        step = StepResult("", FAIL, sent=line, expected=f"an answer line within {self.move_ms} ms")
        extra = max(500, min(self.move_ms, 3000))
        late = self.bot.drain(extra)
        if "\n" in late:
            step.received = f"{late.splitlines()[0]!r}, too late (up to {extra} ms after)"
            step.hint = "answer within the request's `ms`"
            return step
        after = self.bot.drain(QUIT_GRACE_MS, quit=True)
        text = late + after
        if "\n" in text:
            step.received = f"nothing; {text.splitlines()[0]!r} came out at `quit`"
            step.hint = HINT_FLUSH
        elif text:
            step.received = f"{text[:80]!r} with no newline"
            step.hint = HINT_NEWLINE
        else:
            step.received = "nothing"
            step.hint = ("answer every `go` and `pick` with one line, and flush "
                         "(read stdin line by line; do not wait for more input)")
        return step

    def note_case(self, text: str) -> None:
        """Warns, once per kind (``10``, letter case), about cards not written as ``Ts``."""
        try:
            canonical = " ".join(str(Card.parse(t)) for t in text.split())
        except CardError:
            return
        if text == canonical:
            return
        kind = "ten" if "10" in text else "case"
        if kind not in self.warned:
            self.warned.add(kind)
            self.pending_warnings.append(
                f"{text!r} accepted, but {HINT_CASE}: {canonical!r}")


class _BotChecker(_Conversation):
    """Drives one bot through the scripted situations and judges its every answer."""

    def run(self) -> None:
        """Every step of :data:`STEPS`, each reported once: start-up, each scenario's
        situations and its `end`, quit. After any failure (start-up included) the next
        scenario starts a fresh process; only if a fresh process does not start either are the
        remaining steps skipped."""
        failed = self.start("start-up: `ready <name>`")
        if failed is not None:
            self.add(failed)
        else:
            step = StepResult("start-up: `ready <name>`", note=f"{self.report.name!r} in "
                              f"{self.report.startup_ms:.0f} ms")
            if not self.report.name:
                step.warnings.append("no name given: `ready <name>` names your bot in the "
                                     "records")
            self.add(step)
        stuck = False  # a fresh process did not start: nothing more can be checked
        for n, sc in enumerate(SCENARIOS, 1):
            if self.bot is None and not stuck:
                self.log("#", "fresh process after the failure above")
                failed = self.start(f"{sc.title}: played to `end`")
                if failed is not None:
                    stuck = True
                    failed.note = "a fresh process did not start"
                    for mark in sc.marks:
                        self.add(StepResult(mark.title, SKIP, note="not run"))
                    self.add(failed)
                    continue
            if stuck:
                for mark in sc.marks:
                    self.add(StepResult(mark.title, SKIP, note="not run: the bot does not start"))
                self.add(StepResult(f"{sc.title}: played to `end`", SKIP,
                                    note="not run: the bot does not start"))
                continue
            self.scenario(n, sc)
        if self.bot is None and not stuck:
            self.log("#", "fresh process for quit")
            stuck = self.start("quit: the bot exits") is not None
        if self.bot is not None:
            self.quit()
        else:
            self.add(StepResult("quit: the bot exits", SKIP,
                                note="not run: the bot does not start"))

    def scenario(self, n: int, sc: _Scenario) -> None:
        self.log("#", sc.title)
        self.asking = None
        self.answered = 0
        pending = list(sc.marks)
        match = Match(sc.players, variant=sc.variant, target=sc.target)
        names = [("bot" if s == sc.seat else f"scripted{s}") for s in range(sc.players)]
        rng = random.Random(f"check:{n}")
        try:
            self.tell([narration.match_line(f"check-{n}", sc.seat, players=sc.players,
                                            variant=sc.variant, target=sc.target,
                                            names=names)], sc.seat)
            while not match.is_over():
                k = match.hand_number
                deal = sc.deals[k - 1]() if k <= len(sc.deals) else Deal.from_seed(
                    sc.players, f"check:{n}:{k}")
                hand = match.new_hand(deal)
                self.tell(narration.hand_cues(k, hand), sc.seat)
                adapt = sc.adapt if k == 1 else None
                while not hand.is_over():
                    hand = self.play_turn(sc, k, hand, pending, rng, adapt)
                    adapt = None
                score = match.finish_hand(hand)
                self.tell([narration.score_cue(score, match.totals)], sc.seat)
            self.tell([narration.end_cue(match.totals, match.ranks())], sc.seat)
            self.ended += 1
        except _Failed as failed:
            step = failed.step
            mark, self.asking = self.asking, None  # the situation being asked, if any
            step.title = mark.title if mark else f"{sc.title}: played to `end`"
            if mark:
                pending.remove(mark)
            step.stderr = self.stderr_tail()
            step.warnings = self.take_warnings()
            if self.bot is not None:
                self.send(protocol.format_forfeit(failed.fault))
            self.close()
            if mark is not None:
                self.add(step)
            for m in pending:
                self.add(StepResult(m.title, SKIP, note="not reached"))
            self.add(step if mark is None else  # else the failure is that step
                     StepResult(f"{sc.title}: played to `end`", SKIP, note="not reached"))
            return
        for m in pending:  # cannot happen with these deals; reported rather than hidden
            self.add(StepResult(m.title, FAIL, expected="this situation",
                                received="it did not come up"))
        self.add(StepResult(f"{sc.title}: played to `end`", note=f"{match.hand_number - 1} "
                            f"hand(s), {self.answered} answers", warnings=self.take_warnings()))

    def take_warnings(self) -> list[str]:
        out, self.pending_warnings = self.pending_warnings, []
        return out

    def tell(self, lines: Iterable[narration.Line], seat: int) -> None:
        """Sends the bot, sitting in ``seat``, the lines it receives."""
        for line in lines:
            if line.for_seat(seat):
                self.send(line.text)

    def play_turn(self, sc: _Scenario, k: int, hand: Hand, pending: list[_Mark],
                  rng: random.Random, adapt: Adapt | None) -> Hand:
        """One turn as :func:`referee.protocol.narration.turn_cues` tells it: the bot answers its
        requests, the scripted seats choose seeded random legal moves. Returns the hand, a new
        one when ``adapt`` put other cards on top of the stock after the bot's first move."""
        cues = narration.turn_cues(hand)
        while (cue := next(cues, None)) is not None:
            if isinstance(cue, narration.Line):
                self.tell([cue], sc.seat)
            elif cue.seat != sc.seat:
                if cue.kind == "go":
                    hand.play(*rng.choice(hand.legal_moves()))
                else:
                    hand.pick(rng.choice(hand.pick_options))
            elif cue.kind == "go":
                move = self.bot_go(cue, k, hand, pending)
                if adapt is not None:  # the bot has not seen the stock: deal it anew
                    top = [Card.parse(t) for t in adapt(move)]
                    d = hand.deal
                    stock = top + [c for c in d.stock if c not in top]
                    hand = Hand(Deal(d.hands, d.layout, tuple(stock)), dealer=hand.dealer,
                                variant=hand.variant)
                    cues = narration.turn_cues(hand)
                    next(cues)  # the same go, answered
                hand.play(*move)
            else:
                self.bot_pick(cue, k, hand, pending)
        return hand

    def bot_go(self, ask: narration.Ask, k: int, hand: Hand, pending: list[_Mark]) -> Move:
        """Asks the bot's move and judges it (not applied); marks the step it asserts."""
        line = ask.line(self.move_ms)
        mark = next((m for m in pending if m.hand == k and m.kind == "go" and m.card is None),
                    None)
        self.asking = mark
        answer = self.request(line)
        move = _judge_go(hand, line, answer.line)
        self.asking = None
        if mark is None:
            mark = next((m for m in pending if m.hand == k and m.card is not None
                         and Card.parse(m.card) == move.card), None)
        if mark is not None:
            pending.remove(mark)
            self.add(StepResult(mark.title, note=f"{line}  →  {answer.line}  "
                                f"({answer.ms:.0f} ms)", warnings=self.take_warnings()))
        return move

    def bot_pick(self, ask: narration.Ask, k: int, hand: Hand, pending: list[_Mark]) -> None:
        """Asks the bot's pick, judges it and applies it; marks the step it asserts."""
        line = ask.line(self.move_ms)
        mark = next((m for m in pending if m.hand == k and m.kind == "pick"), None)
        self.asking = mark
        answer = self.request(line)
        try:
            hand.pick(protocol.parse_pick(answer.line))
        except (protocol.GarbledError, IllegalMoveError) as err:
            hint = "answer one of the cards listed after `from`, alone"
            if len(answer.line.split()) > 2:
                hint = f"{hint}; {HINT_STDERR}"
            hint = _garbled_hint(answer.line, hint)
            raise _Failed(StepResult(
                "", FAIL, sent=line, received=answer.line, note=str(err), hint=hint,
                expected="one of the cards after `from`"),
                Fault.GARBLED if isinstance(err, protocol.GarbledError) else Fault.ILLEGAL
            ) from None
        self.asking = None
        if mark is not None:
            pending.remove(mark)
            self.add(StepResult(mark.title, note=f"{line}  →  {answer.line}",
                                warnings=self.take_warnings()))


def _judge_go(hand: Hand, line: str, text: str) -> Move:
    """The bot's answer to ``go`` as a legal move, or :class:`_Failed` with a hint."""
    legal = hand.legal_moves()
    example = next((m for m in legal if m.target is not None), legal[0])
    expected = f"`<card> [<target>]`, a legal move such as `{example}`"
    try:
        move = protocol.parse_move(text)
    except protocol.GarbledError as err:
        cardlike = all(len(t) in (2, 3) for t in text.split()) and 0 < len(text.split()) <= 2
        hint = _garbled_hint(text, "write cards as rank then suit, e.g. `8c 2d`" if cardlike
                             else f"answer with the move alone on its line; {HINT_STDERR}")
        raise _Failed(StepResult("", FAIL, sent=line, received=text, expected=expected,
                                 note=str(err), hint=hint), Fault.GARBLED) from None
    try:
        hand.copy().play(*move)
    except IllegalMoveError as err:
        seat = hand.to_move
        targets = hand.targets(move.card)
        if move.card not in hand.hands[seat]:
            hint = HINT_NOT_HELD
        elif not targets:
            hint = "that card captures nothing: answer the card alone"
        elif move.target is None:
            hint = (f"that card can capture several table cards: name one, "
                    f"e.g. `{move.card} {targets[0]}`")
        else:
            hint = ("the target must be a table card your card captures "
                    "(values adding to 10; T J Q K take the same rank)")
        raise _Failed(StepResult("", FAIL, sent=line, received=text, expected=expected,
                                 note=str(err), hint=hint)) from None
    return move


def run_check(
    command: str | Sequence[str], *, move_ms: int = 1000, startup_ms: int = 10_000,
    sandbox: SandboxMode = SandboxMode.NONE, workdir: Path | None = None,
    on_step: Callable[[StepResult], None] | None = None, limits: Limits | None = None,
    sealed: Sealed | None = None,
) -> CheckReport:
    """Runs every scripted situation against ``command`` and returns the report.

    ``sandbox`` is ``bwrap`` or ``none`` (already resolved: the bot's every process starts with
    the one launcher it makes, under ``limits``); ``on_step`` is called as each step is
    decided, for live output; ``sealed``: a league's admitted entrant, its every process run
    from a copy of its snapshot, seeing what it sees in its matches.

    :raises referee.bots.process.BotCommandError: if the command cannot be started at all.
    """
    report = CheckReport(" ".join(command) if not isinstance(command, str) else command,
                         sandbox)
    launcher = Launcher.resolve(sandbox, limits or Limits())
    checker = _BotChecker(command, move_ms=move_ms, startup_ms=startup_ms, launcher=launcher,
                          workdir=workdir, report=report, on_step=on_step or (lambda s: None),
                          sealed=sealed)
    try:
        checker.run()
    finally:
        checker.close()
        checker.tmp.cleanup()
    return report
