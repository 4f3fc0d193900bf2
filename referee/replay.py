"""Replaying game records: told as text, re-verified, and re-asked of a bot.

* :func:`replay_text` tells a match turn by turn (or as one seat saw it) as rich text lines.
* :func:`seat_lines` gives, from a record, exactly the lines a seat was sent in the match, with
  the decisions it was asked; :class:`Reask` sends them to a bot and judges its answers against
  the record.
* :func:`record_files` and :func:`verify_file` find and re-verify record files (see
  :mod:`referee.verify`).

The HTML page lives in :mod:`referee.replay_html`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from rich.text import Text

from referee import protocol
from referee.bot import Bot, BotError
from referee.cards import Card, parse_cards
from referee.display import cards_text, move_text
from referee.record import RecordDict, RecordError, deal_from_json, read_record
from referee.rules import Event, Hand, IllegalMoveError, Move, Variant
from referee.verify import Discrepancy, verify_record

TELLABLE = frozenset({"scores", "totals", "ranks", "match end"})
"""Discrepancies the text replay tells anyway, with a warning: every turn replays under the
rules, only the results written down differ. Any other discrepancy (a wrong shape, a dealer or
seat that is not the rules', a move the rules do not allow...) leaves nothing sound to tell."""


class ReplayError(ValueError):
    """Raised for a record that cannot be replayed (the message says why, in one line)."""


def check_replayable(record: RecordDict, *, strict: bool) -> list[Discrepancy]:
    """The record's discrepancies, once it is known to be replayable.

    :raises ReplayError: if it has a discrepancy the text replay cannot tell (see
        :data:`TELLABLE`), or any discrepancy with ``strict``.
    """
    found = verify_record(record)
    bad = [d for d in found if strict or d.what not in TELLABLE]
    if bad:
        raise ReplayError(f"record does not verify: {bad[0]}")
    if found:
        n = len(record["players"])
        for k, entry in enumerate(record["hands"], 1):
            if len(entry["scores"]) != n:
                raise ReplayError(f"record does not verify: hand {k}: scores: "
                                  f"{len(entry['scores'])} for {n} seats")
        for key in ("totals", "ranks"):
            if len(record[key]) != n:  # type: ignore[literal-required]
                raise ReplayError(f"record does not verify: {key}: "
                                  f"{len(record[key])} for {n} seats")  # type: ignore[literal-required]
    return found


# The lines a seat receives.


class Decision(NamedTuple):
    """A decision the seat was asked in the match (or, after its fault, the fallback made).

    ``state`` is the hand just before it (a private copy); ``recorded`` the event that followed:
    the play for ``go``, the turn for ``pick``.
    """

    hand: int
    turn: int
    kind: str
    state: Hand
    recorded: Event
    by: str


class SeatLine(NamedTuple):
    """A line sent to the seat; ``decision`` is set for a ``go`` or ``pick`` request."""

    line: str
    decision: Decision | None = None


def recorded_move(turn: dict[str, Any]) -> Move:
    """The move a recorded turn played (the target is the capture, if exactly one)."""
    capture = turn["capture"]
    return Move(Card.parse(turn["play"]), Card.parse(capture[0]) if len(capture) == 1 else None)


def seat_lines(record: RecordDict, seat: int, *, move_ms: int = 1000) -> Iterator[SeatLine]:
    """Every line ``seat`` was sent in the match, from ``match`` to ``end``, byte for byte as
    :func:`referee.match.play_match` sends them (without a time bank). ``chinese-ten 1`` and
    ``quit`` are :class:`referee.bot.Bot`'s own.

    Requests of other seats are not included; the seat's own requests are, even after a fault
    (when the match sent nothing more and played the seat by fallback).

    .. warning:: The record must verify (:func:`check_replayable` with ``strict``).
    """
    n = len(record["players"])
    variant = Variant(record["variant"])
    yield SeatLine(protocol.format_match(record["id"], seat, n, variant, record["target"],
                                         record["players"]))
    totals = [0] * n
    for k, entry in enumerate(record["hands"], 1):
        deal = deal_from_json(entry)
        hand = Hand(deal, dealer=entry["dealer"], variant=variant)
        yield SeatLine(protocol.format_hand(k, hand.dealer, deal.hands[seat], deal.layout))
        for event in hand.events:
            yield SeatLine(protocol.format_event(event))
        for t, turn in enumerate(entry["turns"], 1):
            by = turn.get("by", "bot")
            mine = hand.to_move == seat
            before = hand.copy() if mine else None
            hand.play(*recorded_move(turn))
            if hand.pick_card is not None:
                play = hand.events[-1]
                at_pick = hand.copy() if mine else None
                hand.pick(Card.parse(turn["turn_capture"][0]))
            else:
                play, at_pick = hand.events[-2], None
            if before is not None:
                line = protocol.format_go(before.hands[seat], before.table, len(before.stock),
                                          move_ms)
                yield SeatLine(line, Decision(k, t, "go", before, play, by))
            yield SeatLine(protocol.format_event(play))
            if at_pick is not None:
                assert at_pick.pick_card is not None
                line = protocol.format_pick(at_pick.pick_card, at_pick.pick_options, move_ms)
                yield SeatLine(line, Decision(k, t, "pick", at_pick, hand.events[-1], by))
            yield SeatLine(protocol.format_event(hand.events[-1]))
        totals = [a + b for a, b in zip(totals, entry["scores"], strict=True)]
        yield SeatLine(protocol.format_score(entry["scores"], totals))
    yield SeatLine(protocol.format_end(record["totals"], record["ranks"]))


# Re-asking a bot.


def answer_form(event: Event) -> str:
    """An event as a bot would answer it: ``7c``, ``7c 3h`` (a sweep: the card alone); for a
    turned card, the picked target."""
    assert event.card is not None
    if event.kind == "turn":
        return str(event.captured[0]) if event.captured else str(event.card)
    return f"{event.card} {event.captured[0]}" if len(event.captured) == 1 else str(event.card)


@dataclass(frozen=True)
class Finding:
    """The bot's answer at one decision, judged against the record."""

    decision: Decision
    answer: str | None
    """The answer line, ``None`` when there was none (timeout, crash)."""
    problem: str = ""
    """``illegal: ...``, ``garbled: ...``, ``timeout: ...``: why the answer is no move."""
    now: str = ""
    """The answer in :func:`answer_form`, when it was legal."""

    @property
    def differs(self) -> bool:
        """Whether the bot did not answer what the record holds."""
        return bool(self.problem) or self.now != answer_form(self.decision.recorded)

    def __str__(self) -> str:
        d = self.decision
        was = answer_form(d.recorded)
        verb = ("played", "plays") if d.kind == "go" else ("picked", "picks")
        if self.problem:
            said = "no answer" if self.answer is None else f"answers {self.answer!r}"
            text = f"{verb[0]} {was}, now {said}: {self.problem}"
        else:
            text = f"{verb[0]} {was}, now {verb[1]} {self.now}"
        note = " (a fallback turn in the match)" if d.by == "fallback" else ""
        return f"hand {d.hand} turn {d.turn}: {text}{note}"


def judge(decision: Decision, answer: str) -> Finding:
    """Applies ``answer`` to a copy of the decision's position and compares it with the record."""
    hand = decision.state.copy()
    try:
        if decision.kind == "go":
            event = hand.play(*protocol.parse_move(answer))
        else:
            event = hand.pick(protocol.parse_pick(answer))
    except protocol.GarbledError as err:
        return Finding(decision, answer, f"garbled: {err}")
    except IllegalMoveError as err:
        return Finding(decision, answer, f"illegal: {err}")
    return Finding(decision, answer, now=answer_form(event))


class Reask:
    """Re-plays a recorded match to a bot sitting in ``seat`` and judges each of its decisions.

    Iterate for a :class:`Finding` per decision asked. The match goes on with the recorded
    moves whatever the bot answers. A timeout or crash stops the bot; the decisions left are
    counted in :attr:`not_asked`.
    """

    def __init__(self, record: RecordDict, seat: int, bot: Bot, *, move_ms: int = 1000,
                 startup_ms: int = 10_000) -> None:
        self.record = record
        self.seat = seat
        self.bot = bot
        self.move_ms = move_ms
        self.startup_ms = startup_ms
        self.name = ""
        self.stopped = ""
        """Why the bot was stopped early (empty if it lasted the whole match)."""
        self.not_asked = 0

    def start(self) -> str:
        """Starts the bot and returns the name it gave.

        :raises referee.bot.BotError: if it does not start.
        :raises referee.process.BotCommandError: if the command cannot be run.
        """
        self.name = self.bot.start(self.startup_ms)
        return self.name

    def __iter__(self) -> Iterator[Finding]:
        bot = self.bot
        for item in seat_lines(self.record, self.seat, move_ms=self.move_ms):
            d = item.decision
            if d is None:
                bot.send(item.line)
                continue
            if self.stopped:
                self.not_asked += 1
                continue
            try:
                answer = bot.request(item.line, self.move_ms)
            except BotError as err:
                self.stopped = f"{err.fault}: {err.detail}"
                bot.close()
                yield Finding(d, None, self.stopped)
                continue
            yield judge(d, answer.line)
        bot.close()


# Verifying files.


class Verified(NamedTuple):
    """The verdict on one file: its hands, or why it is not a valid record."""

    path: Path
    hands: int
    problem: str
    """Empty for a valid record."""
    more: int = 0
    """Further discrepancies beyond the one in ``problem``."""

    def __str__(self) -> str:
        if not self.problem:
            return f"ok  {self.path}  ({self.hands} hand{'s' * (self.hands != 1)})"
        extra = f" (and {self.more} more)" if self.more else ""
        return f"BAD {self.path}: {self.problem}{extra}"


def record_files(paths: Iterable[Path]) -> Iterator[Path]:
    """The files named, and every ``*.json`` under the folders named (sorted) that may be a
    game record: hidden files and folders (a tournament's ``.ct-referee.json``) are skipped,
    and so is a JSON object without a ``format`` key (a tournament's ``standings.json``). A file
    named explicitly is always included; so is one with another ``format``, to be reported."""
    for p in paths:
        if p.is_dir():
            for q in sorted(p.rglob("*.json")):
                hidden = any(part.startswith(".") for part in q.relative_to(p).parts)
                if q.is_file() and not hidden and not _not_a_record(q):
                    yield q
        else:
            yield p


def _not_a_record(path: Path) -> bool:
    """Whether ``path`` holds a JSON object without a ``format`` key (unreadable files and
    other JSON are left for :func:`verify_file` to report)."""
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and "format" not in data


def verify_file(path: Path) -> Verified:
    """Reads and verifies one record file; never raises."""
    try:
        record = read_record(path)
    except RecordError as err:
        return Verified(path, 0, str(err).removeprefix(f"{path}: "))
    found = verify_record(record)
    hands = record.get("hands")
    count = len(hands) if isinstance(hands, list) else 0
    if not found:
        return Verified(path, count, "")
    return Verified(path, count, str(found[0]), len(found) - 1)


# The text replay.


def replay_text(
    record: RecordDict, *, hand: int | None = None, seat: int | None = None,
    ascii: bool = False,
) -> Iterator[Text]:
    """The match told line by line: players, then per hand the deal, every turn with the
    running points of the hand, the scores, and the result.

    ``hand`` (1-based) tells only that hand; ``seat`` only what that seat could see (its own
    cards, everything public, its own fault). The record must be replayable
    (:func:`check_replayable`): its turns are replayed under the rules for the running points,
    and told as written.
    """
    names = record["players"]
    n = len(names)
    variant = Variant(record["variant"])
    sep = " - " if ascii else " · "
    width = max(len(x) for x in [*names, "layout"])
    head = Text(f"match {record['id']}{sep}{variant.value}{sep}target {record['target']}"
                f"{sep}{n} players{sep}{len(record['hands'])} hands", style="bold")
    yield head
    for s, name in enumerate(names):
        yield Text(f"  seat {s}  {name}")
    if seat is not None:
        yield Text(f"as seen by seat {seat} ({names[seat]})", style="bold")
    faults = [f for f in record["faults"] if seat is None or f["seat"] == seat]
    first_fallback = _first_fallbacks(record)
    totals = [0] * n
    for k, entry in enumerate(record["hands"], 1):
        before = totals
        totals = [a + b for a, b in zip(totals, entry["scores"], strict=True)]
        if hand is not None and k != hand:
            continue
        yield Text("")
        bar = "==" if ascii else "──"
        yield Text(f"{bar} hand {k}{sep}dealer {names[entry['dealer']]} {bar}", style="bold")
        if k > 1:
            yield Text(f"  totals so far {_numbers(before)}", style="dim")
        for s, cards in enumerate(entry["hands"]):
            label = Text(f"  {names[s]:<{width}}  ", style="cyan")
            if seat is None or s == seat:
                yield label + cards_text(parse_cards(cards), ascii=ascii)
            else:
                yield label + Text(f"({len(cards)} cards)", style="dim")
        layout = parse_cards(entry["layout"])
        yield Text(f"  {'layout':<{width}}  ", style="dim") + cards_text(layout, ascii=ascii)
        if seat is None:
            yield (Text(f"  {'stock':<{width}}  ", style="dim")
                   + cards_text(parse_cards(entry["stock"]), ascii=ascii))
        played = Hand(deal_from_json(entry), dealer=entry["dealer"], variant=variant)
        for take in played.events:
            yield (Text(f"  {names[take.seat]} takes the layout four of a kind ")
                   + cards_text(take.captured, ascii=ascii))
        lines: list[tuple[Text, list[int], list[Text]]] = []
        for t, turn in enumerate(entry["turns"], 1):
            mover = turn["seat"]
            notes: list[Text] = []
            for f in faults:
                if f["seat"] == mover and first_fallback.get(mover) == (k, t):
                    notes.append(Text(f"  fault: {names[mover]} (seat {mover}) {f['fault']}: "
                                      f"{f['detail']}; fallback from here", style="yellow"))
            line = move_text(names, mover, Card.parse(turn["play"]),
                             parse_cards(turn["capture"]), Card.parse(turn["turn"]),
                             parse_cards(turn["turn_capture"]), ascii=ascii)
            if turn.get("by") == "fallback" and (seat is None or seat == mover):
                line.append(" (fallback)", style="dim")
            played.play(*recorded_move(turn))
            if played.pick_card is not None:
                played.pick(Card.parse(turn["turn_capture"][0]))
            if seat is None or seat == mover:
                notes += [Text(f"      info: {i}", style="dim") for i in turn.get("info", [])]
            lines.append((Text(f"  {t:>2}  ") + line, played.scores(), notes))
        wide = max((x.cell_len for x, _, _ in lines), default=0)
        for text, p, notes in lines:
            yield from notes
            yield text + Text(" " * (wide - text.cell_len + 2)) + Text(_numbers(p), style="dim")
        yield Text(f"  scores {_numbers(entry['scores'])}{sep}totals {_numbers(totals)}",
                   style="bold")
    if hand is None:
        yield Text("")
        yield Text("result", style="bold")
        order = sorted(range(n), key=lambda s: (record["ranks"][s], s))
        for s in order:
            mine = [f for f in faults if f["seat"] == s]
            note = "".join(f"  (fault: {f['fault']} in hand {f['hand']})" for f in mine)
            yield Text(f"  rank {record['ranks'][s]}  {names[s]:<{width}}  "
                       f"{record['totals'][s]:>5}{note}")


def _numbers(values: Sequence[int]) -> str:
    return " ".join(f"{v:>3}" for v in values)


def _first_fallbacks(record: RecordDict) -> dict[int, tuple[int, int]]:
    """Seat -> (hand, turn) of its first fallback turn."""
    first: dict[int, tuple[int, int]] = {}
    for k, entry in enumerate(record["hands"], 1):
        for t, turn in enumerate(entry["turns"], 1):
            if turn.get("by") == "fallback":
                first.setdefault(turn["seat"], (k, t))
    return first
