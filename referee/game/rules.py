"""The rules of Chinese Ten, exactly as the referee enforces them (``seeds/rules.md``).

Pure code, no I/O. A :class:`Deal` is the cards of one hand; a :class:`Hand` is that hand being
played, and knows its legal moves, applies them, scores and shows each seat only what it may see;
a :class:`Match` strings hands together until a total reaches the target.

>>> deal = Deal.from_seed(3, "doc")
>>> hand = Hand(deal, dealer=0)
>>> while not hand.is_over():
...     if hand.pick_options:
...         _ = hand.pick(hand.pick_options[0])
...     else:
...         _ = hand.play(*hand.legal_moves()[0])
>>> sum(hand.scores())
240
"""

from __future__ import annotations

import enum
import hashlib
import hmac
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple, Protocol

from referee.game.cards import DECK, FIVE, JACK, KING, QUEEN, TEN, Card, format_cards

TURNS_PER_HAND = 24
"""Turns in a hand, and so the cards dealt to the seats (``TURNS_PER_HAND // players`` each)
and the cards in the stock (one turned per turn)."""
DEFAULT_TARGET = 1000
"""Points that end a match unless a tournament or ``play`` sets another target."""
LAYOUT_SIZE = 4
STOCK_SIZE = TURNS_PER_HAND
SWEEP_RANKS = frozenset({FIVE, TEN, JACK, QUEEN, KING})
"""Ranks whose three of a kind in the layout is swept by the fourth card (and whose four of a
kind in the layout goes to the dealer)."""

PARTNER: tuple[int, ...] = tuple((8 - r) if r < TEN else r for r in range(13))
"""For each rank, the rank it captures: values adding to 10, or the same rank for T, J, Q, K."""


class Variant(enum.Enum):
    """Which scoring table a match uses."""

    CLASSIC = "classic"
    """Chinese Ten: red cards and the ace of spades score (240 points a hand)."""
    RED_FROG = "red-frog-black-frog"
    """Red Frog Black Frog (Gob Dum Gob Dang): black cards score (218 points a hand)."""

    @property
    def points(self) -> tuple[int, ...]:
        """Points of each card, indexed by card."""
        return _POINTS[self]

    @property
    def hand_total(self) -> int:
        """Points in play in one hand."""
        return sum(_POINTS[self])


def _classic(c: Card) -> int:
    r = c.rank
    if c == Card.parse("As"):
        return 30
    if not c.is_red:
        return 0
    if r == 0:
        return 20
    return r + 1 if r <= 7 else 10


def _red_frog(c: Card) -> int:
    r = c.rank
    if c == Card.parse("As"):
        return 50
    if c.is_red or r == 0:
        return 0
    return r + 1 if r <= 8 else 10


_POINTS: dict[Variant, tuple[int, ...]] = {
    Variant.CLASSIC: tuple(_classic(c) for c in DECK),
    Variant.RED_FROG: tuple(_red_frog(c) for c in DECK),
}


class RulesError(ValueError):
    """Base class for rule violations."""


class IllegalMoveError(RulesError):
    """Raised for a move the rules do not allow in the current position."""


class DealError(RulesError):
    """Raised for a deal that is not exactly one deck laid out for 2-4 players."""


class Move(NamedTuple):
    """A card played from hand and the table card it captures (``None``: no choice to make)."""

    card: Card
    target: Card | None = None

    def __str__(self) -> str:
        return str(self.card) if self.target is None else f"{self.card} {self.target}"


class Event(NamedTuple):
    """Something that happened on the table, public to every seat.

    ``kind`` is ``"take"`` (the dealer's four of a kind, ``card`` is ``None``), ``"play"`` (a card
    from hand) or ``"turn"`` (the top card of the stock).
    """

    kind: str
    seat: int
    card: Card | None
    captured: tuple[Card, ...]


