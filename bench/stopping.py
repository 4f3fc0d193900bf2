"""Does ``stop`` keep its promise? Realized error rate and matches to a decision, simulated; and
matches to settle random < greedy < mc with real bots.

Run:  .venv/bin/python bench/stopping.py                 # simulation only: ~1 min
      .venv/bin/python bench/stopping.py --real 4        # and 4 real-bot runs: ~10 min a run

**Noise from real records.** The script first plays ``--measure`` duplicate sets of three real
bots in-process (``random``, ``greedy`` and a second ``random`` with other seeds; target 1000,
3 players, all seatings) and keeps, for every deal played by all six seatings of its set, each
entrant's points in that hand averaged over the seatings, minus the entrant's mean: the luck a
deal leaves after duplicate play. It prints their spread.

**Simulation.** A simulated tournament runs through the real code:
:class:`referee.tournament.course.TournamentProgress`
with a :class:`referee.tournament.formats.RoundRobin` or
:class:`~referee.tournament.formats.Gauntlet`, TrueSkill
ratings, the evidence, ``stop`` and its elimination. Each duplicate set draws as many deals as a
real set had (resampled), and each deal a real residual triple (resampled, its values given to
the group's members in a random order) added to the members' planted points per hand; every
seating of the set sees the same deal points (the residuals are already seat-averaged). Each
scenario runs ``--sims`` tournaments, at most ``--cap`` sets each. An *error* is a tournament
whose final verdicts (the pairs of the format's questions, once it stopped) call a pair
``stronger`` the wrong way, or call two entrants of equal planted strength different. The
realized error rate must stay at or below ``1 - confidence``.

**Real bots.** ``--real N`` runs a round robin of ``random``, ``greedy`` and ``mc`` (configuration
order; ``bench/ranking.py``'s in-process policies, mc with ``--worlds`` sampled worlds per decision
and no deadline, target ``--target``) with ``stop: {confidence: 0.95}`` and a cap of ``--real-cap``
matches, N times with independent seeds, and prints the matches each took to stop (versus
``bench/ranking.py``'s 36 for the same settings, which reads TrueSkill's P >= 0.95).

The last lines are ``stopping: <scenario> error <e> (<= <alpha>), matches mean <m> p90 <q>`` per
scenario, and with ``--real``, ``stopping: real bots settled in <median> matches (runs ...)``.

Measured on 2026-11-30, 2 shared cores (noise: per-deal pair residual sd 15 points, 9.1 deals a
set; 400 tournaments a scenario, cap 30 sets = 180 matches; confidence 0.95):

    scenario (planted points/hand)      error   settled  matches mean  p90
    random<greedy<mc (0, 35.7, 40.7)    0.000   99 %      64.8         114
    twins+1 (0, 0, 6), margin 0         0.005    0 %     179.7         180   (twins stay open)
    twins+1 (0, 0, 6), margin 5         0.003   98 %      94.8         138
    four twins, margin 5                0.000   16 %     178.7         180
    steps of 6 (0, 6, 12, 18)           0.000   94 %     128.8         174
    steps of 2 (0, 2, 4, 6)             0.000    0 %     180.0         180
    gauntlet (0, 12, 24 | 18, 6)        0.000   42 %     171.8         180

Real bots (``--real 4``: target 2000, mc 150 worlds, cap 60): settled in 18, 30, 12 and 24
matches, median 21, every verdict right (mc > greedy by 3.5 to 6.1 points a hand, greedy >
random by about 34); ``bench/ranking.py`` needs 36 for TrueSkill's P >= 0.95, which has no error
control. About 20 minutes on 2 busy cores.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import ranking  # noqa: E402

from referee.game.rules import Match, Variant, rank  # noqa: E402
from referee.match.job import MatchSpec  # noqa: E402
from referee.tournament.course import TournamentPlan, TournamentProgress  # noqa: E402
from referee.tournament.formats import Format, Gauntlet, RoundRobin  # noqa: E402
from referee.tournament.ratings import MatchResult  # noqa: E402
from referee.tournament.schedule import schedule  # noqa: E402
from referee.tournament.stopping import Stop  # noqa: E402

PolicyFactory = Callable[[int, MatchSpec, int], ranking.Policy]
"""``(entrant, spec, seat) -> policy`` for one seat of one match."""


def play(spec: MatchSpec, policy: PolicyFactory, *, target: int,
         names: Sequence[str]) -> tuple[MatchResult, list[list[int]]]:
    """Plays one match in-process; its result and every hand's points by seat."""
    seats = [policy(e, spec, s) for s, e in enumerate(spec.seats)]
    match = Match(spec.players, variant=Variant.CLASSIC, target=target)
    while not match.is_over():
        hand = match.new_hand(spec.deal(match.hand_number))
        while not hand.is_over():
            seat = seats[hand.to_move]
            if hand.pick_card is not None:
                hand.pick(seat.pick(hand))
            else:
                hand.play(*seat.move(hand))
        match.finish_hand(hand)
    result = MatchResult(tuple(names[e] for e in spec.seats), tuple(match.totals),
                         tuple(match.ranks()), hands=len(match.hand_scores))
    return result, match.hand_scores


