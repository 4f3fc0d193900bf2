"""Matches a tournament needs to rank random < greedy < mc: duplicate deals versus fresh deals.

Run:  .venv/bin/python bench/ranking.py                  # 4 runs of each schedule: ~17 min
      .venv/bin/python bench/ranking.py --reps 8 --cap 96    # a firmer figure: ~1 h on 2 cores

Two schedules of the same three entrants (``random``, ``greedy``, ``mc``, in that configuration
order), with the same number of matches and the same seat orders:

* **duplicate**: :func:`referee.tournament.schedule.schedule` with ``seatings: all``, exactly as a
tournament
  builds it: each round, the group plays the 6 seat orders of the *same* deals;
* **fresh deals**: the same match specs in the same order, but every match gets deals of its own
  (its deal seed prefix has the seating appended), so the luck of the cards no longer cancels out.

Matches are played in-process with the rules engine (:class:`referee.game.rules.Match` and
:class:`~referee.game.rules.Hand`, deals from the seed alone as
:meth:`referee.game.rules.Deal.from_seed` makes them, no secret) and the bots' own decision logic:
``random`` picks a uniform legal move (and a uniform pick target); ``greedy`` is
``bots/greedy_bot.py``'s ``choose_move``/``choose_pick``, asked with the hand and table in the
referee's order; ``mc`` is ``bots/mc_bot.py``'s :class:`Brain` with a fixed ``--worlds`` budget
per decision and no deadline, so results do not depend on the machine's speed. Each match becomes
a :class:`referee.tournament.ratings.MatchResult` (ranks by :func:`referee.game.rules.rank`), fed
to a
:class:`referee.tournament.ratings.Standings` in schedule order, as
:func:`referee.tournament.run.run` does.

**Definition.** The standings are *settled* after match n when the table (rows sorted by
``mu - 3 sigma``, as always) reads ``mc``, ``greedy``, ``random`` and *both* ``p_above_next``
values (mc over greedy, greedy over random) are at least ``--p`` (0.95). Every run plays
``--cap`` matches and reads the table after each. Its figure is the first N from which the table
is settled **at every n from N to the cap** ("settled for good": a tournament of any length
from N to the cap would end settled). A run not settled after its last match is *censored*
(shown as ``>cap``; it counts as more than the cap in the median). Also shown, for each run, the
first n at which the table was settled at all: TrueSkill's P is overconfident early on, so a
lucky streak can show P >= 0.95 for a while long before the order is earned. Each schedule is
run ``--reps`` times with independent seeds; run i of both schedules shares its seed (so the
seat orders and the bots' seeds are the same, only the deals differ).

**Caveat.** mc must be clearly stronger than greedy for the full order to settle at all: with
few worlds (20) mc is only 2-3 points a hand ahead and neither schedule settles within 96
matches. The defaults (150 worlds, about 5 points a hand; target 2000, so each match holds more
hands) settle most runs within 60 matches at about 4 s a match in-process. Measured on
2026-11-29, 2 cores: duplicate 36 matches (runs 33 36 36 >60), fresh deals 47.5 (29 35 60 >60),
1.3x; four runs a side is few, so the ratio is rough.

The last line is ``ranking: duplicate <a> matches, fresh deals <b> matches (median of N runs;
<b/a> x)`` for the settled-for-good figures. Progress goes to stderr.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import math
import random
import statistics
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import trueskill  # noqa: E402

from referee.game.cards import Card  # noqa: E402
from referee.game.rules import Deal, Hand, Match, Move, Variant  # noqa: E402
from referee.match.job import MatchSpec, deal_seed  # noqa: E402
from referee.tournament.ratings import MatchResult, Standings, p_stronger  # noqa: E402
from referee.tournament.schedule import schedule  # noqa: E402

NAMES = ("random", "greedy", "mc")
"""Entrants in configuration order (as in ``tournaments/strength.yaml``)."""
EXPECTED = ["mc", "greedy", "random"]
"""The order the standings should show, best first."""
REPS, CAP, TARGET, WORLDS = 4, 60, 2000, 150
"""Defaults: a few minutes on two cores."""
FAR = 1e18
"""A deadline that never comes: mc stops at its world budget instead."""


def _load(name: str) -> ModuleType:
    """Imports ``bots/<name>.py`` (the bots folder is not a package)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "bots" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


greedy_bot = _load("greedy_bot")
mc_bot = _load("mc_bot")


class Policy:
    """One seat's decisions in one match (a fresh one per match, like a fresh bot process)."""

    def move(self, hand: Hand) -> Move:
        """The move for the seat to move."""
        raise NotImplementedError

    def pick(self, hand: Hand) -> Card:
        """The target for the pending turned card."""
        raise NotImplementedError


class RandomPolicy(Policy):
    """A uniform legal move, a uniform pick target (``bots/random_bot.py``)."""

    def __init__(self, seed: str) -> None:
        self.rng = random.Random(seed)

    def move(self, hand: Hand) -> Move:
        """See :meth:`Policy.move`."""
        return self.rng.choice(hand.legal_moves())

    def pick(self, hand: Hand) -> Card:
        """See :meth:`Policy.pick`."""
        return self.rng.choice(hand.pick_options)