@dataclass(frozen=True)
class Deal:
    """The cards of one hand: each seat's cards, the face-up layout, and the stock in turn order."""

    hands: tuple[tuple[Card, ...], ...]
    layout: tuple[Card, ...]
    stock: tuple[Card, ...]

    @property
    def players(self) -> int:
        """Number of seats."""
        return len(self.hands)

    @classmethod
    def random(cls, players: int, rng: random.Random) -> Deal:
        """Shuffles a deck with ``rng`` and deals it.

        :raises DealError: unless ``players`` is 2, 3 or 4.
        """
        _check_players(players, DealError)
        deck = list(DECK)
        rng.shuffle(deck)
        size = TURNS_PER_HAND // players
        hands = tuple(tuple(deck[i * size:(i + 1) * size]) for i in range(players))
        at = players * size
        return cls(hands, tuple(deck[at:at + LAYOUT_SIZE]), tuple(deck[at + LAYOUT_SIZE:]))

    @classmethod
    def from_seed(cls, players: int, seed: int | str) -> Deal:
        """The deal of :meth:`random` with ``random.Random(seed)``: the same on every machine."""
        return cls.random(players, random.Random(seed))

    @classmethod
    def from_key(cls, players: int, key: bytes, label: str) -> Deal:
        """The deal of :meth:`random` with a generator seeded by HMAC-SHA256(``key``,
        ``label``): unpredictable without ``key``, the same on every machine with it."""
        digest = hmac.new(key, label.encode(), hashlib.sha256).digest()
        return cls.random(players, random.Random(int.from_bytes(digest, "big")))

    @classmethod
    def from_cards(
        cls,
        hands: Sequence[Iterable[Card | str]],
        layout: Iterable[Card | str],
        stock: Iterable[Card | str],
    ) -> Deal:
        """Builds a deal from explicit cards (text or :class:`Card`) and checks it.

        :raises DealError: unless the cards are exactly one deck in the right sizes.
        :raises CardError: for text that is not a card.
        """
        deal = cls(
            tuple(tuple(_as_card(c) for c in h) for h in hands),
            tuple(_as_card(c) for c in layout),
            tuple(_as_card(c) for c in stock),
        )
        deal.validate()
        return deal

    def validate(self) -> None:
        """Checks that the deal is exactly one deck in the right sizes.

        :raises DealError: naming what is wrong.
        """
        _check_players(self.players, DealError)
        size = TURNS_PER_HAND // self.players
        for seat, h in enumerate(self.hands):
            if len(h) != size:
                raise DealError(f"seat {seat} has {len(h)} cards, expected {size}")
        if len(self.layout) != LAYOUT_SIZE:
            raise DealError(f"layout has {len(self.layout)} cards, expected {LAYOUT_SIZE}")
        if len(self.stock) != STOCK_SIZE:
            raise DealError(f"stock has {len(self.stock)} cards, expected {STOCK_SIZE}")
        seen: set[int] = set()
        for c in (*[c for h in self.hands for c in h], *self.layout, *self.stock):
            if not isinstance(c, int) or not 0 <= c < len(DECK):
                raise _not_a_card(c)
            if c in seen:
                raise DealError(f"card {Card(c)} is dealt twice")
            seen.add(c)


def _as_card(c: Card | str) -> Card:
    if isinstance(c, str):
        return Card.parse(c)
    if not isinstance(c, int) or not 0 <= c < len(DECK):
        raise _not_a_card(c)
    return DECK[c]


def _not_a_card(c: object) -> DealError:
    return DealError(f"not a card: {int(c) if isinstance(c, int) else c!r}")


def _check_players(players: int, error: type[ValueError] = ValueError) -> None:
    if players not in (2, 3, 4):
        raise error(f"players must be 2, 3 or 4, not {players}")


