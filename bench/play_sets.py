"""Plays duplicate sets of the bundled bots in-process and writes them as record-like JSON lines:
the data the luck model (``bench/luck_fit.py``) is fitted and judged on.

Run:  .venv/bin/python bench/play_sets.py OUT.jsonl --sets 40 --seed fit-a --jobs 2
      (random, greedy, mc at 100 worlds a decision; 3 seats, target 1000, every seating)

Each line is one duplicate set: ``{"set": k, "matches": [{"players": [...], "hands": [entry,
...]}, ...]}`` with every hand entry as a record holds it (``dealer``, ``hands``, ``layout``,
``stock``, ``turns``, ``scores``). The bots are the in-process twins of ``bots/*.py``
(``bench/ranking.py``); the deals come from the seed alone.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import ranking  # noqa: E402
from stopping import play_hands  # noqa: E402

from referee.game.cards import Card  # noqa: E402
from referee.game.rules import Hand, Move, Variant  # noqa: E402
from referee.match.job import MatchSpec  # noqa: E402
from referee.tournament.schedule import schedule  # noqa: E402

NAMES = ["random", "greedy", "mc"]


class MixPolicy(ranking.Policy):
    """``mixP``: each decision mc's (at ``worlds``) with probability P percent, else random's: a
    bot different from greedy whose mean strength can be tuned to greedy's (the equal-mean pair)."""

    def __init__(self, seed: str, worlds: int, share: float) -> None:
        self.rng = random.Random(seed + ":mix")
        self.mc = ranking.McPolicy(seed, worlds)
        self.random = ranking.RandomPolicy(seed)
        self.share = share

    def _one(self) -> ranking.Policy:
        return self.mc if self.rng.random() < self.share else self.random

    def move(self, hand: Hand) -> Move:
        """See :meth:`ranking.Policy.move`."""
        return self._one().move(hand)

    def pick(self, hand: Hand) -> Card:
        """See :meth:`ranking.Policy.pick`."""
        return self._one().pick(hand)


def _policy(name: str, seed: str, worlds: int) -> ranking.Policy:
    if name.startswith("mix"):
        return MixPolicy(seed, worlds, float(name[3:]) / 100)
    if name.startswith("random"):
        return ranking.RandomPolicy(seed)
    if name == "greedy":
        return ranking.GreedyPolicy(Variant.CLASSIC)
    return ranking.McPolicy(seed, worlds)


def play_match(spec: MatchSpec, run_seed: str, worlds: int, target: int) -> dict[str, Any]:
    """One match; its players by seat and every hand entry with its scores."""
    names = [FIELD[e] for e in spec.seats]
    seats = [_policy(n, f"{run_seed}:{spec.id}:{s}", worlds) for s, n in enumerate(names)]
    _, hands = play_hands(spec, seats, target=target)
    return {"players": names, "hands": hands}


FIELD = NAMES


def play_set(args: tuple[list[MatchSpec], str, int, int, list[str]]) -> list[dict[str, Any]]:
    global FIELD
    specs, run_seed, worlds, target, FIELD = args
    return [play_match(s, run_seed, worlds, target) for s in specs]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--sets", type=int, default=40)
    ap.add_argument("--seed", default="fit-a")
    ap.add_argument("--worlds", type=int, default=100)
    ap.add_argument("--target", type=int, default=1000)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--field", default="random,greedy,mc",
                    help="the entrants (random*, greedy, mc, mixP: mc P%% of decisions, else "
                         "random), as many as seats")
    args = ap.parse_args()
    field = args.field.split(",")
    specs = schedule(len(field), players=len(field), rounds=args.sets, seatings="all",
                     seed=args.seed, secret=args.seed.encode())
    groups = [[s for s in specs if s.round == r] for r in range(1, args.sets + 1)]
    with ProcessPoolExecutor(args.jobs) as pool, args.out.open("a") as out:
        for k, matches in enumerate(pool.map(
                play_set, [(g, args.seed, args.worlds, args.target, field) for g in groups])):
            out.write(json.dumps({"set": k, "seed": args.seed, "matches": matches}) + "\n")
            out.flush()
            print(f"set {k + 1}/{args.sets}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
