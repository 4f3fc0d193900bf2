"""Does the printed interval cover the true difference, at every look, and does it tighten?

Run:  .venv/bin/python bench/intervals.py [--reps 1000] [--deals 6] [--caps 20,40,100,250]

A fast in-process simulation of a pair's pieces (its difference in points a deal, adjusted),
not bots: what is measured is the interval, read after every duplicate set of ``--deals``
deals, up to 250 sets. Each set shares a component (its sets' sums vary 20% more than
independent deals would, as the resampled real twins' do: docs/statistics.md). Pairs:

- ``twins``: normal, mean 0, 10 points a deal;
- ``near``: the same, mean -0.13 (greedy against greedy with a random move one time in 500);
- ``skewed``: mean 0, ahead by 3.0 on 13 deals in 14 and behind by 39 on the 14th, plus normal
  noise of 10 (a deviation of 14.7 a deal: the real ``mix90`` against greedy's);
- ``skewed2``: the same with noise 5, ahead by 3.9, behind by 51 (more skewed);
- ``apart``: mean +33.1, 10 a deal (greedy over random, adjusted).

Per pair and rule, the share of tournaments whose interval at 95% (one pair alone) missed the
true mean at some look up to each cap (its lower and upper ends apart), and the median width
at 2, 18 and 100 sets. Rules: ``before``, the normal bets' running intersection
(:meth:`referee.tournament.stopping.PairTest.interval` of revision ``--before``, loaded from
git); ``now``, the interval as printed.
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import types
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from referee.tournament.stopping import PairTest  # noqa: E402

PAIRS = ("twins", "near", "skewed", "skewed2", "apart")
TRUE = {"twins": 0.0, "near": -0.13, "skewed": 0.0, "skewed2": 0.0, "apart": 33.1}


def piece_maker(kind: str) -> Callable[[random.Random], float]:
    """One deal's piece, less the set's shared part."""
    def twins(rng: random.Random) -> float:
        return rng.gauss(TRUE[kind], 10.0)

    def skewed(rng: random.Random, up: float = 3.0, noise: float = 10.0) -> float:
        x = -13 * up if rng.random() < 1 / 14 else up
        return x + rng.gauss(0, noise)

    if kind == "skewed":
        return skewed
    if kind == "skewed2":
        return lambda rng: skewed(rng, 3.9, 5.0)
    return twins


def load(rev: str) -> types.ModuleType:
    """``referee/tournament/stopping.py`` of revision ``rev``, from git."""
    text = subprocess.run(["git", "-C", str(ROOT), "show",
                           f"{rev}:referee/tournament/stopping.py"],
                          capture_output=True, text=True, check=True).stdout
    module = types.ModuleType("stopping_before")
    sys.modules["stopping_before"] = module
    exec(compile(text, f"{rev}:stopping.py", "exec"), module.__dict__)
    return module


def run(kind: str, rep: int, deals: int, cap: int, make: Callable[[float], PairTest]
        ) -> tuple[int | None, int | None, dict[int, float]]:
    """The first set after which the interval lay above / below the truth, and its widths."""
    rng = random.Random(f"{kind}:{rep}")
    piece = piece_maker(kind)
    test = make(0.0)
    shared_sd = (0.2 * 100.0 / deals) ** 0.5
    above = below = None
    widths = {}
    for s in range(1, cap + 1):
        shared = rng.gauss(0, shared_sd)
        test.add_set([piece(rng) + shared for _ in range(deals)])
        low, high = test.interval(0.05)
        if above is None and low > TRUE[kind]:
            above = s
        if below is None and high < TRUE[kind]:
            below = s
        if s in (2, 18, 100):
            widths[s] = high - low
    return above, below, widths


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=1000)
    ap.add_argument("--deals", type=int, default=6, help="deals a set")
    ap.add_argument("--caps", default="20,40,100,250")
    ap.add_argument("--before", default="", help="also the interval of this git revision")
    ap.add_argument("--pairs", default=",".join(PAIRS))
    args = ap.parse_args()
    caps = [int(c) for c in args.caps.split(",")]
    rules: dict[str, Callable[[float], PairTest]] = {"now": PairTest}
    if args.before:
        rules["before"] = load(args.before).PairTest
    print(f"{args.reps} tournaments a line, {args.deals} deals a set, 95% for the pair alone")
    print("pair     rule   | missed by cap " + " ".join(f"{c:>5}" for c in caps)
          + " | low end above, high end below (at the last cap) | width @2 @18 @100 sets")
    for kind in args.pairs.split(","):
        for name, make in rules.items():
            runs = [run(kind, r, args.deals, caps[-1], make) for r in range(args.reps)]
            missed = []
            for c in caps:
                n = sum((a is not None and a <= c) or (b is not None and b <= c)
                        for a, b, _ in runs)
                missed.append(f"{100 * n / args.reps:4.1f}%")
            above = sum(a is not None for a, _, _ in runs) / args.reps
            below = sum(b is not None for _, b, _ in runs) / args.reps
            width = [statistics.median(w[s] for _, _, w in runs) for s in (2, 18, 100)]
            print(f"{kind:8s} {name:6s} | {' '.join(f'{m:>5}' for m in missed)} | "
                  f"{100 * above:4.1f}% {100 * below:4.1f}% | "
                  + " ".join(f"{x:5.1f}" for x in width), flush=True)


if __name__ == "__main__":
    main()