@dataclass(frozen=True)
class SeatView:
    """What one seat may know: its own cards and everything public. Nothing else."""

    seat: int
    players: int
    dealer: int
    variant: Variant
    hand: tuple[Card, ...]
    """This seat's own cards."""
    table: tuple[Card, ...]
    stock_count: int
    captured: tuple[tuple[Card, ...], ...]
    """Every seat's captured pile (public: captures happen face up)."""
    events: tuple[Event, ...]
    """Everything played, turned and captured so far, in order."""
    to_move: int
    pick_card: Card | None
    """The turned card this seat must choose a target for, if it is this seat's pick."""
    pick_options: tuple[Card, ...]


def targets_on(card: int, table: Iterable[Card]) -> tuple[Card, ...]:
    """The cards of ``table`` that ``card`` would capture if it landed there: those of its
    partner rank (:data:`PARTNER`); a sweep lists all three."""
    p = PARTNER[card >> 2]
    return tuple(t for t in table if t >> 2 == p)


def legal_moves_on(holding: Iterable[Card], table: Sequence[Card]) -> list[Move]:
    """The legal moves of the cards ``holding`` on ``table``, from these cards alone (what a
    ``go`` request tells a seat), exactly as :meth:`Hand.legal_moves` gives them.

    Three cards of a sweep rank on the table can only be a layout three of a kind (a fourth
    card of the rank would have captured a lone one), so the fourth sweeps them.
    """
    counts = [0] * 13
    for t in table:
        counts[t >> 2] += 1
    sweep = frozenset(r for r in SWEEP_RANKS if counts[r] == 3)
    return _moves(holding, lambda card: targets_on(card, table), sweep)


def _moves(
    holding: Iterable[Card], targets: Callable[[Card], tuple[Card, ...]], sweep: frozenset[int]
) -> list[Move]:
    """Every (card, target) pair: ``target`` is ``None`` when the card captures nothing or
    sweeps a three of a kind (a rank in ``sweep`` with three targets)."""
    moves: list[Move] = []
    for c in holding:
        found = targets(c)
        if not found or (len(found) == 3 and c >> 2 in sweep):
            moves.append(Move(c, None))
        else:
            moves.extend(Move(c, t) for t in found)
    return moves


class RolloutPolicy(Protocol):
    """The choices :meth:`Hand.rollout` makes for every seat in place of uniform random ones.

    Both methods get the roll-out's random source (``rnd()`` is uniform in [0, 1)) and return an
    index; neither may change the lists it is given.
    """

    def card(
        self, holding: list[Card], table: list[list[Card]], rnd: Callable[[], float]
    ) -> int:
        """Index in ``holding`` (the cards of the seat to move) of the card to play;
        ``table[r]`` lists the table cards of rank ``r``."""
        ...

    def target(self, card: Card, options: Sequence[Card], rnd: Callable[[], float]) -> int:
        """Index in ``options`` (two or more table cards, not a sweep) of the one ``card``
        captures; ``card`` was played from hand or turned from the stock."""
        ...