# -- noise from real records -------------------------------------------------------------------


@dataclass(frozen=True)
class Noise:
    """Deal residuals of real duplicate sets."""

    residuals: list[tuple[float, ...]]
    deals: list[int]
    """Deals per set that every seating reached."""
    means: tuple[float, ...]


def measure(sets: int, seed: str) -> Noise:
    """Plays ``sets`` duplicate sets of random, greedy and a random twin; their deal residuals."""
    names = ("random", "greedy", "random2")

    def policy(e: int, spec: MatchSpec, seat: int) -> ranking.Policy:
        if names[e] == "greedy":
            return ranking.GreedyPolicy(Variant.CLASSIC)
        return ranking.RandomPolicy(f"{seed}:{names[e]}:{spec.id}:{seat}")

    rows: list[list[float]] = []
    deals: list[int] = []
    specs = schedule(3, players=3, rounds=sets, seatings="all", seed=seed, secret=bytes(32))
    for r in range(1, sets + 1):
        matches = [s for s in specs if s.round == r]
        hands = [play(s, policy, target=1000, names=names)[1] for s in matches]
        common = min(len(h) for h in hands)
        deals.append(common)
        for k in range(common):
            pts = [0.0, 0.0, 0.0]
            for spec, h in zip(matches, hands, strict=True):
                for seat, e in enumerate(spec.seats):
                    pts[e] += h[k][seat] / len(matches)
            rows.append(pts)
    means = tuple(statistics.fmean(r[e] for r in rows) for e in range(3))
    return Noise([tuple(r[e] - means[e] for e in range(3)) for r in rows], deals, means)


# -- simulated tournaments ---------------------------------------------------------------------


@dataclass(frozen=True)
class Scenario:
    """Planted points per hand of each entrant, and the format."""

    name: str
    strengths: tuple[float, ...]
    margin: float = 0.0
    candidates: tuple[int, ...] = ()


@dataclass(frozen=True)
class SimResult:
    """One simulated tournament."""

    error: bool
    matches: int
    stopped: str


def simulate(scenario: Scenario, noise: Noise, *, rep: int, cap_sets: int,
             confidence: float) -> SimResult:
    """One simulated tournament of ``scenario`` with ``stop``."""
    rng = random.Random(f"sim:{scenario.name}:{rep}")
    n = len(scenario.strengths)
    names = [f"e{i}" for i in range(n)]
    fmt: Format = (Gauntlet(n, 3, scenario.candidates) if scenario.candidates
                   else RoundRobin(n, 3))
    stop = Stop(confidence, scenario.margin)
    course = TournamentProgress(fmt, names, TournamentPlan(
        players=3, seatings="all", seed=f"sim{rep}", max_matches=cap_sets * 6, stop=stop))
    while specs := course.next_round():
        by_group: dict[int, list[MatchSpec]] = {}
        for spec in specs:
            by_group.setdefault(spec.group, []).append(spec)
        for group in by_group.values():
            members = sorted(group[0].seats)
            points: dict[int, list[float]] = {e: [] for e in members}
            for _ in range(rng.choice(noise.deals)):
                res = list(rng.choice(noise.residuals))
                rng.shuffle(res)
                for e, x in zip(members, res, strict=False):
                    points[e].append(scenario.strengths[e] + x)
            for spec in group:
                hands = [[round(points[e][k]) for e in spec.seats]
                         for k in range(len(points[members[0]]))]
                totals = tuple(sum(h[s] for h in hands) for s in range(spec.players))
                result = MatchResult(tuple(names[e] for e in spec.seats), totals,
                                     tuple(rank(totals)), hands=len(hands))
                course.add(spec, result, hands)
    error = False
    index = {name: i for i, name in enumerate(names)}
    for pair in course.questions():
        su, sl = scenario.strengths[index[pair.upper]], scenario.strengths[index[pair.lower]]
        if pair.verdict == "stronger" and su <= sl:
            error = True
    return SimResult(error, course.matches, course.stopped or "?")


def scenarios(noise: Noise) -> list[Scenario]:
    """Fields of planted strengths, from real gaps: greedy over random as measured, mc 5 points
    a hand over greedy (as ``bench/ranking.py`` reports for 150 worlds)."""
    gap = noise.means[1] - (noise.means[0] + noise.means[2]) / 2
    return [
        Scenario("random<greedy<mc", (0.0, gap, gap + 5.0)),
        Scenario("twins+1", (0.0, 0.0, 6.0)),
        Scenario("twins+1,margin5", (0.0, 0.0, 6.0), margin=5.0),
        Scenario("four-twins,margin5", (0.0, 0.0, 0.0, 0.0), margin=5.0),
        Scenario("steps-of-6", (0.0, 6.0, 12.0, 18.0)),
        Scenario("steps-of-2", (0.0, 2.0, 4.0, 6.0)),
        Scenario("gauntlet", (0.0, 12.0, 24.0, 18.0, 6.0), candidates=(3, 4)),
    ]


