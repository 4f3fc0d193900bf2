#!/usr/bin/env python3
"""Trains bots/linear_policy.py's weights in the PettingZoo environment (needs the ``rl`` extra).

Run:  python bots/train_linear.py [--generations 12] [--population 24] [--hands 160] [--seed 1]

Method: the cross-entropy method. Each generation samples ``population`` weight vectors from a
Gaussian (starting at zero: a policy that knows nothing), plays each one for ``hands`` single
3-player classic hands in ``referee.learning.env`` against two opponents playing greedy_bot's rule,
on
the same deals for every candidate and in every seat in turn, keeps the best quarter by mean
points per hand, and refits the Gaussian to them. The final mean is written to
``bots/linear_policy.json`` with its evaluation on fresh deals: points per hand in a seat
against two greedy opponents and against two random ones, beside what greedy and random score
in that same seat on the same deals (duplicate comparison).

``python bots/train_linear.py --evaluate`` only evaluates the saved weights.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from linear_policy import FEATURES, GREEDY, WEIGHTS_FILE, choose, load_weights

from referee.learning.env import raw_env

Policy = Callable[[np.ndarray, np.ndarray], int]
PLAYERS = 3


def linear(weights: np.ndarray) -> Policy:
    """The linear policy with ``weights``."""
    return lambda obs, mask: choose(weights, obs, mask)


def uniform(seed: int) -> Policy:
    """A uniformly random legal action (seeded)."""
    rng = random.Random(seed)
    return lambda obs, mask: int(rng.choice(np.flatnonzero(mask)))


def play_hand(env: object, seed: int, seats: Sequence[Policy]) -> list[int]:
    """Plays the single hand ``reset(seed=seed)`` deals; returns the points by seat."""
    env.reset(seed=seed)  # type: ignore[attr-defined]
    hand = env.hand  # type: ignore[attr-defined]
    while not hand.is_over():
        seat = hand.to_move
        obs = env.observe(env.agent_selection)  # type: ignore[attr-defined]
        env.step(seats[seat](obs["observation"], obs["action_mask"]))  # type: ignore[attr-defined]
    return hand.scores()


def seat_points(env: object, policy: Policy, others: Policy, seeds: Sequence[int]) -> float:
    """Mean points per hand of ``policy`` in seat ``i mod 3`` of deal ``i``, the others
    playing ``others``."""
    total = 0
    for i, seed in enumerate(seeds):
        me = i % PLAYERS
        seats = [policy if s == me else others for s in range(PLAYERS)]
        total += play_hand(env, seed, seats)[me]
    return total / len(seeds)


def train(generations: int, population: int, hands: int, seed: int) -> np.ndarray:
    """The cross-entropy method from zero weights; prints one line per generation."""
    rng = np.random.default_rng(seed)
    env = raw_env(players=PLAYERS)
    greedy = linear(GREEDY)
    mean = np.zeros(len(FEATURES))
    std = np.full(len(FEATURES), 3.0)
    elite = max(2, population // 4)
    for gen in range(generations):
        seeds = [seed * 1_000_000 + gen * 10_000 + i for i in range(hands)]
        candidates = mean + std * rng.standard_normal((population, len(FEATURES)))
        scores = np.array([seat_points(env, linear(w), greedy, seeds) for w in candidates])
        best = candidates[np.argsort(scores)[-elite:]]
        mean = best.mean(axis=0)
        std = best.std(axis=0) + 0.5 * 0.7 ** gen
        print(f"generation {gen + 1:2d}: best {scores.max():5.1f}  elite mean "
              f"{np.sort(scores)[-elite:].mean():5.1f} points/hand vs greedy", flush=True)
    return mean


def evaluate(weights: np.ndarray, hands: int) -> dict[str, float]:
    """Points per hand on fresh deals (seeds 0..hands-1), in a seat against two greedy and
    against two random opponents, with greedy's and random's own points in the same seats."""
    env = raw_env(players=PLAYERS)
    seeds = list(range(hands))
    learned, greedy = linear(weights), linear(GREEDY)
    return {
        "hands": hands,
        "learned_vs_greedy": seat_points(env, learned, greedy, seeds),
        "greedy_vs_greedy": seat_points(env, greedy, greedy, seeds),
        "random_vs_greedy": seat_points(env, uniform(1), greedy, seeds),
        "learned_vs_random": seat_points(env, learned, uniform(2), seeds),
        "greedy_vs_random": seat_points(env, greedy, uniform(2), seeds),
        "random_vs_random": seat_points(env, uniform(1), uniform(2), seeds),
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point."""
    ap = argparse.ArgumentParser(
        description="Trains bots/linear_policy.py's weights by the cross-entropy method in the "
                    "PettingZoo environment (needs the rl extra), then evaluates them against "
                    "greedy and random opponents on fresh deals.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
        epilog="Example: python bots/train_linear.py --generations 4 --population 12 "
               "(a quick run); python bots/train_linear.py --evaluate")
    ap.add_argument("--generations", type=int, default=12, metavar="N",
                    help="generations: each samples a population, keeps the best quarter "
                         "and refits the Gaussian to it")
    ap.add_argument("--population", type=int, default=24, metavar="N",
                    help="weight vectors sampled per generation")
    ap.add_argument("--hands", type=int, default=160, metavar="N",
                    help="3-player classic hands that score each candidate (the same deals "
                         "for every one, every seat in turn)")
    ap.add_argument("--eval-hands", type=int, default=1500, metavar="N",
                    help="fresh hands of the final evaluation")
    ap.add_argument("--seed", type=int, default=1, help="seed of the sampling and the deals")
    ap.add_argument("--out", type=Path, default=WEIGHTS_FILE, metavar="FILE",
                    help="where the weights and their evaluation are written (and read by "
                         "--evaluate)")
    ap.add_argument("--evaluate", action="store_true",
                    help="only evaluate the weights in --out, no training")
    args = ap.parse_args(argv)
    start = time.perf_counter()
    if args.evaluate:
        weights = load_weights(args.out)
    else:
        weights = train(args.generations, args.population, args.hands, args.seed)
    figures = evaluate(weights, args.eval_hands)
    for key, value in figures.items():
        print(f"{key}: {value:.1f}" if isinstance(value, float) else f"{key}: {value}")
    if not args.evaluate:
        args.out.write_text(json.dumps({
            "weights": {name: round(float(w), 4) for name, w in zip(FEATURES, weights,
                                                                   strict=True)},
            "trained_by": (f"python bots/train_linear.py --generations {args.generations} "
                           f"--population {args.population} --hands {args.hands} "
                           f"--seed {args.seed}"),
            "evaluation": {k: round(v, 2) for k, v in figures.items()},
        }, indent=2) + "\n")
        print(f"wrote {args.out}")
    print(f"{time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
