"""Chinese Ten as a PettingZoo agent-environment-cycle (AEC) environment, for training bots.

Needs the ``rl`` extra (``pip install 'ct-referee[rl]'``); the rest of ct-referee never imports
this module. One agent step per decision of the protocol (a ``go``, and a ``pick`` when the turned
card has several targets); observations and masks are :func:`referee.game.encoding.arrays` of
what the seat may see, as the protocol bridge encodes them; rewards, deals and seeds as
``docs/learning.md`` says (``reset(seed=N)`` deals as ``ct-referee play --seed N``).

>>> env = raw_env(players=3, target=None)
>>> env.reset(seed=7)
>>> env.agent_selection
'player_1'
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from referee.game import encoding
from referee.game.cards import DECK, format_cards
from referee.game.rules import PARTNER, Deal, Hand, Match, Variant, rank

__all__ = ["ChineseTenEnv", "env", "raw_env"]

RENDER_MODES = ("human", "ansi")


class ChineseTenEnv(AECEnv):
    """The environment; see the module docstring. Options are keyword-only:

    ``players`` 2-4; ``variant`` ``"classic"`` or ``"red-frog-black-frog"``; ``target`` the points
    that end a match (``None``: every episode is one hand, dealt by seat 0); ``dense`` rewards
    per capture instead of per hand; ``match_bonus`` added to the reward of each seat ranked
    first when a match ends; ``render_mode`` ``"human"`` (print) or ``"ansi"`` (return text).
    """

    metadata: dict[str, object] = {  # noqa: RUF012 (PettingZoo's convention: a class attribute)
        "render_modes": list(RENDER_MODES),
        "name": "chinese_ten_v0",
        "is_parallelizable": False,
    }

    def __init__(
        self,
        *,
        players: int = 3,
        variant: str | Variant = Variant.CLASSIC,
        target: int | None = None,
        dense: bool = False,
        match_bonus: float = 0.0,
        render_mode: str | None = None,
    ) -> None:
        super().__init__()
        if players not in (2, 3, 4):
            raise ValueError(f"players must be 2, 3 or 4, not {players!r}")
        if target is not None and target <= 0:
            raise ValueError(f"target must be positive or None, not {target!r}")
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(f"render_mode must be 'human', 'ansi' or None, not {render_mode!r}")
        self.players = players
        self.variant = Variant(variant)
        self.target = target
        self.dense = dense
        self.match_bonus = float(match_bonus)
        self.render_mode = render_mode
        self.possible_agents = [f"player_{s}" for s in range(players)]
        self._seat_of = {a: s for s, a in enumerate(self.possible_agents)}
        self._obs_space = spaces.Dict({
            "observation": spaces.Box(0.0, 1.0, (encoding.OBS_SIZE,), dtype=np.float32),
            "action_mask": spaces.Box(0, 1, (encoding.ACTIONS,), dtype=np.int8),
        })
        self._act_space = spaces.Discrete(encoding.ACTIONS)
        self.observation_spaces = dict.fromkeys(self.possible_agents, self._obs_space)
        self.action_spaces = dict.fromkeys(self.possible_agents, self._act_space)
        self._seeds = random.Random()
        self.deal_seed: int = 0
        self.match = Match(players, variant=self.variant, target=target or 1)
        self.hand: Hand | None = None

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        """The same Dict space for every agent: ``observation`` and ``action_mask``."""
        return self._obs_space

    def action_space(self, agent: str) -> spaces.Space[Any]:
        """``Discrete(312)``: see :mod:`referee.game.encoding`."""
        return self._act_space

    # The cycle.

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Deals a new episode (a match, or one hand without a target)."""
        if seed is not None:
            self._seeds.seed(seed)
            self.deal_seed = seed
        else:
            self.deal_seed = self._seeds.randrange(1 << 31)
        self.match = Match(self.players, variant=self.variant, target=self.target or 1)
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self._deal_next()

    def _deal_next(self) -> None:
        deal = Deal.from_seed(self.players, f"{self.deal_seed}:{self.match.hand_number}")
        self.hand = self.match.new_hand(deal)
        self._legal: list[int] | None = None
        self.agent_selection = self.possible_agents[self.hand.to_move]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """What ``agent``'s seat may see now, and its action mask (all zeros unless it is to
        decide)."""
        hand = self.hand
        assert hand is not None
        seat = self._seat_of[agent]
        view = hand.view(seat)
        legal = self.legal_actions() if seat == hand.to_move else []
        obs, mask = encoding.arrays(view, self.match.totals, self.target, legal=legal)
        return {"observation": obs, "action_mask": mask}

    def legal_actions(self) -> list[int]:
        """The legal actions of the agent to decide (empty once the episode is over)."""
        if self._legal is None:
            hand = self.hand
            assert hand is not None
            if hand.pick_card is not None:
                self._legal = [encoding.PICK_BASE + t for t in hand.pick_options]
            else:  # the engine's own list, equal to legal_moves_on(view) (tested)
                self._legal = encoding.move_actions(hand.legal_moves())
        return self._legal

    def step(self, action: int | None) -> None:
        """Applies the decision of ``agent_selection``.

        :raises ValueError: (:class:`referee.game.encoding.ActionError`) for an action the mask
            forbids.
        """
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        hand = self.hand
        assert hand is not None
        if action is None or int(action) not in self.legal_actions():
            raise encoding.ActionError(f"action {action!r} is not legal for {agent}")
        a = int(action)
        self._cumulative_rewards[agent] = 0.0
        rewards = self.rewards = dict.fromkeys(self.agents, 0.0)
        before = hand.scores() if self.dense else None
        if a >= encoding.PICK_BASE:
            hand.pick(DECK[a - encoding.PICK_BASE])
        else:
            card, slot = divmod(a, 5)
            target = None if slot == 0 else DECK[PARTNER[card >> 2] * 4 + slot - 1]
            hand.play(DECK[card], target)
        self._legal = None
        if before is not None:
            for s, (b, now) in enumerate(zip(before, hand.scores(), strict=True)):
                rewards[self.possible_agents[s]] += now - b
        if hand.is_over():
            self._end_hand(hand)
        else:
            self.agent_selection = self.possible_agents[hand.to_move]
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def _end_hand(self, hand: Hand) -> None:
        scores = hand.scores()
        agents = self.possible_agents
        if not self.dense:
            for s, points in enumerate(scores):
                self.rewards[agents[s]] += points
        if self.target is not None:
            self.match.finish_hand(hand)
            if not self.match.is_over():
                self._deal_next()
                return
            totals = self.match.totals
        else:
            totals = scores
        for s, r in enumerate(rank(totals)):
            self.infos[agents[s]] = {"totals": list(totals), "rank": r}
            if r == 1 and self.match_bonus:
                self.rewards[agents[s]] += self.match_bonus
        self.terminations = dict.fromkeys(self.agents, True)
        self.agent_selection = agents[hand.to_move]

    # Looking at it.

    def render(self) -> str | None:
        """The whole table as text (every hand shown: this is for people watching)."""
        if self.render_mode is None:
            return None
        text = self.text()
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def text(self) -> str:
        """The position as a few lines of text."""
        hand = self.hand
        if hand is None:
            return "(not reset)"
        head = (f"hand {self.match.hand_number} dealer {hand.dealer} turn {hand.turn}/24 "
                f"stock {len(hand.stock)} {self.variant.value}")
        lines = [head, f"  table: {format_cards(hand.table) or '-'}"]
        scores = hand.scores()
        for s in range(self.players):
            mark = ">" if s == hand.to_move and not hand.is_over() else " "
            total = f" total {self.match.totals[s]}" if self.target is not None else ""
            lines.append(f"{mark} seat {s}: hand {format_cards(hand.hands[s]) or '-'}"
                         f"  points {scores[s]}{total}")
        if hand.pick_card is not None:
            lines.append(f"  seat {hand.to_move} picks a target for {DECK[hand.pick_card]} "
                         f"from {format_cards(hand.pick_options)}")
        return "\n".join(lines)

    def close(self) -> None:
        """Nothing to release."""


def raw_env(**options: Any) -> ChineseTenEnv:
    """The environment without wrappers (fastest; it still refuses illegal actions)."""
    return ChineseTenEnv(**options)


def env(**options: Any) -> Any:
    """The environment in PettingZoo's usual wrappers (order enforcing, action bounds)."""
    wrapped: Any = ChineseTenEnv(**options)
    wrapped = wrappers.AssertOutOfBoundsWrapper(wrapped)
    return wrappers.OrderEnforcingWrapper(wrapped)
