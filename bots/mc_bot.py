#!/usr/bin/env python3
"""mc-bot: a Monte Carlo (determinization) bot for Chinese Ten, protocol v1.

Run:  python3 bots/mc_bot.py [--max-ms N | --playouts N] [--seed N]

Tracking: the bot keeps its dealt cards, the layout and every public event of the hand. At each
decision it rebuilds the position as a :class:`referee.game.rules.Hand` by replaying those events
on a
deal that fills the unseen cards in arbitrarily (so the engine itself keeps the table, the
captured piles, the sweep ranks, who moves and how many cards each seat holds), and checks the
result against the request line.

Deciding (:class:`Brain`): repeatedly deal the unseen cards (opponents' hands with their right
counts, and the stock order) uniformly at random, apply every candidate move in that same world
(common random numbers) and finish the hand with :meth:`Hand.rollout` under an epsilon-greedy
policy (:class:`EpsilonGreedy`). The candidate with the best mean point margin (own points minus
the opponents' mean; with a constant total per hand this ranks moves exactly like own points)
wins. It stops at its time budget:
``min(ms / 2, ms - 150)`` from when the request was read, capped by ``--max-ms``; or, with
``--playouts N``, after exactly N sampled worlds per decision, whatever the clock says: the same
work, so the same answers, for the same seed and match (the seed is the ``--seed``, else derived
from the match id and seat), on any machine and under any load. A tournament that includes it
then gives the same results when it is played again or resumed. Choose N so that a decision
fits the move time: the bot no longer watches the clock.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

try:
    from referee.game.cards import DECK, Card, CardError
    from referee.game.rules import PARTNER, TURNS_PER_HAND, Deal, Hand, Move, Variant
except ImportError:  # a sandbox shows only this folder and the Python the bot runs on
    sys.exit("mc-bot: cannot import ct-referee's rules engine (the package referee): run me "
             "with a Python that has ct-referee installed (its venv: . .venv/bin/activate, or "
             ".venv/bin/python3 bots/mc_bot.py)")

NAME = "mc-bot 1.0"
EPSILON = 0.1
"""Chance that a playout move is a uniform random card instead of the greedy one."""


def log(message: str) -> None:
    """Logs to stderr (the referee stores it; stdout is for answers only)."""
    print(f"mc-bot: {message}", file=sys.stderr, flush=True)


class EpsilonGreedy:
    """The playout policy (a :class:`referee.game.rules.RolloutPolicy`): with chance ``eps`` a
    uniform random card, else the greedy one; a capture always takes the best target.

    Greedy: play the card whose capture scores most (card + best target, a sweep counts all
    three); with no capture, throw the card worth least.
    """

    __slots__ = ("eps", "pts")

    def __init__(self, variant: Variant, eps: float = EPSILON) -> None:
        self.pts = variant.points
        self.eps = eps

    def card(self, holding: list[Card], table: list[list[Card]],
             rnd: Callable[[], float]) -> int:
        """Index of the card to play."""
        if rnd() < self.eps:
            return int(rnd() * len(holding))
        pts, partner = self.pts, PARTNER
        i, best, low, j = -1, -1, 999, 0
        for k, c in enumerate(holding):
            r = c >> 2
            p = partner[r]
            b = table[p]
            if b:
                if len(b) == 3 and p == r:
                    g = pts[c] + pts[b[0]] + pts[b[1]] + pts[b[2]]
                else:
                    g = pts[c] + max(map(pts.__getitem__, b))
                if g > best:
                    best, i = g, k
            elif best < 0 and pts[c] < low:
                low, j = pts[c], k
        return j if i < 0 else i

    def target(self, card: Card, options: Sequence[Card], rnd: Callable[[], float]) -> int:
        """Index of the best-scoring option (the first of equals)."""
        pts = self.pts
        j = 0
        for k in range(1, len(options)):
            if pts[options[k]] > pts[options[j]]:
                j = k
        return j


def playout(hand: Hand, rnd: random.Random, eps: float = EPSILON) -> list[int]:
    """Finishes ``hand`` (left unchanged) with the :class:`EpsilonGreedy` policy; returns the
    final scores."""
    return hand.rollout(rnd, policy=EpsilonGreedy(hand.variant, eps))


def greedy_move(hand: Hand) -> Move | Card:
    """The best immediate capture (a pick: the best target), else the cheapest throw."""
    pts = hand.variant.points
    if hand.pick_card is not None:
        return max(hand.pick_options, key=pts.__getitem__)

    def gain(m: Move) -> tuple[int, int]:
        found = hand.targets(m.card)
        if not found:
            return (-pts[m.card], 0)
        taken = found if m.target is None else (m.target,)
        return (pts[m.card] + sum(pts[c] for c in taken), 1)

    return max(hand.legal_moves(), key=gain)


class Brain:
    """Monte Carlo decisions on a position (usable in-process, without the protocol).

    ``base`` is any :class:`Hand` in the position to decide: only the seat's own cards and the
    public state are used, as every other seat's cards and the stock are redealt per world.
    """

    def __init__(self, seed: int = 0, eps: float = EPSILON, margin: str = "mean") -> None:
        self.rng = random.Random(seed)
        self.eps = eps
        self.margin = margin
        self.last_worlds = 0
        """Worlds sampled for the last decision (for logging and tests)."""

    def choose_move(self, base: Hand, deadline: float, max_worlds: int = 10**9) -> Move:
        """The move for the seat to move in ``base``, thinking until ``deadline``
        (a :func:`time.perf_counter` value)."""
        moves = base.legal_moves()
        best = self._search(base, moves, lambda w, m: w.play(*m), deadline, max_worlds)
        return moves[best]

    def choose_pick(self, base: Hand, deadline: float, max_worlds: int = 10**9) -> Card:
        """The target for the turned card pending in ``base`` (``base.pick_options``)."""
        options = list(base.pick_options)
        best = self._search(base, options, lambda w, t: w.pick(t), deadline, max_worlds)
        return options[best]

    def _search(self, base: Hand, candidates: Sequence[Any], apply: Callable[[Hand, Any], object],
                deadline: float, max_worlds: int) -> int:
        """Index of the candidate with the best mean margin over sampled worlds (each world is
        shared by all candidates, and so is its playout seed: common random numbers)."""
        self.last_worlds = 0
        if len(candidates) <= 1:
            return 0
        if time.perf_counter() >= deadline:  # no time to sample: the greedy choice
            return list(candidates).index(greedy_move(base))
        seat = base.to_move
        others = [s for s in range(base.players) if s != seat]
        hidden = [c for s in others for c in base.hands[s]] + base.stock
        totals = [0.0] * len(candidates)
        rng, prng = self.rng, random.Random()
        policy = EpsilonGreedy(base.variant, self.eps)
        n_others = len(others)
        while self.last_worlds < max_worlds and (
                self.last_worlds == 0 or time.perf_counter() < deadline):
            rng.shuffle(hidden)
            world = base.copy()
            at = 0
            for s in others:
                size = len(base.hands[s])
                world.hands[s] = hidden[at:at + size]
                at += size
            world.stock = hidden[at:]
            world_seed = rng.getrandbits(32)
            for i, cand in enumerate(candidates):
                w = world.copy()
                apply(w, cand)
                prng.seed(world_seed)
                final = w.rollout(prng, policy=policy)
                rest = [final[s] for s in others]
                opp = max(rest) if self.margin == "max" else sum(rest) / n_others
                totals[i] += final[seat] - opp
            self.last_worlds += 1
        return max(range(len(candidates)), key=totals.__getitem__)


class Tracker:
    """What the bot knows of the current match and hand, from the referee's lines."""

    def __init__(self) -> None:
        self.seat = 0
        self.players = 3
        self.variant = Variant.CLASSIC
        self.dealer = 0
        self.dealt: list[Card] = []
        self.layout: list[Card] = []
        self.events: list[tuple[str, int, Card, tuple[Card, ...]]] = []
        """Every ``play`` and ``turn`` of the hand: kind, seat, card, captured."""

    def new_hand(self, dealer: int, cards: list[Card], layout: list[Card]) -> None:
        """Starts tracking a hand."""
        self.dealer, self.dealt, self.layout, self.events = dealer, cards, layout, []

    def position(self, pending: Card | None = None) -> Hand:
        """The current position rebuilt by replaying the hand's events; ``pending`` is a turned
        card awaiting our pick. Unseen cards are filled in arbitrarily.

        :raises ValueError: (also :class:`referee.game.rules.RulesError`) if the events do not fit.
        """
        size = TURNS_PER_HAND // self.players
        played: list[list[Card]] = [[] for _ in range(self.players)]
        turned = [c for kind, _, c, _ in self.events if kind == "turn"]
        for kind, seat, c, _ in self.events:
            if kind == "play":
                played[seat].append(c)
        if pending is not None:
            turned.append(pending)
        known = set(self.dealt) | set(self.layout) | set(turned)
        known.update(c for seat, p in enumerate(played) if seat != self.seat for c in p)
        filler = [c for c in DECK if c not in known]
        hands = []
        for seat in range(self.players):
            if seat == self.seat:
                hands.append(self.dealt)
            else:
                extra = size - len(played[seat])
                hands.append(played[seat] + filler[:extra])
                filler = filler[extra:]
        deal = Deal.from_cards(hands, self.layout, turned + filler)
        hand = Hand(deal, dealer=self.dealer, variant=self.variant)
        for kind, _seat, c, captured in self.events:
            if kind == "play":
                hand.play(c, captured[0] if captured else None)
            elif hand.pick_card is not None:
                hand.pick(captured[0])
        replayed = [(e.kind, e.seat, e.card, sorted(e.captured)) for e in hand.events
                    if e.kind != "take"]
        if replayed != [(k, s, c, sorted(x)) for k, s, c, x in self.events]:
            raise ValueError("the replayed events differ from the referee's")
        return hand


