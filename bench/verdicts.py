"""Verdict rules on real duplicate sets, resampled: how fast each decides a real pair, and how
often it is wrong on twins and on different bots of equal mean.

Run:  .venv/bin/python bench/verdicts.py SETS.jsonl [...] --twins TWINS.jsonl [...]
          [--equal EQUAL.jsonl ...]
      (sets as ``bench/play_sets.py`` writes them, or tournament output folders)

Each tournament draws whole duplicate sets with replacement from the real ones and feeds the
pair's pieces (:func:`referee.tournament.stopping.deal_pieces`, adjusted by the luck model:
:data:`referee.records.luck.WEIGHTS`) to a rule, read at the end of every set, until it decides
or ``--cap`` sets. Speed: mc over greedy (and greedy over random) at the level of a pair of a
field of three (``alpha / 3``), in matches (6 a set). Error, at ``alpha`` for the pair alone (a
field of two, as the real twin tournaments): twins (two random bots; each set's sign flipped at
random, so the twins are exactly equal in the resampled world); different bots made equal
(each real pair's pieces minus their mean: the real shape, skew and all, with mean 0); and with
``--equal``, a real pair of different bots tuned to equal mean (greedy, and ``mix90``: mc's move
in 90% of decisions, random's in the rest), as played and centred, at ``alpha`` (a field of two).
"""

from __future__ import annotations

import argparse
import itertools
import math
import random
import statistics
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from luck_fit import read_sets  # noqa: E402

from referee.game.rules import Variant  # noqa: E402
from referee.records import luck as luck_mod  # noqa: E402
from referee.tournament import stopping  # noqa: E402

Pool = list[list[float]]


def pools(paths: Sequence[Path], weights: Sequence[float]) -> dict[tuple[str, str], Pool]:
    """Per pair (names sorted): each set's pieces."""
    out: dict[tuple[str, str], Pool] = {}
    for matches in read_sets(paths):
        names = sorted(matches[0]["players"])
        ix = {n: i for i, n in enumerate(names)}
        seats = [[ix[n] for n in m["players"]] for m in matches]
        scores = [[h["scores"] for h in m["hands"]] for m in matches]
        lk = [[luck_mod.model_luck(h, len(names), Variant.CLASSIC, weights) for h in m["hands"]]
              for m in matches]
        for a, b in itertools.combinations(range(len(names)), 2):
            out.setdefault((names[a], names[b]), []).append(
                stopping.deal_pieces(a, b, seats, scores, lk))
    return out


Rule = Callable[[Pool, float], int | None]
"""``(sets' pieces in order, alpha) -> the set (1-based) after which it decided, or None``;
a positive decision names the first entrant, a negative the second."""


@dataclass
class Mixture:
    """Robbins' normal mixture with the variance learnt (shrunk toward ``sd`` with the weight of
    ``prior`` pieces), tuned to be tightest after ``deals`` pieces: the asymptotic confidence
    sequence of Waudby-Smith et al. (2024), as A/B-testing platforms run it. Measured here
    beside the module's own test; not used by ct-referee."""

    sd: float = 12.0
    prior: float = 10.0
    deals: float = 30.0
    n: int = 0
    total: float = 0.0
    squares: float = 0.0
    peak: float = 0.0
    side: int = 0

    def add(self, values: Sequence[float]) -> None:
        r = 1.0 / (self.deals * self.sd ** 2)
        for x in values:
            self.n += 1
            self.total += x
            self.squares += x * x
            mean = self.total / self.n
            ss = max(0.0, self.squares - self.n * mean * mean)
            v = self.n * (ss + self.prior * self.sd ** 2) / (self.n - 1 + self.prior)
            log_m = r * self.total ** 2 / (2 * (1 + r * v)) - 0.5 * math.log1p(r * v)
            if log_m > self.peak:
                self.peak, self.side = log_m, 1 if self.total > 0 else -1


def mixture(sets: Pool, alpha: float) -> int | None:
    t = Mixture()
    for i, xs in enumerate(sets, 1):
        t.add(xs)
        if t.peak >= math.log(1 / alpha):
            return i * t.side
    return None


def _one(sets: Pool, alpha: float, kind: str) -> int | None:
    t = stopping.PairTest(0.0)
    bar = math.log(2 / alpha)
    for i, xs in enumerate(sets, 1):
        t.add(xs)
        up, down = (t.up, t.down) if kind == "sign" else (t.normal_up, t.normal_down)
        if stopping._logaddexp(up, down) >= bar:
            return i if up >= down else -i
    return None


def sign(sets: Pool, alpha: float) -> int | None:
    return _one(sets, alpha, "sign")


def normal(sets: Pool, alpha: float) -> int | None:
    return _one(sets, alpha, "normal")


def both(sets: Pool, alpha: float) -> int | None:
    """ct-referee's rule: :class:`referee.tournament.stopping.PairTest`."""
    t = stopping.PairTest(0.0)
    for i, xs in enumerate(sets, 1):
        t.add(xs)
        if side := t.passed(alpha):
            return i * side
    return None


RULES: dict[str, Rule] = {"mixture": mixture, "sign": sign, "normal": normal, "both": both}


