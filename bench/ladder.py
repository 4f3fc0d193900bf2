"""The ladder against the full round robin: a field of known order, a tenth of the matches.

Run:  .venv/bin/python bench/ladder.py                  # 16 entrants: ~2 min on 2 cores
      .venv/bin/python bench/ladder.py --entrants 24 --reps 8

The field: ``--entrants`` bots, entrant *i* plays ``bots/greedy_bot.py``'s move except that, with
probability ``i / (entrants - 1)``, it plays a uniform random legal move instead (so entrant 0 is
greedy, the last is random, and the true order is by index). They are listed in the configuration
in a shuffled order, so no tie-break leaks the truth. Matches are played in-process (the rules
engine and the bots' own decision logic, as ``bench/ranking.py`` does), 3 players, all seatings,
target 1000, through :class:`referee.tournament.course.TournamentProgress`: the real formats and
ratings code.

* **round robin**: every group once (C(n, 3) x 6 matches);
* **ladder**: :class:`referee.tournament.formats.Ladder` with ``max_matches`` a tenth of that,
``--reps``
  times with independent seeds.

For each: Kendall's tau between the final standings and the true order, and the place of the
true best. Then the time to plan one ladder round for 500 entrants. The last lines are
``ladder: tau <t> (place of best <p>) with <m> matches; round robin tau <t> (...) with <m>`` and
``ladder: planning a round for 500 entrants takes <ms> ms``.

A baseline with the same budget: **random groups** (every round the field shuffled and cut into
groups of 3, ``RandomGroups``). ``--field uneven`` cubes the blunder rates, so the best third lie
within 4 % of each other: a field that is not evenly spaced.

Measured on 2026-12-01, 2 shared cores (other benchmarks running), 16 entrants, ratings per set
(``rating.per: set``, the default), 4 runs each, tau as mean +- standard error:

    field    ladder (336 matches)            random groups (336)            round robin (3,360)
    even     0.958 +- 0.008, best 1st 4/4    0.900 +- 0.025, best 1st 3/4   1.000, best 1st
    uneven   0.942 +- 0.008, best 1st 2/4    0.846 +- 0.026, best 1st 2/4   0.967, best 2nd

``.venv/bin/python bench/ladder.py --reps 4 --jobs 1 [--field uneven]``: about 6 minutes each.
Planning a ladder round for 500 entrants: 1-5 ms.
"""

from __future__ import annotations

import argparse
import itertools
import random
import statistics
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import ranking  # noqa: E402
from stopping import play  # noqa: E402

from referee.game.cards import Card  # noqa: E402
from referee.game.rules import Hand, Move, Variant  # noqa: E402
from referee.match.job import DealSecret, MatchSpec  # noqa: E402
from referee.tournament.course import TournamentPlan, TournamentProgress  # noqa: E402
from referee.tournament.formats import Format, Ladder, RoundRobin, State  # noqa: E402
from referee.tournament.schedule import size  # noqa: E402


class Blunderer(ranking.Policy):
    """Greedy, but a uniform random legal move (or pick) with probability ``p``."""

    def __init__(self, p: float, seed: str) -> None:
        self.p = p
        self.rng = random.Random(seed)
        self.greedy = ranking.GreedyPolicy(Variant.CLASSIC)
        self.random = ranking.RandomPolicy(seed + ":r")

    def move(self, hand: Hand) -> Move:
        """See :meth:`ranking.Policy.move`."""
        return self.random.move(hand) if self.rng.random() < self.p else self.greedy.move(hand)

    def pick(self, hand: Hand) -> Card:
        """See :meth:`ranking.Policy.pick`."""
        return self.random.pick(hand) if self.rng.random() < self.p else self.greedy.pick(hand)


def kendall_tau(order: Sequence[int], truth: Sequence[int]) -> float:
    """Kendall's tau between two orders of the same items (1: identical, -1: reversed)."""
    where = {e: i for i, e in enumerate(order)}
    pos = [where[e] for e in truth]
    n = len(pos)
    concordant = sum(1 for i in range(n) for j in range(i + 1, n) if pos[i] < pos[j])
    pairs = n * (n - 1) // 2
    return (2 * concordant - pairs) / pairs


