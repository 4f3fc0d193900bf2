"""Re-verifies a game record by replaying every turn under the rules.

Pure code, no I/O. :func:`verify_record` takes a record as loaded from JSON (anything: a
malformed one is reported, never raised on) and lists every :class:`Discrepancy` between what
the record says and what the rules give: the deal, the dealer, the turn order, every capture,
the turned cards, the scores, the totals, the ranks and where the match ended.

>>> verify_record({"format": "chinese-ten-record", "version": 1})[0].what
'structure'

Each hand is re-played by the one record replay (:func:`referee.records.positions.hand_positions`),
with the checker as its :class:`referee.records.positions.TurnReader`: it checks a turn's fields,
works out
the target to play and checks the turned card and the captures before the replay applies them.
Replaying a hand stops at its first discrepancy (what follows would only repeat it); the other
hands are still checked. Totals are checked against the scores the rules give (the recorded
ones for a hand that could not be replayed), so one tampered number is reported once.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple, cast

from referee.game.cards import Card, CardError, format_cards
from referee.game.faults import Fault
from referee.game.rules import (
    TURNS_PER_HAND,
    Deal,
    DealError,
    Hand,
    IllegalMoveError,
    Move,
    Variant,
    rank,
)
from referee.records.luck import model_luck, weights_of
from referee.records.positions import ReplayedTurn, Scored, hand_positions
from referee.records.record import FORMAT, VERSION, HandDict

_FAULTS = tuple(f.value for f in Fault)


class Discrepancy(NamedTuple):
    """One way a record differs from the rules.

    ``hand`` and ``turn`` are 1-based (``None``: the whole match, or the whole hand).
    ``what`` names the checked item (``capture``, ``score``, ``structure``...). ``expected``
    is empty when there is nothing to compare, only a problem to describe in ``recorded``.
    """

    hand: int | None
    turn: int | None
    what: str
    recorded: str
    expected: str = ""

    def __str__(self) -> str:
        where = []
        if self.hand is not None:
            where.append(f"hand {self.hand}")
        if self.turn is not None:
            where.append(f"turn {self.turn}")
        head = f"{' '.join(where)}: " if where else ""
        if not self.expected:
            return f"{head}{self.what}: {self.recorded}"
        return f"{head}{self.what}: record says {self.recorded}, rules give {self.expected}"


class _Stop(Exception):
    """Ends the replay of one hand (or of the record) at a discrepancy."""


def cards_list(cards: Sequence[int]) -> str:
    """Cards as ``[3h, 7c]``: the form discrepancies use."""
    return f"[{format_cards(cards).replace(' ', ', ')}]"


def verify_record(record: Any) -> list[Discrepancy]:
    """Every discrepancy between ``record`` and the rules; empty if the record is valid.

    Never raises: wrong types and missing keys are ``structure`` discrepancies.
    """
    checker = _RecordChecker()
    with contextlib.suppress(_Stop):
        checker.check(record)
    return checker.found


def first_discrepancy(record: Any) -> Discrepancy | None:
    """The first discrepancy of :func:`verify_record`, or ``None`` for a valid record."""
    found = verify_record(record)
    return found[0] if found else None


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _card(value: Any) -> Card | None:
    if not isinstance(value, str):
        return None
    try:
        return Card.parse(value)
    except CardError:
        return None


class _RecordChecker:
    """Replays one record against the rules and collects its discrepancies.

    It is the :class:`referee.records.positions.TurnReader` of each hand's replay: :meth:`go`,
    :meth:`pick`
    and :meth:`end` raise :class:`_Stop` at a discrepancy; :meth:`_landed` checks each turn as
    played.
    """

    def __init__(self) -> None:
        self.found: list[Discrepancy] = []
        self.hand: int | None = None
        self.turn: int | None = None
        self.faulted: dict[int, int] = {}
        """Seat -> the first hand it faulted in."""
        self.fallback: list[bool] = []
        """Per seat: whether it has a fallback turn in this hand."""
        self.turn_count = 0
        """The number of turns this hand records."""
        self.replayed: list[int] | None = None
        """The scores of this hand's replay, once its turns replayed."""
        self.luck_weights = weights_of(1)
        """The record's luck model (``luck_model``, 1 when absent)."""

    def add(self, what: str, recorded: str, expected: str = "") -> None:
        self.found.append(Discrepancy(self.hand, self.turn, what, recorded, expected))

    def fail(self, what: str, recorded: str, expected: str = "") -> _Stop:
        self.add(what, recorded, expected)
        return _Stop()

    def need(self, data: Mapping[str, Any], key: str, kind: str, where: str) -> Any:
        """``data[key]`` if it has the right kind, else a ``structure`` stop."""
        if key not in data:
            raise self.fail("structure", f"{where}{key!r} is missing")
        value = data[key]
        ok = {
            "int": _is_int(value),
            "str": isinstance(value, str),
            "list": isinstance(value, list),
            "ints": isinstance(value, list) and all(_is_int(v) for v in value),
            "card": _card(value) is not None,
            "cards": isinstance(value, list) and all(_card(v) is not None for v in value),
        }[kind]
        if not ok:
            want = {"int": "an integer", "str": "a string", "list": "a list",
                    "ints": "a list of integers", "card": "a card",
                    "cards": "a list of cards"}[kind]
            raise self.fail("structure", f"{where}{key!r} should be {want}, not {value!r}"[:200])
        return value

    # The whole record.

    def check(self, record: Any) -> None:
        if not isinstance(record, dict):
            raise self.fail("structure", f"a record is a JSON object, not {type(record).__name__}")
        if record.get("format") != FORMAT:
            raise self.fail("format", f"{record.get('format')!r}", repr(FORMAT))
        if record.get("version") != VERSION:
            raise self.fail("version", f"{record.get('version')!r}", str(VERSION))
        self.need(record, "id", "str", "")
        if "bot_id" in record:
            self.need(record, "bot_id", "str", "")
        players = self.need(record, "players", "list", "")
        n = len(players)
        if not 2 <= n <= 4:
            raise self.fail("players", f"{n} players", "2 to 4")
        if not all(isinstance(p, str) for p in players):
            raise self.fail("structure", "'players' should be a list of names")
        name = self.need(record, "variant", "str", "")
        try:
            variant = Variant(name)
        except ValueError:
            raise self.fail("variant", f"unknown variant {name!r}") from None
        target = self.need(record, "target", "int", "")
        if target <= 0:
            raise self.fail("target", f"{target}", "a positive number")
        model = record.get("luck_model", 1)
        try:
            self.luck_weights = weights_of(model if _is_int(model) else -1)
        except ValueError:
            raise self.fail("luck model", f"{model!r}"[:200], "1 or 2") from None
        hands = self.need(record, "hands", "list", "")
        if not hands:
            raise self.fail("hands", "no hands", "at least one")
        self.faulted = self._faults(record, n, len(hands))
        scores: list[list[int]] = []
        for k, entry in enumerate(hands, 1):
            self.hand = k
            self.replayed = None
            try:
                scores.append(self._hand(entry, k, n, variant))
            except _Stop:
                if self.replayed is not None:  # the turns replayed; the scores were wrong
                    scores.append(self.replayed)
                elif isinstance(entry, dict) and _scores_ok(entry.get("scores"), n):
                    scores.append(entry["scores"])
                else:
                    return
            finally:
                self.hand = self.turn = None
        self._result(record, scores, n, target, self.faulted)

    def _faults(self, record: dict[str, Any], n: int, hand_count: int) -> dict[int, int]:
        """Seat -> the first hand it faulted in."""
        faults = self.need(record, "faults", "list", "")
        faulted: dict[int, int] = {}
        for i, f in enumerate(faults):
            where = f"faults[{i}]."
            if not isinstance(f, dict):
                raise self.fail("structure", f"faults[{i}] should be an object")
            seat = self.need(f, "seat", "int", where)
            hand_number = self.need(f, "hand", "int", where)
            kind = self.need(f, "fault", "str", where)
            if kind not in _FAULTS:
                self.add("fault", f"{where}fault {kind!r}"[:200], f"one of {', '.join(_FAULTS)}")
            if not 0 <= seat < n:
                raise self.fail("structure", f"{where}seat {seat} is not a seat of {n}")
            if not 1 <= hand_number <= hand_count:
                raise self.fail("structure",
                                f"{where}hand {hand_number} is not a hand of {hand_count}")
            faulted[seat] = min(hand_number, faulted.get(seat, hand_number))
        return faulted

    def _result(
        self, record: dict[str, Any], scores: list[list[int]], n: int, target: int,
        faulted: dict[int, int],
    ) -> None:
        totals = [0] * n
        for k, s in enumerate(scores, 1):
            if any(t >= target for t in totals):
                self.add("match end", f"{len(scores)} hands",
                         f"{k - 1} (a total reached {target} after hand {k - 1})")
                break
            totals = [t + x for t, x in zip(totals, s, strict=True)]
        else:
            if not any(t >= target for t in totals):
                self.add("match end", f"{len(scores)} hands",
                         f"more (no total reached {target}: {totals})")
        totals = [sum(col) for col in zip(*scores, strict=True)]
        got = self.need(record, "totals", "ints", "")
        if got != totals:
            self.add("totals", str(got), str(totals))
        ranks = rank(got if len(got) == n else totals, faulted)
        got = self.need(record, "ranks", "ints", "")
        if got != ranks:
            self.add("ranks", str(got), str(ranks))

    # One hand.

    def _hand(self, entry: Any, k: int, n: int, variant: Variant) -> list[int]:
        if not isinstance(entry, dict):
            raise self.fail("structure", "a hand should be an object")
        dealer = self.need(entry, "dealer", "int", "")
        hands = self.need(entry, "hands", "list", "")
        if len(hands) != n:
            raise self.fail("deal", f"cards for {len(hands)} seats", f"{n} seats")
        for seat, cards in enumerate(hands):
            if not isinstance(cards, list) or not all(_card(c) is not None for c in cards):
                raise self.fail("structure", f"'hands'[{seat}] should be a list of cards")
        layout = self.need(entry, "layout", "cards", "")
        stock = self.need(entry, "stock", "cards", "")
        try:
            Deal.from_cards(hands, layout, stock)
        except DealError as err:
            raise self.fail("deal", f"not one deck: {err}") from None
        if dealer != (k - 1) % n:
            raise self.fail("dealer", f"seat {dealer}", f"seat {(k - 1) % n}")
        turns = self.need(entry, "turns", "list", "")
        self.turn_count = len(turns)
        self.fallback = [False] * n
        has_by = any(isinstance(t, dict) and "by" in t for t in turns)
        scores: list[int] = []
        # The deal and the dealer are checked; go, pick and end check the rest as it is read.
        steps = hand_positions(cast(HandDict, entry), k, variant, [0] * n, check=self)
        try:
            for step in steps:
                if isinstance(step, ReplayedTurn):
                    self._landed(step)
                elif isinstance(step, Scored):
                    scores = step.scores
        except IllegalMoveError as err:  # pragma: no cover - go and pick checked the move
            raise self.fail("play", str(err)) from None
        if "luck" in entry:
            recorded = entry["luck"]
            expected = model_luck(entry, n, variant, self.luck_weights)
            if not (isinstance(recorded, list) and len(recorded) == n
                    and all(isinstance(x, int | float) and not isinstance(x, bool)
                            and abs(x - y) < 1e-6 for x, y in zip(recorded, expected,
                                                                  strict=True))):
                self.add("luck", str(recorded)[:200], str(expected))
        for seat, first in self.faulted.items():
            if has_by and first == k and not self.fallback[seat]:
                self.add("by", f"a fault of seat {seat} in this hand but no fallback turn")
        return scores

    def go(self, hand: Hand, turn: Any) -> Move:
        """The move of ``turn``, checked against ``hand``, the position before it."""
        self.turn = hand.turn + 1  # every turn before it was played in full
        if hand.is_over():
            raise self.fail("turns", f"{self.turn_count} turns", f"{TURNS_PER_HAND}")
        if not isinstance(turn, dict):
            raise self.fail("structure", "a turn should be an object")
        seat = self.need(turn, "seat", "int", "")
        if seat != hand.to_move:
            raise self.fail("turn order", f"seat {seat}", f"seat {hand.to_move}")
        self._by(turn, seat)
        play = Card.parse(self.need(turn, "play", "card", ""))
        capture = [Card.parse(c) for c in self.need(turn, "capture", "cards", "")]
        self.need(turn, "turn", "card", "")
        self.need(turn, "turn_capture", "cards", "")
        if play not in hand.hands[seat]:
            raise self.fail("play", f"{play} is not in seat {seat}'s hand "
                                    f"({format_cards(hand.hands[seat])})")
        return Move(play, self._target("capture", hand, play, capture))

    def pick(self, hand: Hand, turn: Mapping[str, Any]) -> Card:
        """The target ``turn`` picks for the card it turned, both checked."""
        assert hand.pick_card is not None
        self._turned(turn, hand.pick_card)
        turn_capture = [Card.parse(c) for c in turn["turn_capture"]]
        if len(turn_capture) == 1 and turn_capture[0] in hand.pick_options:
            return turn_capture[0]
        raise self.fail("turn capture", cards_list(turn_capture),
                        f"one of {format_cards(hand.pick_options)}")

    def _landed(self, step: ReplayedTurn) -> None:
        """Checks the card ``step`` turned and what it captured (a pick was checked before)."""
        turned = step.turned
        assert turned.card is not None
        self._turned(step.record, turned.card)
        turn_capture = [Card.parse(c) for c in step.record["turn_capture"]]
        if sorted(turn_capture) != sorted(turned.captured):
            raise self.fail("turn capture", cards_list(turn_capture), cards_list(turned.captured))

    def _turned(self, turn: Mapping[str, Any], drawn: Card) -> None:
        turned = Card.parse(turn["turn"])
        if turned != drawn:
            raise self.fail("turn", str(turned), f"{drawn} (the next card of the stock)")

    def end(self, hand: Hand, entry: Mapping[str, Any]) -> None:
        """Checks that the hand is over and its recorded scores."""
        self.turn = None
        if not hand.is_over():
            raise self.fail("turns", f"{self.turn_count} turns", f"{TURNS_PER_HAND}")
        self.replayed = hand.scores()
        scores = self.need(entry, "scores", "ints", "")
        if scores != self.replayed:
            raise self.fail("scores", str(scores), str(self.replayed))

    def _target(self, what: str, hand: Hand, card: Card, capture: list[Card]) -> Card | None:
        """The target to play ``card`` with, if ``capture`` is what the rules allow."""
        found = hand.targets(card)
        if not found:
            if capture:
                raise self.fail(what, cards_list(capture), "[]")
            return None
        sweep = len(found) == 3 and card.rank in hand.sweep
        if sweep or len(found) == 1:
            if sorted(capture) != sorted(found):
                raise self.fail(what, cards_list(capture), cards_list(found))
            return None
        if len(capture) == 1 and capture[0] in found:
            return capture[0]
        raise self.fail(what, cards_list(capture),
                        f"one of {format_cards(found)}")

    def _by(self, turn: dict[str, Any], seat: int) -> None:
        k, fallback = self.hand, self.fallback
        assert k is not None
        by = turn.get("by")
        if by is None:
            return
        if by not in ("bot", "fallback"):
            raise self.fail("by", f"{by!r}", "'bot' or 'fallback'")
        first = self.faulted.get(seat)
        if by == "fallback":
            fallback[seat] = True
            if first is None:
                raise self.fail("by", f"fallback for seat {seat}", "no fault, so 'bot'")
            if first > k:
                raise self.fail("by", f"fallback for seat {seat}",
                                f"'bot' until its fault in hand {first}")
        elif first is not None and (first < k or fallback[seat]):
            raise self.fail("by", f"'bot' for seat {seat}", "fallback after its fault")


def _scores_ok(scores: Any, n: int) -> bool:
    return isinstance(scores, list) and len(scores) == n and all(_is_int(s) for s in scores)