def draw(pool: Pool, rng: random.Random, cap: int, *, flip: str = "",
         shift: float = 0.0) -> Pool:
    """``cap`` sets drawn with replacement; ``flip``: each ``set``'s or each ``deal``'s sign
    flipped at random (twins: exactly equal in the resampled world)."""
    out = []
    for _ in range(cap):
        xs = rng.choice(pool)
        s = -1.0 if flip == "set" and rng.random() < 0.5 else 1.0
        out.append([(-1.0 if flip == "deal" and rng.random() < 0.5 else s) * (x - shift)
                    for x in xs])
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sets", type=Path, nargs="+")
    ap.add_argument("--twins", type=Path, nargs="*", default=[])
    ap.add_argument("--equal", type=Path, nargs="*", default=[],
                    help="sets of a real pair of different bots tuned to equal mean strength "
                         "(greedy against mix90: bench/play_sets.py --field greedy,mix90)")
    ap.add_argument("--draws", type=int, default=2000)
    ap.add_argument("--cap", type=int, default=40)
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--rules", default="mixture,sign,normal,both")
    ap.add_argument("--raw-luck", action="store_true", help="the immediate-points luck only")
    ap.add_argument("--piece-sd", type=float, default=stopping.PIECE_SD,
                    help="the variance prior of the bets (stopping.PIECE_SD)")
    ap.add_argument("--piece-prior", type=float, default=stopping.PIECE_PRIOR,
                    help="its weight in pieces (stopping.PIECE_PRIOR)")
    ap.add_argument("--bet-size", type=float, default=stopping.BET_SIZE,
                    help="the mean prior without a margin (stopping.BET_SIZE)")
    args = ap.parse_args()
    stopping.PIECE_SD, stopping.PIECE_PRIOR = args.piece_sd, args.piece_prior
    stopping.BET_SIZE = args.bet_size
    print(f"priors: piece sd {args.piece_sd:g} with the weight of {args.piece_prior:g} pieces, "
          f"bets sized for {args.bet_size:g}")
    weights = ([1.0] + [0.0] * (len(luck_mod.FEATURES) - 1) if args.raw_luck
               else list(luck_mod.WEIGHTS))
    real = pools(args.sets, weights)
    twins = pools(args.twins, weights) if args.twins else {}
    equal = pools(args.equal, weights) if args.equal else {}
    for pair, pool in sorted(equal.items()):
        flat = [x for xs in pool for x in xs]
        se = statistics.stdev(flat) / math.sqrt(len(flat))
        print(f"equal-mean pair {pair[0]}-{pair[1]}: {len(pool)} sets, {len(flat)} deals, "
              f"mean {statistics.fmean(flat):+.2f} ± {se:.2f} (1 se), "
              f"sd {statistics.stdev(flat):.2f}")
    for pair, pool in sorted(real.items()):
        flat = [x for xs in pool for x in xs]
        print(f"{pair[0]}-{pair[1]}: {len(pool)} sets, {len(flat)} deals, mean "
              f"{statistics.fmean(flat):+.2f}, sd {statistics.stdev(flat):.2f}")
    for pair, pool in sorted(twins.items()):
        flat = [x for xs in pool for x in xs]
        print(f"twins {pair[0]}-{pair[1]}: {len(pool)} sets, mean {statistics.fmean(flat):+.2f}, "
              f"sd {statistics.stdev(flat):.2f}")
    for name in args.rules.split(","):
        rule = RULES[name]
        rng = random.Random(1)
        print(f"rule {name}:")
        for pair, pool in sorted(real.items()):
            flat = [x for xs in pool for x in xs]
            mean = statistics.fmean(flat)
            took = []
            wrong = 0
            for _ in range(args.draws):
                d = rule(draw(pool, rng, args.cap), args.alpha / 3)
                took.append(abs(d) if d is not None else args.cap + 1)
                wrong += d is not None and (d > 0) != (mean > 0)
            took.sort()
            med, p90 = took[len(took) // 2], took[int(0.9 * len(took))]
            print(f"  speed {pair[0]}-{pair[1]} (mean {mean:+.2f}): median {6 * med} matches, "
                  f"p90 {6 * p90}, undecided {sum(t > args.cap for t in took) / len(took):.1%},"
                  f" wrong way {wrong / len(took):.2%}")
            errs = sum(rule(draw(pool, rng, args.cap, shift=mean), args.alpha) is not None
                       for _ in range(args.draws))
            print(f"  equal-mean {pair[0]}-{pair[1]} (centred): called different "
                  f"{errs / args.draws:.2%} at {args.alpha}")
        for pair, pool in sorted(equal.items()):
            mean = statistics.fmean(x for xs in pool for x in xs)
            for label, shift in (("as played", 0.0), ("centred", mean)):
                calls = [rule(draw(pool, rng, args.cap, shift=shift), args.alpha)
                         for _ in range(args.draws)]
                up = sum(c is not None and c > 0 for c in calls) / args.draws
                down = sum(c is not None and c < 0 for c in calls) / args.draws
                print(f"  equal-mean pair {pair[0]}-{pair[1]} ({label}): called "
                      f"{pair[0]} stronger {up:.2%}, {pair[1]} stronger {down:.2%} at "
                      f"{args.alpha}, {args.cap} sets")
        for pair, pool in sorted(twins.items()):
            if not (pair[0].startswith("random") and pair[1].startswith("random")):
                continue
            for flip in ("set", "deal"):
                errs = sum(rule(draw(pool, rng, args.cap, flip=flip), args.alpha) is not None
                           for _ in range(args.draws))
                print(f"  twins {pair[0]}-{pair[1]} (each {flip}'s sign flipped): called "
                      f"different {errs / args.draws:.2%} at {args.alpha}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