class RandomGroups:
    """The baseline: every round, the entrants shuffled and cut into groups of ``players``
    (a last short group filled from the start of the shuffle)."""

    name = "random-groups"

    def __init__(self, entrants: int, players: int, *, seed: str) -> None:
        self.entrants, self.players, self.seed = entrants, players, seed

    def groups(self, state: State) -> list[tuple[int, ...]]:
        """See :meth:`referee.tournament.formats.Format.groups`."""
        order = list(range(self.entrants))
        random.Random(f"{self.seed}:{state.round}").shuffle(order)
        out = []
        for i in range(0, self.entrants, self.players):
            group = order[i:i + self.players]
            group += [e for e in order if e not in group][:self.players - len(group)]
            out.append(tuple(sorted(group)))
        return out

    def group_ids(self) -> int:
        """See :meth:`referee.tournament.formats.Format.group_ids`."""
        return 3

    def per_round(self) -> int | None:
        """See :meth:`referee.tournament.formats.Format.per_round`."""
        return -(-self.entrants // self.players)

    def questions(self, order: Sequence[int]) -> list[tuple[int, int]]:
        """Adjacent pairs."""
        return list(itertools.pairwise(order))


def blunder_rate(strength: int, n: int, field: str) -> float:
    """The blunder rate of the entrant of true rank ``strength`` (0 best): evenly spaced from 0
    to 1, or ``uneven``: cubed, so the best third lie within 4 % of each other (hard to tell
    apart) and the rest spread out."""
    x = strength / (n - 1)
    return x if field == "even" else x ** 3


def tournament(kind: str, n: int, rep: int, max_matches: int | None,
               field: str = "even") -> tuple[float, int, int, float]:
    """One tournament of the field: tau to the true order, place of the best, matches, seconds."""
    t0 = time.perf_counter()
    shuffled = list(range(n))
    random.Random(f"field:{rep}").shuffle(shuffled)  # configuration position -> true strength
    names = [f"b{s:02d}" for s in shuffled]
    seed = f"ladder-bench-{kind}-{rep}"

    def policy(e: int, spec: MatchSpec, seat: int) -> ranking.Policy:
        return Blunderer(blunder_rate(shuffled[e], n, field), f"{seed}:{spec.id}:{seat}")

    fmt: Format = (Ladder(n, 3, seed=seed) if kind == "ladder" else
                   RandomGroups(n, 3, seed=seed) if kind == "random-groups" else
                   RoundRobin(n, 3))
    course = TournamentProgress(fmt, names, TournamentPlan(
        players=3, seatings="all", seed=seed, rounds=1 if kind == "round-robin" else None,
        max_matches=max_matches, secret=DealSecret(bytes(32))))
    while specs := course.next_round():
        for spec in specs:
            course.add(spec, *play(spec, policy, target=1000, names=names))
    order = [shuffled[names.index(r.name)] for r in course.standings()]
    return (kendall_tau(order, list(range(n))), order.index(0) + 1, course.matches,
            time.perf_counter() - t0)


def _run(args: tuple[str, int, int, int | None, str]) -> tuple[str, float, int, int, float]:
    kind, n, rep, cap, field = args
    return (kind, *tournament(kind, n, rep, cap, field))


def plan_time(n: int) -> float:
    """Seconds to plan one ladder round (round 2: ratings spread) for ``n`` entrants."""
    rng = random.Random(1)
    state = State(n, 2, 0, tuple(range(n)), tuple(rng.gauss(25, 3) for _ in range(n)),
                  tuple(rng.uniform(1, 3) for _ in range(n)))
    t0 = time.perf_counter()
    Ladder(n, 3, seed=1).groups(state)
    return time.perf_counter() - t0


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--entrants", type=int, default=16)
    ap.add_argument("--reps", type=int, default=4, help="ladder runs (independent seeds)")
    ap.add_argument("--rr-reps", type=int, default=1, help="round-robin runs")
    ap.add_argument("--fraction", type=float, default=0.1, help="ladder matches / round robin's")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--field", choices=("even", "uneven"), default="even",
                    help="blunder rates evenly spaced, or cubed (a tight top)")
    args = ap.parse_args(argv)
    n = args.entrants
    full = size(n, 3, 1, "all")
    cap = int(full * args.fraction)
    rates = f"i/{n - 1}" if args.field == "even" else f"(i/{n - 1})^3"
    print(f"ladder: {n} entrants ({args.field} field: greedy blundering with p = {rates}), "
          f"round robin {full} matches, ladder and random groups at most {cap}; "
          f"3 players, all seatings, target 1000", flush=True)
    tasks = [("round-robin", n, rep, None, args.field) for rep in range(args.rr_reps)]
    tasks += [(kind, n, rep, cap, args.field) for rep in range(args.reps)
              for kind in ("ladder", "random-groups")]
    results: dict[str, list[tuple[float, int, int]]] = {
        "round-robin": [], "ladder": [], "random-groups": []}
    with ProcessPoolExecutor(max(1, args.jobs)) as pool:
        for kind, tau, best, matches, secs in pool.map(_run, tasks):
            results[kind].append((tau, best, matches))
            print(f"  {kind:13}: tau {tau:.3f}, best placed {best}, {matches} matches "
                  f"({secs:.0f} s)", flush=True)

    def show(kind: str) -> str:
        rows = results[kind]
        if not rows:
            return "not run"
        taus = ", ".join(f"{t:.2f}" for t, _, _ in rows)
        spread = (f" +- {statistics.stdev(t for t, _, _ in rows) / len(rows) ** 0.5:.3f}"
                  if len(rows) > 1 else "")
        return (f"tau {statistics.fmean(t for t, _, _ in rows):.3f}{spread} ({taus}; place of best "
                f"{', '.join(str(b) for _, b, _ in rows)}) with "
                f"{statistics.fmean(m for _, _, m in rows):.0f} matches")

    print(f"ladder ({args.field} field): {show('ladder')}; random groups "
          f"{show('random-groups')}; round robin {show('round-robin')}")
    ms = statistics.median(plan_time(500) for _ in range(5)) * 1000
    print(f"ladder: planning a round for 500 entrants takes {ms:.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
