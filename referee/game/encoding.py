"""One encoding of a seat's decision for learning agents: observation vector and action index.

Pure code, no I/O, no numpy at import time, computed from a :class:`referee.game.rules.SeatView`
and the public match totals, so the PettingZoo environment (:mod:`referee.learning.env`) and the
protocol bridge (:mod:`referee.learning.policy_bot`) cannot encode a position differently: both
call :func:`arrays`. The actions (:data:`ACTIONS`: ``go`` 0..259, ``pick`` 260..311) and the
observation's slices (:data:`OBS_SIZE` floats) are tabled in ``docs/learning.md``.

>>> from referee.game.rules import Deal, Hand
>>> hand = Hand(Deal.from_seed(3, "doc"), dealer=0)
>>> view = hand.view(hand.to_move)
>>> sorted(legal_actions(view)) == sorted(move_action(m) for m in hand.legal_moves())
True
>>> decode(move_action(hand.legal_moves()[0]), view) == hand.legal_moves()[0]
True
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from referee.game.cards import DECK, Card
from referee.game.rules import PARTNER, TURNS_PER_HAND, Move, SeatView, Variant, legal_moves_on

GO_ACTIONS = 52 * 5
PICK_BASE = GO_ACTIONS
ACTIONS = GO_ACTIONS + 52
"""Size of the discrete action space."""

HAND, TABLE, CAPTURED = 0, 52, 104
PLAYED, UNSEEN, PICK_CARD = 312, 364, 416
PICKING, STOCK, POINTS, HELD, DEALER, PLAYERS, RED_FROG, TOTALS = (
    468, 469, 470, 474, 478, 482, 485, 486)
OBS_SIZE = 490
"""Length of the observation vector."""

_HAND_TOTAL = {v: float(v.hand_total) for v in Variant}
_ALL = frozenset(range(52))


class ActionError(ValueError):
    """Raised for an action index that is not a legal decision in the position."""


def move_action(move: Move) -> int:
    """The action index of a ``go`` answer (a sweep's named target is folded into slot 0 only
    when the move names none: pass moves as :func:`referee.game.rules.legal_moves_on` gives
    them)."""
    if move.target is None:
        return move.card * 5
    return move.card * 5 + 1 + (move.target & 3)


def pick_action(target: int) -> int:
    """The action index of a ``pick`` answer."""
    return PICK_BASE + target


def legal_actions(view: SeatView) -> list[int]:
    """The legal action indices of the seat in ``view`` (empty when it is not to decide)."""
    if view.pick_card is not None:
        return [PICK_BASE + t for t in view.pick_options]
    if view.to_move != view.seat or not view.hand:
        return []
    return move_actions(legal_moves_on(view.hand, view.table))


def move_actions(moves: Iterable[Move]) -> list[int]:
    """The action indices of ``go`` answers (moves as the rules list them)."""
    return [c * 5 if t is None else c * 5 + 1 + (t & 3) for c, t in moves]


def decode(action: int, view: SeatView) -> Move | Card:
    """The decision ``action`` stands for: a :class:`Move` to play, or a :class:`Card` to pick.

    :raises ActionError: if ``action`` is not legal in ``view``.
    """
    a = int(action)
    if a not in legal_actions(view):
        raise ActionError(f"action {action!r} is not legal here")
    if a >= PICK_BASE:
        return DECK[a - PICK_BASE]
    card, slot = divmod(a, 5)
    if slot == 0:
        return Move(DECK[card], None)
    return Move(DECK[card], DECK[PARTNER[card >> 2] * 4 + slot - 1])


def answer_text(action: int, view: SeatView) -> str:
    """The protocol answer line (without ``\\n``) for a legal ``action``."""
    return str(decode(action, view))


def sparse(
    view: SeatView, totals: Sequence[int] = (), target: int | None = None
) -> tuple[list[int], list[int], list[float]]:
    """The observation as the indices that are 1, and the indices and values of the scalars.

    ``totals`` are the match totals by seat before this hand (public: the ``score`` lines) and
    ``target`` the match target; leave them out for single hands.
    """
    seat, n = view.seat, view.players
    captured = view.captured
    ones: list[int] = list(view.hand)
    ones += [TABLE + c for c in view.table]
    pts = view.variant.points
    total = _HAND_TOTAL[view.variant]
    idx: list[int] = []
    vals: list[float] = []
    for k in range(n):
        pile = captured[(seat + k) % n]
        if pile:
            base = CAPTURED + 52 * k
            ones += [base + c for c in pile]
            points = sum(map(pts.__getitem__, pile))
            if points:
                idx.append(POINTS + k)
                vals.append(points / total)
    ones += [PLAYED + e[2] for e in view.events if e[2] is not None]
    ones += [UNSEEN + c for c in _ALL.difference(view.hand, view.table, *captured)]
    if view.pick_card is not None:
        ones.append(PICK_CARD + view.pick_card)
        ones.append(PICKING)
    size = TURNS_PER_HAND // n
    stock = view.stock_count
    # Every play is followed at once by a turn of the stock, so 24 - stock turns have started;
    # turn t is played by seat dealer + 1 + t, seat +first here.
    rounds, extra = divmod(TURNS_PER_HAND - stock, n)
    first = (view.dealer + 1 - seat) % n
    for k in range(n):
        held = size - rounds - (1 if (k - first) % n < extra else 0)
        if held:
            idx.append(HELD + k)
            vals.append(held / 12.0)
    if stock:
        idx.append(STOCK)
        vals.append(stock / TURNS_PER_HAND)
    ones.append(DEALER + (view.dealer - seat) % n)
    ones.append(PLAYERS + n - 2)
    if view.variant is Variant.RED_FROG:
        ones.append(RED_FROG)
    if target and totals:
        for k in range(n):
            t = totals[(seat + k) % n]
            if t > 0:
                idx.append(TOTALS + k)
                vals.append(min(t / target, 1.0))
    return ones, idx, vals


def dense(view: SeatView, totals: Sequence[int] = (), target: int | None = None) -> list[float]:
    """The observation as a plain list of :data:`OBS_SIZE` floats (no numpy needed)."""
    out = [0.0] * OBS_SIZE
    ones, idx, vals = sparse(view, totals, target)
    for i in ones:
        out[i] = 1.0
    for i, v in zip(idx, vals, strict=True):
        out[i] = v
    return out


def mask_list(view: SeatView) -> list[int]:
    """The action mask as a plain list of :data:`ACTIONS` 0/1 ints."""
    out = [0] * ACTIONS
    for a in legal_actions(view):
        out[a] = 1
    return out


def arrays(
    view: SeatView,
    totals: Sequence[int] = (),
    target: int | None = None,
    *,
    legal: Sequence[int] | None = None,
) -> tuple[Any, Any]:
    """The observation (float32) and action mask (int8) as numpy arrays: what the environment
    observes and what the bridge hands a policy. Needs numpy (the ``rl`` extra).

    ``legal`` is :func:`legal_actions` of ``view`` when the caller has it already.
    """
    import numpy as np

    intp = np.intp
    obs = np.zeros(OBS_SIZE, dtype=np.float32)
    ones, idx, vals = sparse(view, totals, target)
    obs[np.fromiter(ones, intp, len(ones))] = 1.0  # fromiter: the fastest list-to-index path
    if idx:
        obs[np.fromiter(idx, intp, len(idx))] = vals
    mask = np.zeros(ACTIONS, dtype=np.int8)
    if legal is None:
        legal = legal_actions(view)
    if legal:
        mask[np.fromiter(legal, intp, len(legal))] = 1
    return obs, mask
