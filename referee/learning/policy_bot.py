"""The policy-to-bot bridge: any Python policy plays protocol v1 as a bot (``ct-referee bot``).

A *policy* is a callable ``policy(observation, action_mask) -> action`` over the encoding of
:mod:`referee.game.encoding` (numpy arrays, exactly as :mod:`referee.learning.env` observes them).
The bridge
reads the referee's lines, keeps the seat's view of the hand the way the engine keeps it
(:class:`SeatTracker` replays the public events on a :class:`referee.game.rules.Hand` and asks it
for
:meth:`~referee.game.rules.Hand.view`), encodes it with :func:`referee.game.encoding.arrays` (the
one
encoder the environment uses too) and answers with the move the policy's action stands for.

:class:`SeatTracker` is pure (lines in, views out); :func:`run` is the thin I/O loop.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from referee.game import encoding
from referee.game.cards import DECK, Card
from referee.game.rules import Deal, Hand, SeatView, Variant, legal_moves_on
from referee.protocol.wire import cards_after, int_after

Policy = Callable[[Any, Any], Any]
"""``policy(observation, action_mask) -> action index``."""


class PolicyError(ValueError):
    """Raised for a policy spec that cannot be loaded, in one line."""


class TrackingError(ValueError):
    """Raised when the referee's lines do not fit the tracked hand."""


@dataclass(frozen=True)
class PolicyRequest:
    """A request to answer: the seat's view and the match totals before this hand."""

    kind: str
    """``"go"`` or ``"pick"``."""
    view: SeatView
    totals: tuple[int, ...]
    target: int


class SeatTracker:
    """What one seat knows of its match, from the referee's lines alone.

    :meth:`feed` takes every line; for ``go`` and ``pick`` it returns the :class:`PolicyRequest`
    (the view rebuilt with the engine and checked against the request).
    """

    def __init__(self) -> None:
        self.seat = 0
        self.players = 3
        self.variant = Variant.CLASSIC
        self.target = 1000
        self.totals: tuple[int, ...] = (0, 0, 0)
        self.dealer = 0
        self.dealt: list[Card] = []
        self.layout: list[Card] = []
        self.events: list[tuple[str, int, Card, tuple[Card, ...]]] = []

    def feed(self, line: str) -> PolicyRequest | None:
        """Takes one referee line; returns the decision it asks for, if any.

        :raises TrackingError: when a request does not fit what was tracked.
        :raises ValueError: for a line that cannot be read.
        """
        tokens = line.split()
        if not tokens:
            return None
        word = tokens[0]
        if word == "match":
            self.seat = int_after(tokens, "seat", 0)
            self.players = int_after(tokens, "players", 3)
            self.target = int_after(tokens, "target", 1000)
            if "variant" in tokens:
                self.variant = Variant(tokens[tokens.index("variant") + 1])
            self.totals = (0,) * self.players
            self.new_hand(0, [], [])
        elif word == "hand":
            self.new_hand(int_after(tokens, "dealer", 0), cards_after(tokens, "cards"),
                          cards_after(tokens, "layout"))
        elif word in ("play", "turn") and len(tokens) >= 3:
            found = [Card.parse(t) for t in tokens[2:]]
            self.events.append((word, int(tokens[1]), found[0], tuple(found[1:])))
        elif word == "score" and "totals" in tokens:
            at = tokens.index("totals") + 1
            self.totals = tuple(int(t) for t in tokens[at:at + self.players])
        elif word == "go":
            view = self.position().view(self.seat)
            if (sorted(view.hand) != sorted(cards_after(tokens, "hand"))
                    or sorted(view.table) != sorted(cards_after(tokens, "table"))
                    or view.to_move != self.seat or view.pick_card is not None):
                raise TrackingError("the tracked position differs from the go request")
            return PolicyRequest("go", view, self.totals, self.target)
        elif word == "pick" and len(tokens) >= 2:
            view = self.position(Card.parse(tokens[1])).view(self.seat)
            if sorted(view.pick_options) != sorted(cards_after(tokens, "from")):
                raise TrackingError("the tracked pick differs from the pick request")
            return PolicyRequest("pick", view, self.totals, self.target)
        return None

    def new_hand(self, dealer: int, cards: list[Card], layout: list[Card]) -> None:
        """Starts tracking a hand."""
        self.dealer, self.dealt, self.layout, self.events = dealer, cards, layout, []

    def position(self, pending: Card | None = None) -> Hand:
        """The hand so far, replayed by the engine on a deal whose unseen cards are filled in
        arbitrarily (they never reach this seat's view); ``pending`` is a turned card awaiting
        this seat's pick.

        :raises TrackingError: if the events do not replay.
        """
        n, seat = self.players, self.seat
        played: list[list[Card]] = [[] for _ in range(n)]
        turned = [c for kind, _, c, _ in self.events if kind == "turn"]
        for kind, s, c, _ in self.events:
            if kind == "play" and 0 <= s < n:
                played[s].append(c)
        if pending is not None:
            turned.append(pending)
        known = {*self.dealt, *self.layout, *turned}
        known.update(c for s, cards in enumerate(played) if s != seat for c in cards)
        filler = [c for c in DECK if c not in known]
        hands: list[list[Card]] = []
        size = 24 // n
        for s in range(n):
            if s == seat:
                hands.append(list(self.dealt))
            else:
                extra = size - len(played[s])
                hands.append(played[s] + filler[:extra])
                filler = filler[extra:]
        try:
            hand = Hand(Deal.from_cards(hands, self.layout, turned + filler),
                        dealer=self.dealer, variant=self.variant)
            for kind, _s, c, captured in self.events:
                if kind == "play":
                    hand.play(c, captured[0] if captured else None)
                elif hand.pick_card is not None:
                    hand.pick(captured[0])
        except (ValueError, IndexError) as err:
            raise TrackingError(f"the hand's events do not replay: {err}") from None
        replayed = [(e.kind, e.seat, e.card, sorted(e.captured))
                    for e in hand.events if e.kind != "take"]
        if replayed != [(k, s, c, sorted(x)) for k, s, c, x in self.events]:
            raise TrackingError("the replayed events differ from the referee's")
        return hand