class Hand:
    """One hand being played: 24 turns of play a card, turn a card.

    The seat to move chooses with :meth:`play`. When the turned card could capture several table
    cards, :attr:`pick_options` is set and the same seat chooses with :meth:`pick`.
    """

    __slots__ = (
        "_counts", "captured", "deal", "dealer", "events", "hands", "pick_card", "pick_options",
        "players", "stock", "sweep", "table", "to_move", "turn", "variant",
    )

    def __init__(self, deal: Deal, *, dealer: int, variant: Variant = Variant.CLASSIC) -> None:
        self.deal = deal
        self.players = deal.players
        if not 0 <= dealer < self.players:
            raise ValueError(f"dealer {dealer} is not a seat of {self.players}")
        self.dealer = dealer
        self.variant = variant
        self.hands: list[list[Card]] = [list(h) for h in deal.hands]
        self.table: list[Card] = list(deal.layout)
        self.stock: list[Card] = list(reversed(deal.stock))
        """Cards still to turn; the next one is last."""
        self.captured: list[list[Card]] = [[] for _ in range(self.players)]
        self.events: list[Event] = []
        self.to_move = (dealer + 1) % self.players
        self.turn = 0
        """Turns completed (0..24)."""
        self.pick_card: Card | None = None
        self.pick_options: tuple[Card, ...] = ()
        counts = [0] * 13
        for c in self.table:
            counts[c >> 2] += 1
        self._counts = counts
        self.sweep = frozenset(r for r in SWEEP_RANKS if counts[r] == 3)
        """Ranks of a layout three of a kind, swept by the fourth card."""
        for r in SWEEP_RANKS:
            if counts[r] == 4:
                taken = tuple(c for c in self.table if c >> 2 == r)
                self._remove(taken)
                self.captured[dealer].extend(taken)
                self.events.append(Event("take", dealer, None, taken))

    # Queries.

    def is_over(self) -> bool:
        """Whether all 24 turns have been played."""
        return self.turn == TURNS_PER_HAND

    def targets(self, card: Card) -> tuple[Card, ...]:
        """Table cards ``card`` would capture if it landed now (a sweep lists all three)."""
        if not self._counts[PARTNER[card >> 2]]:
            return ()
        return targets_on(card, self.table)

    def legal_moves(self) -> list[Move]:
        """Every legal (card, target) pair for the seat to move, exactly.

        ``target`` is ``None`` when the card captures nothing or sweeps a three of a kind.
        Empty while a pick is pending or the hand is over.
        """
        if self.pick_card is not None or self.turn == TURNS_PER_HAND:
            return []
        return _moves(self.hands[self.to_move], self.targets, self.sweep)

    def scores(self) -> list[int]:
        """Points captured so far by each seat."""
        pts = _POINTS[self.variant]
        return [sum(pts[c] for c in pile) for pile in self.captured]

    def view(self, seat: int) -> SeatView:
        """What ``seat`` may see now."""
        picking = self.pick_card is not None and self.to_move == seat
        # The referee builds one view per request. A frozen dataclass's __init__ sets each field
        # through object.__setattr__, most of a view's cost; the fields go straight into the new
        # instance's __dict__ instead: the same SeatView (equal, same repr and hash).
        view = object.__new__(SeatView)
        fields = view.__dict__
        fields["seat"] = seat
        fields["players"] = self.players
        fields["dealer"] = self.dealer
        fields["variant"] = self.variant
        fields["hand"] = tuple(self.hands[seat])
        fields["table"] = tuple(self.table)
        fields["stock_count"] = len(self.stock)
        fields["captured"] = tuple(map(tuple, self.captured))
        fields["events"] = tuple(self.events)
        fields["to_move"] = self.to_move
        fields["pick_card"] = self.pick_card if picking else None
        fields["pick_options"] = self.pick_options if picking else ()
        return view

    # Moves.

    def play(self, card: Card, target: Card | None = None) -> Event:
        """Plays ``card`` from the hand of the seat to move, capturing ``target``, then turns the
        top card of the stock. Returns the play's event; the turn's event follows in
        :attr:`events` unless a pick is now pending.

        ``target`` may be left out when the card captures nothing or has exactly one target; for a
        sweep it may be any of the three.

        :raises IllegalMoveError: for a card not in hand, a target the card cannot capture, a
            missing target when there are several, or a play while a pick is pending.
        """
        if self.pick_card is not None:
            raise IllegalMoveError(f"seat {self.to_move} must pick a target for {self.pick_card}")
        if self.turn == TURNS_PER_HAND:
            raise IllegalMoveError("the hand is over")
        seat = self.to_move
        holding = self.hands[seat]
        if card not in holding:
            raise IllegalMoveError(f"{Card(card)} is not in seat {seat}'s hand")
        found = self.targets(card)
        chosen = self._choose(card, target, found)
        holding.remove(card)
        event = self._land("play", seat, card, chosen, found)
        turned = self.stock.pop()
        found = self.targets(turned)
        if len(found) > 1 and not self._sweeps(turned, found):
            self.pick_card = turned
            self.pick_options = found
        else:
            self._land("turn", seat, turned, found[0] if found else None, found)
            self._next()
        return event

    def pick(self, target: Card) -> Event:
        """Chooses which table card the turned card captures; returns the turn's event.

        :raises IllegalMoveError: if no pick is pending or ``target`` was not offered.
        """
        turned = self.pick_card
        if turned is None:
            raise IllegalMoveError("no pick is pending")
        if target not in self.pick_options:
            raise IllegalMoveError(
                f"{Card(target)} is not one of {format_cards(self.pick_options)} for {turned}"
            )
        event = self._land("turn", self.to_move, turned, target, self.pick_options)
        self.pick_card = None
        self.pick_options = ()
        self._next()
        return event

    def copy(self) -> Hand:
        """An independent copy (events and deal are shared, being immutable)."""
        new = Hand.__new__(Hand)
        new.deal, new.players, new.dealer, new.variant = (
            self.deal, self.players, self.dealer, self.variant)
        new.hands = [h[:] for h in self.hands]
        new.table = self.table[:]
        new.stock = self.stock[:]
        new.captured = [p[:] for p in self.captured]
        new.events = self.events[:]
        new.to_move, new.turn, new.sweep = self.to_move, self.turn, self.sweep
        new.pick_card, new.pick_options = self.pick_card, self.pick_options
        new._counts = self._counts[:]
        return new

    def rollout(
        self, rng: random.Random | None = None, *, policy: RolloutPolicy | None = None
    ) -> list[int]:
        """Plays the rest of the hand and returns the final scores; the hand itself is left
        unchanged. This is the fast path for simulations.

        Without ``policy`` each choice is a uniform card from hand, then a uniform target among
        that card's (``rng`` draws once for each). With one, ``policy.card`` and
        ``policy.target`` make those choices (:class:`RolloutPolicy`); a sweep or a single
        target needs no choice.
        """
        rnd = (rng or random).random
        choose_card = choose_target = None
        if policy is not None:
            choose_card, choose_target = policy.card, policy.target
        pts = _POINTS[self.variant]
        score = self.scores()
        buckets: list[list[Card]] = [[] for _ in range(13)]
        for c in self.table:
            buckets[c >> 2].append(c)
        hands = [h[:] for h in self.hands]
        stock = self.stock[:]
        seat, players = self.to_move, self.players
        partner = PARTNER
        remaining = TURNS_PER_HAND - self.turn
        if self.pick_card is not None:
            options = self.pick_options
            t = options[int(rnd() * len(options)) if choose_target is None
                        else choose_target(self.pick_card, options, rnd)]
            buckets[t >> 2].remove(t)
            score[seat] += pts[self.pick_card] + pts[t]
            remaining -= 1
            seat = (seat + 1) % players
        for _ in range(remaining):
            h = hands[seat]
            i = int(rnd() * len(h)) if choose_card is None else choose_card(h, buckets, rnd)
            played = h[i]
            h[i] = h[-1]
            h.pop()
            for c in (played, stock.pop()):
                r = c >> 2
                p = partner[r]
                b = buckets[p]
                if not b:
                    buckets[r].append(c)
                elif len(b) == 3 and p == r:
                    score[seat] += pts[c] + pts[b[0]] + pts[b[1]] + pts[b[2]]
                    b.clear()
                else:
                    k = len(b)
                    if k == 1:
                        j = 0
                    elif choose_target is None:
                        j = int(rnd() * k)
                    else:
                        j = choose_target(c, b, rnd)
                    score[seat] += pts[c] + pts[b[j]]
                    b[j] = b[-1]
                    b.pop()
            seat += 1
            if seat == players:
                seat = 0
        return score

    # Internals.

    def _sweeps(self, card: Card, found: tuple[Card, ...]) -> bool:
        return len(found) == 3 and (card >> 2) in self.sweep

    def _choose(self, card: Card, target: Card | None, found: tuple[Card, ...]) -> Card | None:
        if not found:
            if target is not None:
                raise IllegalMoveError(f"{Card(card)} captures nothing, not {Card(target)}")
            return None
        if target is None:
            if len(found) > 1 and not self._sweeps(card, found):
                raise IllegalMoveError(
                    f"{Card(card)} must name its target, one of {format_cards(found)}")
            return found[0]
        if target not in found:
            raise IllegalMoveError(f"{Card(card)} cannot capture {Card(target)}")
        return target

    def _land(
        self, kind: str, seat: int, card: Card, target: Card | None, found: tuple[Card, ...]
    ) -> Event:
        if target is None:
            self.table.append(card)
            self._counts[card >> 2] += 1
            captured: tuple[Card, ...] = ()
        else:
            captured = found if self._sweeps(card, found) else (target,)
            self._remove(captured)
            pile = self.captured[seat]
            pile.append(card)
            pile.extend(captured)
        event = Event(kind, seat, card, captured)
        self.events.append(event)
        return event

    def _remove(self, cards: Iterable[Card]) -> None:
        for c in cards:
            self.table.remove(c)
            self._counts[c >> 2] -= 1

    def _next(self) -> None:
        self.turn += 1
        self.to_move = (self.to_move + 1) % self.players

    def __repr__(self) -> str:
        return (f"<Hand turn {self.turn} to_move {self.to_move} "
                f"table {format_cards(self.table)!r}>")


