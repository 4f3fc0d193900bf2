"""Is an equal-mean skewed pair called different, and how fast is a real gap decided?

Run:  .venv/bin/python bench/skewed.py [--reps 1000] [--margins 0,3] [--caps 3,20,100,250]

A fast in-process simulation of a pair's pieces (no bots, no processes: what is measured is the
verdict rule, :meth:`referee.tournament.stopping.PairTest.passed`), ``--deals`` deals a set, at
95% for the pair alone, read after every set. Pairs (as ``bench/intervals.py``'s): ``skewed``
(mean 0; ahead by 3.0 on 13 deals in 14, behind by 39 on the 14th, plus noise of 10),
``skewed2`` (ahead by 3.9, behind by 51, noise 5), each either way round, and ``gap``: mean +5,
7 a deal (mc over greedy, adjusted), for the sets to a decision. Prints, per margin, the share
of tournaments with a verdict ``stronger`` either way by each cap, and the median and 90th
percentile of the sets ``gap`` takes. ``--before REV``: the rule of that git revision.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from intervals import load, piece_maker  # noqa: E402

from referee.tournament.stopping import PairTest  # noqa: E402

RULE: type = PairTest


def first_call(kind: str, rep: int, deals: int, cap: int, margin: float, sign: int) -> int | None:
    """The first set after which the rule called the pair (``None``: never, by ``cap``)."""
    rng = random.Random(f"{kind}:{rep}:{sign}")
    piece = piece_maker(kind) if kind != "gap" else (lambda r: r.gauss(5.0, 7.0))
    shared_sd = (0.2 * 100.0 / deals) ** 0.5
    test = RULE(margin)
    for s in range(1, cap + 1):
        shared = rng.gauss(0, shared_sd)
        test.add_set([sign * piece(rng) + shared for _ in range(deals)])
        if test.passed(0.05):
            return s
    return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=1000)
    ap.add_argument("--deals", type=int, default=6)
    ap.add_argument("--margins", default="0,3")
    ap.add_argument("--caps", default="3,20,100,250")
    ap.add_argument("--before", default="", help="the rule of this git revision instead")
    args = ap.parse_args()
    global RULE
    if args.before:
        RULE = load(args.before).PairTest
    caps = [int(c) for c in args.caps.split(",")]
    print(f"{args.reps} tournaments a line (each way round for the skewed pairs), "
          f"{args.deals} deals a set, 95% for the pair alone")
    for margin in [float(m) for m in args.margins.split(",")]:
        for kind in ("skewed", "skewed2"):
            calls = [first_call(kind, r, args.deals, caps[-1], margin, sign)
                     for r in range(args.reps) for sign in (1, -1)]
            share = [sum(x is not None and x <= c for x in calls) / len(calls) for c in caps]
            cells = [f"by {c}: {100 * x:4.1f}%" for c, x in zip(caps, share, strict=True)]
            print(f"margin {margin:g} {kind:8s} called different " + ", ".join(cells), flush=True)
        gap = [first_call("gap", r, args.deals, 250, margin, 1) for r in range(args.reps)]
        done = sorted(x if x is not None else 10 ** 6 for x in gap)
        print(f"margin {margin:g} gap +5: sets to a decision median {statistics.median(done):g}, "
              f"p90 {done[int(0.9 * len(done))]:g}", flush=True)


if __name__ == "__main__":
    main()
