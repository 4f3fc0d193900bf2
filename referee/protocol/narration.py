"""The narration of a match: which protocol lines each seat receives, and in what order.

Pure code, no I/O: the one place that says what a match tells its seats; the match
(:mod:`referee.match.play`), the record's seat lines and the conformance checker
(:mod:`referee.match.check`) all send what it gives (``docs/protocol.md``, "Referee → bot").
A request is an :class:`Ask` built on the seat's :class:`referee.game.rules.SeatView`.

>>> from referee.game.rules import Deal, Hand
>>> hand = Hand(Deal.from_seed(2, "doc"), dealer=0)
>>> cues = turn_cues(hand)
>>> ask = next(cues)
>>> ask.seat, ask.line(1000).split()[:2]
(1, ['go', 'hand'])
>>> _ = hand.play(*hand.legal_moves()[0])  # the caller decides, then reads on
>>> [c.text.split()[0] for c in cues]
['play', 'turn']
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import NamedTuple

from referee.game.rules import Event, Hand, SeatView, Variant
from referee.protocol import wire as protocol


class Line(NamedTuple):
    """A line told to one seat (``seat``) or, with ``seat`` ``None``, to every seat.

    ``event`` is the table event the line tells, if it tells one.
    """

    text: str
    seat: int | None = None
    event: Event | None = None

    def for_seat(self, seat: int) -> bool:
        """Whether ``seat`` receives this line."""
        return self.seat is None or self.seat == seat


class Ask(NamedTuple):
    """A decision asked of ``view.seat``: ``kind`` is ``"go"`` or ``"pick"``.

    The caller makes the decision on the hand (:meth:`Hand.play` for ``go``, :meth:`Hand.pick`
    for ``pick``) before it reads the next cue of :func:`turn_cues`.
    """

    kind: str
    view: SeatView

    @property
    def seat(self) -> int:
        """The seat asked."""
        return self.view.seat

    def line(self, ms: int, *, bank: int | None = None) -> str:
        """The request line, with ``ms`` per answer and ``bank`` (sent only when given)."""
        v = self.view
        if self.kind == "go":
            return protocol.format_go(v.hand, v.table, v.stock_count, ms, bank=bank)
        assert v.pick_card is not None
        return protocol.format_pick(v.pick_card, v.pick_options, ms, bank=bank)


Cue = Line | Ask


def match_line(
    match_id: str, seat: int, *, players: int, variant: Variant, target: int,
    names: Sequence[str],
) -> Line:
    """The ``match`` line that opens a match for ``seat``."""
    return Line(protocol.format_match(match_id, seat, players, variant, target, names), seat)


def hand_cues(number: int, hand: Hand) -> Iterator[Line]:
    """The lines that open hand ``number`` (1-based) of a freshly dealt ``hand``: each seat's
    ``hand`` line (its own cards, the layout), then the dealer's ``take``, if any, to all."""
    deal = hand.deal
    for seat in range(hand.players):
        yield Line(protocol.format_hand(number, hand.dealer, deal.hands[seat], deal.layout), seat)
    for event in hand.events:
        yield _tell(event)


def turn_cues(hand: Hand) -> Iterator[Cue]:
    """One turn of ``hand``, told as it happens: ``go`` to the seat to move, its ``play`` to
    all, then, when the turned card has several targets, ``pick`` to the same seat, and the
    ``turn`` to all.

    At each :class:`Ask` the caller applies the decision to ``hand`` before reading on; the
    lines after it are read from the hand.
    """
    seat = hand.to_move
    yield Ask("go", hand.view(seat))
    if hand.pick_card is not None:
        yield _tell(hand.events[-1])
        yield Ask("pick", hand.view(seat))
    else:
        yield _tell(hand.events[-2])
    yield _tell(hand.events[-1])


def score_cue(scores: Sequence[int], totals: Sequence[int]) -> Line:
    """The ``score`` line that ends a hand, to every seat."""
    return Line(protocol.format_score(scores, totals))


def end_cue(totals: Sequence[int], ranks: Sequence[int]) -> Line:
    """The ``end`` line that ends a match, to every seat."""
    return Line(protocol.format_end(totals, ranks))


def _tell(event: Event) -> Line:
    return Line(protocol.format_event(event), None, event)
