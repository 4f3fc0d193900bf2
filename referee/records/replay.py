"""Replaying game records: told as text, re-verified, and re-asked of a bot.

* :func:`replay_text` tells a match turn by turn (or as one seat saw it) as rich text lines.
* :func:`seat_lines` gives, from a record, exactly the lines a seat was sent in the match, with
  the decisions it was asked; :class:`Reask` plays the match again (:mod:`referee.match.play`) with
  the bot in that seat and every decision played back from the record (:class:`RecordedPlayer`),
  and judges the bot's answers against the record.
* :func:`record_files` and :func:`verify_file` find and re-verify record files (see
  :mod:`referee.records.verify`).

The HTML page lives in :mod:`referee.web.replay_html`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from rich.text import Text

from referee.game.cards import Card, parse_cards
from referee.game.rules import Event, Hand, IllegalMoveError, Variant
from referee.protocol import narration
from referee.protocol import wire as protocol
from referee.protocol.escape import escape_controls
from referee.records.display import cards_text, move_text
from referee.records.positions import Dealt, ReplayedTurn, Scored, positions
from referee.records.record import RecordDict, RecordError, read_json, read_record
from referee.records.verify import Discrepancy, verify_record

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
            if len(record[key]) != n:
                raise ReplayError(f"record does not verify: {key}: "
                                  f"{len(record[key])} for {n} seats")
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


def seat_lines(record: RecordDict, seat: int, *, move_ms: int = 1000) -> Iterator[SeatLine]:
    """Every line ``seat`` was sent in the match, from ``match`` to ``end``, byte for byte as
    :func:`referee.match.play.play_match` sends them (without a time bank). ``chinese-ten 1`` and
    ``quit`` are :class:`referee.bots.bot.Bot`'s own.

    Requests of other seats are not included; the seat's own requests are, even after a fault
    (when the match sent nothing more and played the seat by fallback).

    .. warning:: The record must verify (:func:`check_replayable` with ``strict``).
    """
    n = len(record["players"])
    variant = Variant(record["variant"])
    told = record.get("bot_id", record["id"])  # older records: the bots were told the id
    yield SeatLine(narration.match_line(told, seat, players=n, variant=variant,
                                        target=record["target"], names=record["players"]).text)
    for step in positions(record):
        if isinstance(step, Dealt):
            cues: Iterable[narration.Cue] = narration.hand_cues(step.number, step.hand)
        elif isinstance(step, Scored):
            cues = [narration.score_cue(step.scores, step.totals)]
        else:
            cues = step.cues
        for cue in cues:
            if isinstance(cue, narration.Line):
                if cue.for_seat(seat):
                    yield SeatLine(cue.text)
            elif cue.seat == seat:
                assert isinstance(step, ReplayedTurn)
                yield SeatLine(cue.line(move_ms), _decision(step, cue.kind))
    yield SeatLine(narration.end_cue(record["totals"], record["ranks"]).text)


def _decision(step: ReplayedTurn, kind: str) -> Decision:
    by = step.record.get("by", "bot")
    if kind == "go":
        return Decision(step.number, step.turn, kind, step.before, step.play, by)
    assert step.at_pick is not None
    return Decision(step.number, step.turn, kind, step.at_pick, step.turned, by)


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


def decisions(record: RecordDict, seat: int) -> Iterator[Decision]:
    """Every decision ``seat`` was asked in the match (its fallback turns included), in order.

    .. warning:: The record must verify (:func:`check_replayable` with ``strict``).
    """
    for step in positions(record):
        if isinstance(step, ReplayedTurn):
            for cue in step.cues:
                if isinstance(cue, narration.Ask) and cue.seat == seat:
                    yield _decision(step, cue.kind)


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
    """The files named, and every ``*.json`` and ``*.json.gz`` under the folders named (sorted by
    name) that may be a game record: hidden files and folders (a tournament's
    ``.ct-referee.json``) are skipped, and so is a JSON object without a ``format`` key (a
    tournament's ``standings.json``). A file named explicitly is always included; so is one
    with another ``format``, to be reported."""
    for p in paths:
        if p.is_dir():
            found = [*p.rglob("*.json"), *p.rglob("*.json.gz")]
            for q in sorted(found):
                hidden = any(part.startswith(".") for part in q.relative_to(p).parts)
                if q.is_file() and not hidden and not _not_a_record(q):
                    yield q
        else:
            yield p


def _not_a_record(path: Path) -> bool:
    """Whether ``path`` holds a JSON object without a ``format`` key (unreadable files and
    other JSON are left for :func:`verify_file` to report)."""
    try:
        data = read_json(path)
    except RecordError:
        return False
    return isinstance(data, dict) and "format" not in data


def verify_file(path: Path) -> Verified:
    """Reads and verifies one record file; never raises."""
    try:
        record = read_record(path)
    except RecordError as err:
        return Verified(path, 0, str(err).removeprefix(f"{path}: "))
    try:
        found = verify_record(record)
    except Exception as err:  # one bad record must not stop the others
        return Verified(path, 0, f"cannot be checked ({type(err).__name__}: "
                                 f"{str(err)[:200]})")
    hands = record.get("hands")
    count = len(hands) if isinstance(hands, list) else 0
    if not found:
        return Verified(path, count, "")
    return Verified(path, count, str(found[0]), len(found) - 1)


# The text replay.


def replay_text(
    record: RecordDict, *, hand: int | None = None, seat: int | None = None,
    ascii_only: bool = False,
) -> Iterator[Text]:
    """The match told line by line: players, then per hand the deal, every turn with the
    running points of the hand, the scores, and the result.

    ``hand`` (1-based) tells only that hand; ``seat`` only what that seat could see (its own
    cards, everything public, its own fault). The record must be replayable
    (:func:`check_replayable`): its turns are replayed under the rules for the running points,
    and told as written.
    """
    names = [escape_controls(x) for x in record["players"]]
    n = len(names)
    variant = Variant(record["variant"])
    sep = " - " if ascii_only else " · "
    width = max(len(x) for x in [*names, "layout"])
    head = Text(f"match {escape_controls(record['id'])}{sep}{variant.value}{sep}target "
                f"{record['target']}{sep}{n} players{sep}{len(record['hands'])} hands",
                style="bold")
    yield head
    for s, name in enumerate(names):
        yield Text(f"  seat {s}  {name}")
    if seat is not None:
        yield Text(f"as seen by seat {seat} ({names[seat]})", style="bold")
    faults = [f for f in record["faults"] if seat is None or f["seat"] == seat]
    first_fallback = _first_fallbacks(record)
    lines: list[tuple[Text, list[int], list[Text], list[Text]]] = []
    for step in positions(record):
        k = step.number
        if hand is not None and k != hand:
            continue
        if isinstance(step, Dealt):
            yield from _dealt_text(step, names, seat, sep=sep, width=width, ascii_only=ascii_only)
            lines = []
        elif isinstance(step, ReplayedTurn):
            turn, t = step.record, step.turn
            mover = turn["seat"]
            notes: list[Text] = []
            for f in faults:
                if f["seat"] == mover and first_fallback.get(mover) == (k, t):
                    notes.append(Text(f"  fault: {names[mover]} (seat {mover}) {f['fault']}: "
                                      f"{escape_controls(f['detail'])}; fallback from here",
                                      style="yellow"))
            line = move_text(names, mover, Card.parse(turn["play"]),
                             parse_cards(turn["capture"]), Card.parse(turn["turn"]),
                             parse_cards(turn["turn_capture"]), ascii_only=ascii_only)
            if turn.get("by") == "fallback" and (seat is None or seat == mover):
                line.append(" (fallback)", style="dim")
            comments: list[Text] = []  # under the move they came with
            if seat is None or seat == mover:
                comments = [Text(f"      info: {escape_controls(i)}", style="dim")
                            for i in turn.get("info", [])]
            lines.append((Text(f"  {t:>2}  ") + line, step.after.scores(), notes, comments))
        else:
            wide = max((x.cell_len for x, _, _, _ in lines), default=0)
            for text, p, notes, comments in lines:
                yield from notes
                yield (text + Text(" " * (wide - text.cell_len + 2))
                       + Text(_numbers(p), style="dim"))
                yield from comments
            yield Text(f"  scores {_numbers(step.scores)}{sep}totals {_numbers(step.totals)}",
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


def _dealt_text(
    step: Dealt, names: Sequence[str], seat: int | None, *, sep: str, width: int, ascii_only: bool,
) -> Iterator[Text]:
    """The opening of a hand: its dealer, the cards (as ``seat`` may see them), the take."""
    k, entry = step.number, step.entry
    yield Text("")
    bar = "==" if ascii_only else "──"
    yield Text(f"{bar} hand {k}{sep}dealer {names[entry['dealer']]} {bar}", style="bold")
    if k > 1:
        yield Text(f"  totals so far {_numbers(step.totals)}", style="dim")
    for s, cards in enumerate(entry["hands"]):
        label = Text(f"  {names[s]:<{width}}  ", style="cyan")
        if seat is None or s == seat:
            yield label + cards_text(parse_cards(cards), ascii_only=ascii_only)
        else:
            yield label + Text(f"({len(cards)} cards)", style="dim")
    layout = parse_cards(entry["layout"])
    yield Text(f"  {'layout':<{width}}  ", style="dim") + cards_text(layout, ascii_only=ascii_only)
    if seat is None:
        yield (Text(f"  {'stock':<{width}}  ", style="dim")
               + cards_text(parse_cards(entry["stock"]), ascii_only=ascii_only))
    for take in step.hand.events:
        yield (Text(f"  {names[take.seat]} takes the layout four of a kind ")
               + cards_text(take.captured, ascii_only=ascii_only))


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
