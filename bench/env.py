"""Environment speed: PettingZoo steps per second with random legal actions, on one core.

Plays 3-player classic single-hand episodes of :mod:`referee.learning.env` (the unwrapped
``raw_env``,
and the wrapped ``env`` for comparison): each step is ``last()`` (observation and mask of the
agent to decide), a uniform choice among the mask's legal actions, and ``step()``. The engine's
own roll-out rate (:meth:`referee.game.rules.Hand.rollout`, turns per second) is measured in the
same
run for scale. Both are timed in CPU time of this process (:func:`time.process_time`), so that
other load on a shared machine distorts them less. Needs the ``rl`` extra. The last line is the
figure:
``env: <N> steps/s (engine roll-out <M> turns/s)``.
"""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np

from bench.engine import measure, rollout_hand
from referee.game.rules import TURNS_PER_HAND
from referee.learning.env import env as wrapped_env
from referee.learning.env import raw_env


def env_steps(make: Callable[..., object], seconds: float) -> float:
    """Steps per second of random legal play in the environment ``make()`` builds."""
    e = make(players=3)
    rng = random.Random(1)
    e.reset(seed=1)  # type: ignore[attr-defined]
    steps = 0
    start = time.process_time()
    end = start + seconds
    while True:
        for _ in range(500):
            obs, _reward, term, trunc, _info = e.last()  # type: ignore[attr-defined]
            if term or trunc:
                e.step(None)  # type: ignore[attr-defined]
                if not e.agents:  # type: ignore[attr-defined]
                    e.reset()  # type: ignore[attr-defined]
                continue
            legal = np.flatnonzero(obs["action_mask"])
            e.step(int(legal[int(rng.random() * len(legal))]))  # type: ignore[attr-defined]
            steps += 1
        now = time.process_time()
        if now >= end:
            return steps / (now - start)


def rollout_turns(seconds: float) -> float:
    """Turns per second of the engine's random roll-out (deal included)."""
    return measure(rollout_hand, seconds, time.process_time) * TURNS_PER_HAND


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    wrapped = env_steps(wrapped_env, seconds)
    print(f"env (wrapped: order enforcing, bounds): {wrapped:,.0f} steps/s")
    raw = env_steps(raw_env, seconds)
    turns = rollout_turns(seconds)
    print(f"env: {raw:.0f} steps/s (engine roll-out {turns:.0f} turns/s)")


if __name__ == "__main__":
    main()