def parse_keys(tokens: Sequence[str]) -> dict[str, list[str]]:
    """Key/value tokens: a key is a token that is neither a card nor a number."""
    out: dict[str, list[str]] = {}
    values: list[str] = []
    for tok in tokens:
        if tok.lstrip("-").isdigit() or is_card(tok):
            values.append(tok)
        else:
            values = out.setdefault(tok, [])
    return out


def is_card(token: str) -> bool:
    """Whether ``token`` is a card (referee form)."""
    try:
        Card.parse(token)
    except CardError:
        return False
    return len(token) == 2


def cards(values: Sequence[str]) -> list[Card]:
    """The cards among ``values``."""
    return [Card.parse(v) for v in values if is_card(v)]


class Bot:
    """The protocol loop around a :class:`Brain`."""

    def __init__(self, max_ms: float | None, seed: int | None,
                 playouts: int | None = None) -> None:
        self.max_ms = max_ms
        self.seed = seed
        self.playouts = playouts
        """Worlds per decision, regardless of time (``None``: think until the budget)."""
        self.brain = Brain(0 if seed is None else seed)
        self.track = Tracker()

    def budget(self, ms: float, start: float) -> float:
        """The deadline for a request with ``ms`` milliseconds, read at ``start`` (none with
        :attr:`playouts`)."""
        if self.playouts is not None:
            return math.inf
        think = min(ms * 0.5, ms - 150.0)
        if self.max_ms is not None:
            think = min(think, self.max_ms)
        return start + max(think, 0.0) / 1000.0

    def handle(self, line: str, start: float) -> str | None:
        """One referee line in, the answer line (if any) out. ``None`` means nothing to send."""
        tokens = line.split()
        if not tokens:
            return None
        word, rest = tokens[0], tokens[1:]
        t = self.track
        if word == "chinese-ten":
            return f"ready {NAME}"
        if word == "match":
            self.match(rest)
        elif word == "hand" and rest:
            keys = parse_keys(rest[1:])
            t.new_hand(int(keys.get("dealer", ["0"])[0]), cards(keys.get("cards", [])),
                       cards(keys.get("layout", [])))
        elif word in ("play", "turn") and len(rest) >= 2:
            found = cards(rest[1:])
            t.events.append((word, int(rest[0]), found[0], tuple(found[1:])))
        elif word == "go":
            return self.go(parse_keys(rest), start)
        elif word == "pick" and rest:
            return self.pick(Card.parse(rest[0]), parse_keys(rest[1:]), start)
        elif word == "forfeit":
            log(f"forfeited: {line}")
        return None

    def match(self, rest: list[str]) -> None:
        """A new match: seat, players, variant; reseeds the brain."""
        t, match_id = self.track, ""
        for i, tok in enumerate(rest[:-1]):
            nxt = rest[i + 1]
            if tok == "id":
                match_id = nxt
            elif tok in ("seat", "players") and nxt.isdigit():
                setattr(t, tok, int(nxt))
            elif tok == "variant":
                t.variant = Variant(nxt) if nxt in ("classic", "red-frog-black-frog") else t.variant
        t.new_hand(0, [], [])
        seed = self.seed if self.seed is not None else zlib.crc32(f"{match_id}:{t.seat}".encode())
        self.brain.rng.seed(seed)
        log(f"match {match_id}: seat {t.seat} of {t.players}, {t.variant.value}, seed {seed}")

    def go(self, keys: dict[str, list[str]], start: float) -> str:
        """Answers a ``go`` request."""
        holding, table = cards(keys.get("hand", [])), cards(keys.get("table", []))
        deadline = self.budget(float((keys.get("ms") or ["1000"])[0]), start)
        try:
            base = self.track.position()
            if sorted(base.hands[base.to_move]) != sorted(holding) or sorted(base.table) != sorted(
                    table) or base.to_move != self.track.seat or base.pick_card is not None:
                raise ValueError("tracked position differs from the request")
            move = self.brain.choose_move(base, deadline, self.playouts or 10**9)
        except (ValueError, IndexError) as exc:
            log(f"{exc}; answering greedily from the request")
            move = request_greedy(holding, table, self.track.variant)
        log(f"go: {move} after {self.brain.last_worlds} worlds, "
            f"{(time.perf_counter() - start) * 1000:.0f} ms")
        return str(move)

    def pick(self, turned: Card, keys: dict[str, list[str]], start: float) -> str:
        """Answers a ``pick`` request."""
        offered = cards(keys.get("from", []))
        deadline = self.budget(float((keys.get("ms") or ["1000"])[0]), start)
        try:
            base = self.track.position(pending=turned)
            if sorted(base.pick_options) != sorted(offered):
                raise ValueError("tracked pick differs from the request")
            target = self.brain.choose_pick(base, deadline, self.playouts or 10**9)
        except (ValueError, IndexError) as exc:
            log(f"{exc}; picking greedily")
            target = max(offered, key=self.track.variant.points.__getitem__)
        return str(target)

    def run(self) -> int:
        """Reads stdin until ``quit`` or end of input."""
        while True:
            raw = sys.stdin.readline()
            start = time.perf_counter()
            if not raw:
                return 0
            if raw.split()[:1] == ["quit"]:
                return 0
            try:
                answer = self.handle(raw.rstrip("\r\n"), start)
            except (ValueError, IndexError) as exc:
                log(f"ignored line {raw.strip()!r}: {exc}")
                answer = None
            if answer is not None:
                sys.stdout.write(answer + "\n")
                sys.stdout.flush()