def decide(policy: Policy, decision: PolicyRequest) -> tuple[str, int, str | None]:
    """Asks ``policy`` for ``decision``; returns the answer line, the action taken and what
    went wrong, if anything: when the policy raises or returns an action outside the mask, the
    first legal action is taken instead."""
    obs, mask = encoding.arrays(decision.view, decision.totals, decision.target)
    legal = encoding.legal_actions(decision.view)
    problem = None
    try:
        action = int(policy(obs, mask))
    except Exception as err:  # the policy's own bug: keep playing, say so on stderr
        action, problem = -1, f"the policy raised {type(err).__name__}: {err}"
    if action not in legal:
        problem = problem or f"the policy chose an illegal action ({action})"
        action = legal[0]
    return encoding.answer_text(action, decision.view), action, problem


def load_policy(spec: str, *, base: Path | None = None) -> Policy:
    """Loads ``module:function`` (a module importable from ``base``, default the current
    folder) or ``path/to/file.py:function``.

    :raises PolicyError: saying in one line what is wrong.
    """
    where, sep, name = spec.rpartition(":")
    if not sep or not where or not name:
        raise PolicyError(f"expected MODULE:FUNCTION or FILE.py:FUNCTION, got {spec!r}")
    folder = (base or Path.cwd()).absolute()
    try:
        if where.endswith(".py"):
            path = folder / where
            if not path.is_file():
                raise PolicyError(f"policy file {str(path)!r} does not exist (in {spec!r})")
            module_spec = importlib.util.spec_from_file_location(path.stem, path)
            if module_spec is None or module_spec.loader is None:
                raise PolicyError(f"cannot load {str(path)!r} (in {spec!r})")
            module = importlib.util.module_from_spec(module_spec)
            sys.modules.setdefault(path.stem, module)
            sys.path.insert(0, str(path.parent))
            module_spec.loader.exec_module(module)
        else:
            sys.path.insert(0, str(folder))
            module = importlib.import_module(where)
    except PolicyError:
        raise
    except Exception as err:  # the policy's own module failed to import: say so in one line
        raise PolicyError(f"cannot import {where!r}: {type(err).__name__}: {err}") from None
    policy: Policy | None = getattr(module, name, None)
    if not callable(policy):
        raise PolicyError(f"{where!r} has no callable {name!r}")
    return policy


def run(policy: Policy, *, name: str, stdin: IO[str], stdout: IO[str], stderr: IO[str]) -> int:
    """The protocol loop: reads ``stdin`` until ``quit`` or end of input, answers on
    ``stdout``, logs on ``stderr``. Returns the exit status."""
    tracker = SeatTracker()

    def log(message: str) -> None:
        print(f"policy-bot: {message}", file=stderr, flush=True)

    for raw in stdin:
        line = raw.rstrip("\r\n")
        word = line.split(" ", 1)[0]
        if word == "quit":
            return 0
        if word == "chinese-ten":
            answer: str | None = f"ready {name}"
        else:
            try:
                decision = tracker.feed(line)
            except ValueError as err:
                log(f"{err}; answering from the request alone")
                answer = _from_request(line)
            else:
                answer = None
                if decision is not None:
                    answer, _action, problem = decide(policy, decision)
                    if problem:
                        log(f"{problem}; played {answer!r}, the first legal action")
        if word == "forfeit":
            log(f"forfeited: {line}")
        if answer is not None:
            stdout.write(answer + "\n")
            stdout.flush()
    return 0


def _from_request(line: str) -> str | None:
    """A legal answer from the request line alone (when tracking failed)."""
    tokens = line.split()
    if tokens[:1] == ["go"]:
        moves = legal_moves_on(cards_after(tokens, "hand"), cards_after(tokens, "table"))
        return str(moves[0]) if moves else None
    if tokens[:1] == ["pick"]:
        offered = cards_after(tokens, "from")
        return str(offered[0]) if offered else None
    return None