def rank(totals: Sequence[int], faulted: Iterable[int] = ()) -> list[int]:
    """Ranks seats by total, highest first; equal totals share a rank (1, 1, 3).

    Seats in ``faulted`` rank below every seat that did not fault, and among themselves by total.

    >>> rank([500, 1010, 500]), rank([900, 1010, 400], faulted=[1])
    ([2, 1, 2], [1, 3, 2])
    """
    bad = set(faulted)
    keys = [(i not in bad, t) for i, t in enumerate(totals)]
    return [1 + sum(1 for other in keys if other > k) for k in keys]


class Match:
    """A match: hands until, after a hand, some total has reached the target.

    In hand ``k`` (1-based) the dealer is seat ``(k - 1) mod players``.
    """

    def __init__(
        self, players: int, *, variant: Variant = Variant.CLASSIC, target: int = DEFAULT_TARGET
    ) -> None:
        _check_players(players)
        if target <= 0:
            raise ValueError(f"target must be positive, not {target}")
        self.players = players
        self.variant = variant
        self.target = target
        self.totals = [0] * players
        self.hand_scores: list[list[int]] = []

    @property
    def hand_number(self) -> int:
        """The number of the next hand to play (1-based)."""
        return len(self.hand_scores) + 1

    @property
    def dealer(self) -> int:
        """Dealer of the next hand."""
        return (self.hand_number - 1) % self.players

    def is_over(self) -> bool:
        """Whether a total has reached the target."""
        return any(t >= self.target for t in self.totals)

    def new_hand(self, deal: Deal) -> Hand:
        """Starts the next hand with ``deal``."""
        if self.is_over():
            raise RulesError("the match is over")
        if deal.players != self.players:
            raise DealError(f"deal is for {deal.players} players, the match has {self.players}")
        return Hand(deal, dealer=self.dealer, variant=self.variant)

    def finish_hand(self, hand: Hand) -> list[int]:
        """Adds a finished hand's scores to the totals and returns them."""
        if not hand.is_over():
            raise RulesError("the hand is not over")
        scores = hand.scores()
        self.hand_scores.append(scores)
        self.totals = [t + s for t, s in zip(self.totals, scores, strict=True)]
        return scores

    def ranks(self, faulted: Iterable[int] = ()) -> list[int]:
        """Final ranks (see :func:`rank`)."""
        return rank(self.totals, faulted)