def request_greedy(holding: list[Card], table: list[Card], variant: Variant) -> Move:
    """A legal greedy move from the request alone (used if tracking failed)."""
    pts = variant.points
    best: tuple[tuple[int, int], Move] | None = None
    for c in holding:
        found = [t for t in table if t >> 2 == PARTNER[c >> 2]]
        if len(found) == 3 and PARTNER[c >> 2] == c >> 2:  # a layout three of a kind
            options = [(pts[c] + sum(pts[t] for t in found), None)]
        else:
            options = [(pts[c] + pts[t], t) for t in found] or [(-pts[c], None)]
        for gain, target in options:
            key = (gain, 1 if found else 0)
            if best is None or key > best[0]:
                best = (key, Move(c, target))
    assert best is not None
    return best[1]


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    work = ap.add_mutually_exclusive_group()
    work.add_argument("--max-ms", type=float, default=None, help="cap on thinking time per move")
    work.add_argument("--playouts", type=_positive, default=None, metavar="N",
                      help="exactly N sampled worlds per decision, whatever the time: the same "
                           "answers for the same seed and match (reproducible tournaments)")
    ap.add_argument("--seed", type=int, default=None, help="RNG seed (default: from match id)")
    args = ap.parse_args(argv)
    return Bot(args.max_ms, args.seed, args.playouts).run()


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


if __name__ == "__main__":
    sys.exit(main())