class GreedyPolicy(Policy):
    """``bots/greedy_bot.py``'s own choice, asked what the referee's request would show."""

    def __init__(self, variant: Variant) -> None:
        self.variant = variant.value

    def move(self, hand: Hand) -> Move:
        """See :meth:`Policy.move`."""
        cards = [str(Card(c)) for c in hand.hands[hand.to_move]]
        table = [str(Card(c)) for c in hand.table]
        card, target = greedy_bot.choose_move(cards, table, self.variant)
        return Move(Card.parse(card), None if target is None else Card.parse(target))

    def pick(self, hand: Hand) -> Card:
        """See :meth:`Policy.pick`."""
        offered = [str(Card(c)) for c in hand.pick_options]
        return Card.parse(greedy_bot.choose_pick(offered, self.variant))


class McPolicy(Policy):
    """``bots/mc_bot.py``'s :class:`Brain`, ``worlds`` sampled worlds per decision."""

    def __init__(self, seed: str, worlds: int) -> None:
        self.brain = mc_bot.Brain(seed=random.Random(seed).getrandbits(32))
        self.worlds = worlds

    def move(self, hand: Hand) -> Move:
        """See :meth:`Policy.move`."""
        return self.brain.choose_move(hand, FAR, max_worlds=self.worlds)

    def pick(self, hand: Hand) -> Card:
        """See :meth:`Policy.pick`."""
        return self.brain.choose_pick(hand, FAR, max_worlds=self.worlds)


@dataclass(frozen=True)
class Settings:
    """What every match of a run shares."""

    target: int
    worlds: int
    variant: Variant = Variant.CLASSIC


def policy(name: str, spec: MatchSpec, seat: int, settings: Settings, run_seed: str) -> Policy:
    """A fresh policy for entrant ``name`` in ``seat`` of match ``spec``."""
    seed = f"{run_seed}:{spec.id}:{seat}"
    if name == "random":
        return RandomPolicy(seed)
    if name == "greedy":
        return GreedyPolicy(settings.variant)
    return McPolicy(seed, settings.worlds)


def play_out(hand: Hand, seats: Sequence[Policy]) -> None:
    """Plays ``hand`` to its end, each decision asked of the policy in the seat to move."""
    while not hand.is_over():
        seat = seats[hand.to_move]
        if hand.pick_card is not None:
            hand.pick(seat.pick(hand))
        else:
            hand.play(*seat.move(hand))


def play(spec: MatchSpec, settings: Settings, run_seed: str) -> MatchResult:
    """Plays one match of the schedule in-process; the result a tournament would rate."""
    names = tuple(NAMES[i] for i in spec.seats)
    seats = [policy(n, spec, s, settings, run_seed) for s, n in enumerate(names)]
    match = Match(spec.players, variant=settings.variant, target=settings.target)
    hands = 0
    while not match.is_over():
        hands += 1
        # Deals from the run seed alone (no secret), so the figures are reproducible.
        hand = match.new_hand(Deal.from_seed(spec.players, deal_seed(spec.seed, hands)))
        play_out(hand, seats)
        match.finish_hand(hand)
    return MatchResult(names, tuple(match.totals), tuple(match.ranks()), hands=hands)


def plan(kind: str, cap: int, run_seed: str) -> list[MatchSpec]:
    """The first ``cap`` matches of a schedule: ``duplicate`` or ``fresh``."""
    specs = schedule(len(NAMES), players=3, rounds=math.ceil(cap / 6), seatings="all",
                     seed=run_seed, secret=b"")[:cap]
    if kind == "duplicate":
        return specs
    # Deals of its own for every match: the seating joins the group's deal seed prefix.
    return [dataclasses.replace(s, seed=f"{s.seed}:{s.seating}") for s in specs]


def settled(table: Standings, p: float) -> tuple[bool, bool, bool]:
    """Whether the standings read mc, greedy, random with both P(stronger than next) >= p; and,
    pair by pair, whether greedy is above random, and mc above greedy, with P(stronger) >= p
    (computed from the rows' mu and sigma as the table does for adjacent rows)."""
    rows = table.standings()
    full = [r.name for r in rows] == EXPECTED and all(
        r.p_above_next is not None and r.p_above_next >= p for r in rows[:-1])
    by = {r.name: r for r in rows}

    def above(a: str, b: str) -> bool:
        ra, rb = by[a], by[b]
        pa = p_stronger(trueskill.Rating(ra.mu, ra.sigma), trueskill.Rating(rb.mu, rb.sigma))
        return ra.rank < rb.rank and pa >= p

    return full, above("greedy", "random"), above("mc", "greedy")