def _sim_batch(args: tuple[Scenario, Noise, range, int, float]) -> list[SimResult]:
    scenario, noise, reps, cap, confidence = args
    return [simulate(scenario, noise, rep=i, cap_sets=cap, confidence=confidence) for i in reps]


# -- real bots ---------------------------------------------------------------------------------


def real_run(rep: int, *, cap: int, target: int, worlds: int, seed: str) -> tuple[int, str, str]:
    """A round robin of random, greedy, mc with ``stop``: matches played, why it stopped, and
    the final order with its verdicts."""
    names = list(ranking.NAMES)
    settings = ranking.Settings(target=target, worlds=worlds)
    run_seed = f"{seed}-{rep}"

    def policy(e: int, spec: MatchSpec, seat: int) -> ranking.Policy:
        return ranking.policy(names[e], spec, seat, settings, run_seed)

    course = TournamentProgress(RoundRobin(3, 3), names, TournamentPlan(
        players=3, seatings="all", seed=run_seed, max_matches=cap, stop=Stop(0.95)))
    while specs := course.next_round():
        for spec in specs:
            course.add(spec, *play(spec, policy, target=target, names=names))
    line = " ".join(f"{p.upper}>{p.lower}:{p.verdict}({p.diff:+.1f})" for p in course.pairs())
    return course.matches, course.stopped or "?", line


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sims", type=int, default=400, help="simulated tournaments per scenario")
    ap.add_argument("--cap", type=int, default=30, help="sets at most per simulated tournament")
    ap.add_argument("--confidence", type=float, default=0.95)
    ap.add_argument("--measure", type=int, default=24, help="real sets measured for the noise")
    ap.add_argument("--real", type=int, default=0, help="real-bot runs (slow: minutes each)")
    ap.add_argument("--real-cap", type=int, default=60, help="matches at most per real run")
    ap.add_argument("--target", type=int, default=ranking.TARGET)
    ap.add_argument("--worlds", type=int, default=ranking.WORLDS)
    ap.add_argument("--seed", default="stopping")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    noise = measure(args.measure, args.seed)
    flat = [x for r in noise.residuals for x in r]
    pair = [r[0] - r[1] for r in noise.residuals]
    print(f"noise: {len(noise.residuals)} deals from {args.measure} real sets "
          f"(random, greedy, random twin; target 1000), deals per set "
          f"{statistics.fmean(noise.deals):.1f}; residual sd per entrant "
          f"{statistics.pstdev(flat):.1f}, per pair {statistics.pstdev(pair):.1f} points; "
          f"means {', '.join(f'{m:.1f}' for m in noise.means)} "
          f"({time.perf_counter() - t0:.1f} s)")
    alpha = 1 - args.confidence
    lines = []
    with ProcessPoolExecutor(max(1, args.jobs)) as pool:
        for sc in scenarios(noise) if args.sims > 0 else []:
            t1 = time.perf_counter()
            chunks = [range(i, min(i + 25, args.sims)) for i in range(0, args.sims, 25)]
            results = [r for batch in pool.map(
                _sim_batch, [(sc, noise, c, args.cap, args.confidence) for c in chunks])
                for r in batch]
            matches = sorted(r.matches for r in results)
            err = sum(r.error for r in results) / len(results)
            settled = sum(r.stopped == "settled" for r in results) / len(results)
            p90 = matches[min(len(matches) - 1, int(0.9 * len(matches)))]
            strengths = ", ".join(f"{s:g}" for s in sc.strengths)
            print(f"  {sc.name:20} strengths ({strengths}) margin {sc.margin:g}: "
                  f"{len(results)} runs, error {err:.3f}, settled {settled:.0%}, matches mean "
                  f"{statistics.fmean(matches):.1f} p90 {p90} "
                  f"({time.perf_counter() - t1:.1f} s)", flush=True)
            lines.append(f"stopping: {sc.name} error {err:.3f} (<= {alpha:.2f}), matches mean "
                         f"{statistics.fmean(matches):.1f} p90 {p90}")
        if args.real:
            print(f"real bots: {args.real} runs, round robin random/greedy/mc, target "
                  f"{args.target}, mc {args.worlds} worlds per decision, stop confidence 0.95, "
                  f"cap {args.real_cap} matches", flush=True)
            futures = [pool.submit(real_run, i, cap=args.real_cap, target=args.target,
                                   worlds=args.worlds, seed=args.seed) for i in range(args.real)]
            runs = []
            for i, f in enumerate(futures):
                matches, stopped, line = f.result()
                runs.append(matches)
                print(f"  run {i}: {matches} matches, {stopped}: {line}", flush=True)
            lines.append(f"stopping: real bots settled in {statistics.median(runs):g} matches "
                         f"(median of {len(runs)} runs: {' '.join(map(str, runs))}; "
                         f"bench/ranking.py: 36)")
    for line in lines:
        print(line)
    print(f"({time.perf_counter() - t0:.0f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
