"""Properties of random legal games: hypothesis draws the deal, the seats, the variant and every
choice, and the engine must keep its invariants at every step. Each property's examples are
``examples(weight)``: a fifth in ``make test``, four times as many in ``make test-deep``."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterator, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import examples
from referee.game.cards import DECK, Card
from referee.game.rules import TURNS_PER_HAND, Deal, Hand, IllegalMoveError, Move, Variant

# Strategies and helpers.


@st.composite
def hands(draw: st.DrawFn) -> tuple[Hand, random.Random]:
    """A fresh hand and the random source for its choices.

    Some deals are rearranged so the layout holds three or four of a kind: random shuffles
    rarely do, and the layout specials must keep the invariants too.
    """
    players = draw(st.sampled_from([2, 3, 4]))
    variant = draw(st.sampled_from(list(Variant)))
    dealer = draw(st.integers(0, players - 1))
    deck = list(DECK)
    random.Random(draw(st.integers(0, 2**32 - 1))).shuffle(deck)
    size = TURNS_PER_HAND // players
    special = draw(st.sampled_from([0, 0, 3, 4]))
    if special:
        r = draw(st.integers(0, 12))
        chosen = [c for c in deck if c.rank == r][:special]
        rest = [c for c in deck if c not in chosen]
        fill = [c for c in rest if c.rank != r][: 4 - special]
        rest = [c for c in rest if c not in fill]
        layout = chosen + fill
    else:
        layout = deck[players * size:players * size + 4]
        rest = deck[:players * size] + deck[players * size + 4:]
    deal = Deal.from_cards(
        [rest[i * size:(i + 1) * size] for i in range(players)], layout, rest[players * size:])
    return Hand(deal, dealer=dealer, variant=variant), draw(st.randoms(use_true_random=False))


def steps(hand: Hand, rng: random.Random) -> Iterator[Hand]:
    """Yields the hand before the first action and after each play or pick, to the end."""
    yield hand
    while not hand.is_over():
        if hand.pick_card is not None:
            hand.pick(rng.choice(hand.pick_options))
        else:
            hand.play(*rng.choice(hand.legal_moves()))
        yield hand


def advance(hand: Hand, rng: random.Random, actions: int) -> None:
    """Plays up to ``actions`` random plays and picks (fewer if the hand ends first)."""
    for i, _ in enumerate(steps(hand, rng)):
        if i == actions:
            break


def all_cards(hand: Hand) -> list[Card]:
    """Every card of the hand: hands, table, stock, captured piles and the pending turned card."""
    found = [c for h in hand.hands for c in h] + hand.table + hand.stock
    found += [c for p in hand.captured for c in p]
    if hand.pick_card is not None:
        found.append(hand.pick_card)
    return found


def snapshot(hand: Hand) -> tuple[object, ...]:
    """Everything that changes while a hand is played, as plain values."""
    return (
        [list(h) for h in hand.hands], list(hand.table), list(hand.stock),
        [list(p) for p in hand.captured], list(hand.events), hand.turn, hand.to_move,
        hand.pick_card, hand.pick_options, hand.scores(),
    )


def cards_in(value: object) -> set[Card]:
    """Every card anywhere inside a view (recursively through its fields)."""
    if isinstance(value, Card):
        return {value}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return set().union(*(cards_in(getattr(value, f.name)) for f in dataclasses.fields(value)))
    if isinstance(value, tuple | list | set | frozenset):
        return set().union(set(), *(cards_in(v) for v in value))
    return set()


# Properties.


@settings(max_examples=examples(150))
@given(hands())
def test_cards_are_conserved_and_the_hand_ends_clean(game: tuple[Hand, random.Random]) -> None:
    hand, rng = game
    takes = len(hand.events)
    turns = []
    for h in steps(hand, rng):
        found = all_cards(h)
        assert sorted(found) == list(DECK)
        assert h.scores() == [sum(h.variant.points[c] for c in p) for p in h.captured]
        turns.append(h.turn)
    assert turns == sorted(turns)
    assert hand.turn == 24
    assert hand.is_over()
    assert hand.table == []
    assert hand.stock == []
    assert all(h == [] for h in hand.hands)
    assert hand.pick_card is None
    assert sum(len(p) for p in hand.captured) == 52
    assert sum(hand.scores()) == hand.variant.hand_total
    assert sum(hand.scores()) == (240 if hand.variant is Variant.CLASSIC else 218)
    assert len(hand.events) == takes + 2 * 24


@pytest.mark.slow
@settings(max_examples=examples(100))
@given(hands())
def test_a_view_never_shows_another_seats_cards(game: tuple[Hand, random.Random]) -> None:
    hand, rng = game
    public: set[Card] = set(hand.deal.layout)
    for h in steps(hand, rng):
        for e in h.events:
            if e.card is not None:
                public.add(e.card)
            public.update(e.captured)
        if h.pick_card is not None:
            public.add(h.pick_card)
        for seat in range(h.players):
            view = h.view(seat)
            seen = cards_in(view)
            assert view.hand == tuple(h.hands[seat])
            assert seen <= public | set(h.hands[seat])
            assert not seen & set(h.stock)
            for other in range(h.players):
                if other != seat:
                    hidden = set(h.hands[other])
                    assert not hidden & set(view.hand)
                    assert not hidden & seen
            assert set(view.table) <= public
            assert {c for p in view.captured for c in p} <= public


@settings(max_examples=examples(60))
@given(hands())
def test_legal_moves_are_exactly_the_moves_play_accepts(game: tuple[Hand, random.Random]) -> None:
    hand, rng = game
    layout_threes = {
        r for r in (4, 9, 10, 11, 12) if sum(c.rank == r for c in hand.deal.layout) == 3}
    for h in steps(hand, rng):
        if h.is_over() or h.pick_card is not None:
            assert h.legal_moves() == []
            continue
        moves = h.legal_moves()
        assert len(moves) == len(set(moves))
        assert {m.card for m in moves} == set(h.hands[h.to_move])
        for c in h.hands[h.to_move]:
            found = h.targets(c)
            mine = [m for m in moves if m.card == c]
            if not found:
                assert mine == [Move(c)]
            elif c.rank in layout_threes:
                assert len(found) == 3
                assert mine == [Move(c)]
            else:
                assert sorted(mine) == sorted(Move(c, t) for t in found)
            for t in h.table:
                if t not in found:
                    try:
                        h.copy().play(c, t)
                    except IllegalMoveError:
                        pass
                    else:
                        raise AssertionError(f"{c} took {t}, which it cannot capture")
        for m in moves:
            trial = h.copy()
            event = trial.play(*m)
            assert event.card == m.card
            assert m.target is None or m.target in event.captured
            assert bool(event.captured) == bool(h.targets(m.card))


@settings(max_examples=examples(150))
@given(hands(), st.integers(0, 60), st.integers(0, 2**32 - 1))
def test_rollout_scores_the_whole_hand_and_leaves_it_unchanged(
    game: tuple[Hand, random.Random], stop: int, seed: int
) -> None:
    hand, rng = game
    advance(hand, rng, stop)
    before = snapshot(hand)
    now = hand.scores()
    result = hand.rollout(random.Random(seed))
    assert snapshot(hand) == before
    assert sum(result) == hand.variant.hand_total
    assert all(r >= s for r, s in zip(result, now, strict=True))
    assert hand.rollout(random.Random(seed)) == result
    if hand.is_over():
        assert result == now


class SortedChoice:
    """A roll-out policy that chooses by card, not by position: the ``k``-th lowest card or
    option, ``k`` drawn from its own random source (the roll-out's is not used)."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def nth(self, cards: Sequence[Card]) -> Card:
        return sorted(cards)[self.rng.randrange(len(cards))]

    def card(self, holding: list[Card], table: list[list[Card]], rnd: object) -> int:
        return holding.index(self.nth(holding))

    def target(self, card: Card, options: Sequence[Card], rnd: object) -> int:
        assert len(options) > 1
        return list(options).index(self.nth(options))


@settings(max_examples=examples(150))
@given(hands(), st.integers(0, 60), st.integers(0, 2**32 - 1))
def test_rollout_with_a_policy_plays_as_the_move_api_does(
    game: tuple[Hand, random.Random], stop: int, seed: int
) -> None:
    hand, rng = game
    advance(hand, rng, stop)
    before = snapshot(hand)
    result = hand.rollout(random.Random(0), policy=SortedChoice(seed))
    assert snapshot(hand) == before
    same = SortedChoice(seed)
    while not hand.is_over():
        if hand.pick_card is not None:
            hand.pick(same.nth(hand.pick_options))
            continue
        card = same.nth(hand.hands[hand.to_move])
        found = hand.targets(card)
        sweep = len(found) == 3 and card.rank in hand.sweep
        hand.play(card, same.nth(found) if len(found) > 1 and not sweep else None)
    assert result == hand.scores()


@settings(max_examples=examples(80))
@given(hands(), st.integers(0, 60))
def test_copy_is_independent(game: tuple[Hand, random.Random], stop: int) -> None:
    hand, rng = game
    advance(hand, rng, stop)
    before = snapshot(hand)
    twin = hand.copy()
    assert snapshot(twin) == before
    for _ in steps(twin, random.Random(1)):
        assert snapshot(hand) == before
    copied_end = snapshot(twin)
    for _ in steps(hand, random.Random(2)):
        pass
    assert snapshot(twin) == copied_end
    assert twin.is_over()
    assert sum(twin.scores()) == twin.variant.hand_total