@dataclass(frozen=True)
class RunResult:
    """One run of one schedule: whether the standings were settled after each match."""

    kind: str
    rep: int
    settled: tuple[bool, ...]
    """``settled[n - 1]``: the whole order settled in the table after the first n matches."""
    pairs: dict[str, tuple[bool, ...]]
    """The same for one pair: ``greedy>random`` and ``mc>greedy``."""
    seconds: float

    @property
    def for_good(self) -> int | None:
        """The first N from which the table stays settled up to the cap (``None``: censored)."""
        return for_good(self.settled)

    @property
    def first_hit(self) -> int | None:
        """The first N at which the table is settled, if only for a moment (``None``: never)."""
        return next((n for n, ok in enumerate(self.settled, 1) if ok), None)


def for_good(trace: Sequence[bool]) -> int | None:
    """The first N with ``trace[n - 1]`` true for every n from N on (``None``: not at the end)."""
    if not trace or not trace[-1]:
        return None
    n = len(trace)
    while n > 1 and trace[n - 2]:
        n -= 1
    return n


def one_run(kind: str, rep: int, cap: int, p: float, settings: Settings, seed: str) -> RunResult:
    """Plays ``cap`` matches of schedule ``kind``, reading the standings after each."""
    start = time.perf_counter()
    run_seed = f"{seed}-{rep}"
    table = Standings(NAMES)
    traces: tuple[list[bool], list[bool], list[bool]] = ([], [], [])
    for spec in plan(kind, cap, run_seed):
        table.add(play(spec, settings, run_seed))
        for trace, ok in zip(traces, settled(table, p), strict=True):
            trace.append(ok)
    full, low, high = (tuple(t) for t in traces)
    return RunResult(kind, rep, full, {"greedy>random": low, "mc>greedy": high},
                     time.perf_counter() - start)


def summary(values: Sequence[int | None], cap: int) -> tuple[float, str]:
    """The median (a censored run counts as ``cap + 1``: more than the cap), and a line with the
    median, the range and every run's figure (``>cap`` for a censored one)."""
    counts = sorted(cap + 1 if v is None else v for v in values)
    median = statistics.median(counts)
    censored = sum(v is None for v in values)

    def show(x: float) -> str:
        return f">{cap}" if x > cap else f"{x:g}"

    return median, (f"median {show(median)}, range {show(counts[0])}-{show(counts[-1])}, "
                    f"{censored} of {len(counts)} censored; runs: "
                    + " ".join(show(c) for c in counts))


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=REPS, help="independent runs of each schedule")
    ap.add_argument("--cap", type=int, default=CAP, help="matches played in every run")
    ap.add_argument("--target", type=int, default=TARGET, help="points that end a match")
    ap.add_argument("--worlds", type=int, default=WORLDS, help="mc's sampled worlds per decision")
    ap.add_argument("--p", type=float, default=0.95, help="required P(stronger than next)")
    ap.add_argument("--seed", default="ranking", help="runs use seeds <seed>-0, <seed>-1, ...")
    ap.add_argument("--jobs", type=int, default=2, help="runs played at once (processes)")
    args = ap.parse_args(argv)
    settings = Settings(target=args.target, worlds=args.worlds)
    print(f"ranking: {args.reps} runs of each schedule, {args.cap} matches each, target "
          f"{args.target}, mc {args.worlds} worlds per decision, P >= {args.p}",
          file=sys.stderr, flush=True)
    started = time.perf_counter()
    results: dict[str, list[RunResult]] = {"duplicate": [], "fresh": []}
    tasks = [(kind, rep) for rep in range(args.reps) for kind in results]
    with ProcessPoolExecutor(max(1, args.jobs)) as pool:
        futures = [pool.submit(one_run, kind, rep, args.cap, args.p, settings, args.seed)
                   for kind, rep in tasks]
        for done, future in enumerate(as_completed(futures), 1):
            r = future.result()
            results[r.kind].append(r)
            good = "never (censored)" if r.for_good is None else f"from match {r.for_good}"
            print(f"  [{done}/{len(tasks)}] {r.kind:9} run {r.rep}: settled {good}, first at "
                  f"{r.first_hit or '-'}; {r.seconds:.0f} s", file=sys.stderr, flush=True)
    medians: dict[str, float] = {}
    for kind, label in (("duplicate", "duplicate deals"), ("fresh", "fresh deals")):
        runs = results[kind]
        medians[kind], line = summary([r.for_good for r in runs], args.cap)
        _, first = summary([r.first_hit for r in runs], args.cap)
        print(f"{label:16} {'settled for good:':20} {line}")
        print(f"{'':16} {'first settled:':20} {first}")
        for pair in ("greedy>random", "mc>greedy"):
            _, alone = summary([for_good(r.pairs[pair]) for r in runs], args.cap)
            print(f"{'':16} {pair + ' alone:':20} {alone}")
    print(f"({time.perf_counter() - started:.0f} s)", file=sys.stderr)
    dup, fresh = medians["duplicate"], medians["fresh"]

    def show(x: float) -> str:
        return f">{args.cap}" if x > args.cap else f"{x:g}"

    ratio = f"{fresh / dup:.1f} x" if dup <= args.cap and fresh <= args.cap else (
        f">{fresh / dup:.1f} x" if dup <= args.cap else "ratio unknown")
    print(f"ranking: duplicate {show(dup)} matches, fresh deals {show(fresh)} matches "
          f"(median of {args.reps} runs; {ratio})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
