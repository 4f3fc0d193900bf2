"""Does ``stop`` keep its promise? Realised error and matches to a decision, simulated, and with
real bots through the CLI.

Run:  .venv/bin/python bench/stopping.py                        # simulation only: ~1 min
      .venv/bin/python bench/stopping.py --sims 0 --real 12 --near 6 --twins 300   # real bots

**Noise from real play.** The script first plays ``--measure`` duplicate sets of three bots
in-process (``random``, ``greedy`` and a second ``random``; target 1000, 3 players, all
seatings) and keeps, for every deal played by all six seatings of its set, each entrant's points
minus the luck of its stock flips (``--noise raw``: the points) averaged over the seatings, minus
the entrant's mean: what a deal leaves after duplicate play.

**Simulation.** A simulated tournament runs through the real code (:class:`TournamentProgress`,
the formats, ratings, evidence, ``stop`` and its elimination); each set draws as many deals as a
real set had and each deal a real residual triple added to the members' planted points per hand.
An *error*
is a pair called ``stronger`` the wrong way or between equal entrants, or a ``tie`` between
entrants at least the margin apart. ``--sims`` tournaments per scenario, ``--cap`` sets at most.

**Real bots** (``--real``, ``--near``, ``--twins``, ``--ctwins``): tournaments written as
configuration files and run by ``ct-referee tournament`` (fresh bot processes per match,
``sandbox: none`` by default since the bots are ours), ``--jobs`` at once, stop at
``--confidence`` and ``--margin``: random < greedy < mc (3 seats, mc ``--playouts``, cap
``--real-cap``), equal twins (two random bots, 2 seats, cap ``--twin-cap``; ``--ctwins``: two
copies of ``bots/starter.c -DRANDOM_MOVES``, a random bot in C, the same question at a tenth of the
cost) and near-twins (greedy against greedy with a random move one time in 500:
``bench/bots/eps_greedy.py``). No real tournament starts after
``--real-minutes``. From the random/greedy/mc records it also measures the per-deal variance of
a pair's difference raw and adjusted, over all six seatings and over one rotation class (what
``seatings: rotate`` plays), and from them (or from ``--bound-rounds N``: one tournament of N
rounds without ``stop``) how fast the sign test, and a ratio test told the true mean and
deviation, could decide mc over greedy (:func:`bound_study`). The last line is ``stopping:
median <n> matches (p90 <m>) to decide random<greedy<mc; error <e>% on twins, <t>% wrong ties
on near-twins, at 5%``.

Measured: see docs/statistics.md (figures and commands).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import ranking  # noqa: E402

from referee.game.cards import Card  # noqa: E402
from referee.game.rules import Deal, Hand, Match, Variant, rank  # noqa: E402
from referee.match.job import DealSecret, MatchSpec  # noqa: E402
from referee.records.luck import model_luck  # noqa: E402
from referee.records.record import deal_to_json, read_json  # noqa: E402
from referee.tournament.course import TournamentPlan, TournamentProgress  # noqa: E402
from referee.tournament.formats import Format, Gauntlet, RoundRobin  # noqa: E402
from referee.tournament.ratings import MatchResult  # noqa: E402
from referee.tournament.schedule import schedule  # noqa: E402
from referee.tournament.stopping import PairTest, Stop, deal_pieces  # noqa: E402

PolicyFactory = Callable[[int, MatchSpec, int], ranking.Policy]
"""``(entrant, spec, seat) -> policy`` for one seat of one match."""


def play_hands(spec: MatchSpec, seats: Sequence[ranking.Policy], *,
               target: int) -> tuple[Match, list[dict[str, Any]]]:
    """Plays one match in-process with a policy per seat; the match and every hand as a
    record's hand entry (with its ``scores``)."""
    match = Match(spec.players, variant=Variant.CLASSIC, target=target)
    entries: list[dict[str, Any]] = []
    while not match.is_over():
        deal = spec.deal(match.hand_number)
        hand = match.new_hand(deal)
        ranking.play_out(hand, seats)
        entry = _entry(deal, hand)
        entry["scores"] = list(match.finish_hand(hand))
        entries.append(entry)
    return match, entries


def play(spec: MatchSpec, policy: PolicyFactory, *, target: int,
         names: Sequence[str]) -> tuple[MatchResult, list[list[int]], list[list[float]]]:
    """Plays one match in-process; its result, every hand's points by seat and every hand's
    luck of the stock flips by seat (:mod:`referee.records.luck`, as a record holds it)."""
    match, entries = play_hands(spec, [policy(e, spec, s) for s, e in enumerate(spec.seats)],
                                target=target)
    luck = [model_luck(entry, spec.players, Variant.CLASSIC) for entry in entries]
    result = MatchResult(tuple(names[e] for e in spec.seats), tuple(match.totals),
                         tuple(match.ranks()), hands=len(match.hand_scores))
    return result, match.hand_scores, luck


def _entry(deal: Deal, hand: Hand) -> dict[str, Any]:
    """A finished hand as a record's hand entry (what :func:`hand_luck` reads)."""
    entry: dict[str, Any] = dict(deal_to_json(deal, hand.dealer))
    moves = [e for e in hand.events if e.kind != "take"]
    for play_ev, turn_ev in zip(moves[::2], moves[1::2], strict=True):
        entry["turns"].append({"seat": play_ev.seat, "play": str(play_ev.card),
                               "capture": [str(Card(c)) for c in play_ev.captured],
                               "turn": str(turn_ev.card),
                               "turn_capture": [str(Card(c)) for c in turn_ev.captured]})
    return entry


# -- noise from real records -------------------------------------------------------------------


@dataclass(frozen=True)
class Noise:
    """Deal residuals of real duplicate sets."""

    residuals: list[tuple[float, ...]]
    deals: list[int]
    """Deals per set that every seating reached."""
    means: tuple[float, ...]


def measure(sets: int, seed: str, *, adjusted: bool = True) -> Noise:
    """Plays ``sets`` duplicate sets of random, greedy and a random twin; their deal residuals
    (of the points minus the flips' luck, unless not ``adjusted``)."""
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
        played = [play(s, policy, target=1000, names=names) for s in matches]
        common = min(len(p[1]) for p in played)
        deals.append(common)
        for k in range(common):
            pts = [0.0, 0.0, 0.0]
            for spec, (_, h, luck) in zip(matches, played, strict=True):
                for seat, e in enumerate(spec.seats):
                    pts[e] += (h[k][seat] - (luck[k][seat] if adjusted else 0.0)) / len(matches)
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
        players=3, seatings="all", seed=f"sim{rep}", max_matches=cap_sets * 6, stop=stop,
        secret=DealSecret(bytes(32))))
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
        if pair.verdict == "tie" and abs(su - sl) >= scenario.margin:
            error = True
    return SimResult(error, course.matches, course.stopped or "?")


def scenarios(noise: Noise) -> list[Scenario]:
    """Fields of planted strengths, from real gaps: greedy over random as measured, mc 5 points
    a hand over greedy (as ``bench/ranking.py`` reports for 150 worlds)."""
    gap = noise.means[1] - (noise.means[0] + noise.means[2]) / 2
    return [
        Scenario("random<greedy<mc", (0.0, gap, gap + 5.0)),
        Scenario("twins+1", (0.0, 0.0, 6.0)),
        Scenario("near-twins+1", (0.0, 0.13, 6.0)),
        Scenario("four-twins", (0.0, 0.0, 0.0, 0.0)),
        Scenario("steps-of-6", (0.0, 6.0, 12.0, 18.0)),
        Scenario("gauntlet", (0.0, 12.0, 24.0, 18.0, 6.0), candidates=(3, 4)),
        Scenario("random<greedy<mc,m3", (0.0, gap, gap + 5.0), margin=3.0),
        Scenario("twins+1,m3", (0.0, 0.0, 6.0), margin=3.0),
    ]


def _sim_batch(args: tuple[Scenario, Noise, range, int, float]) -> list[SimResult]:
    scenario, noise, reps, cap, confidence = args
    return [simulate(scenario, noise, rep=i, cap_sets=cap, confidence=confidence) for i in reps]


# -- real bots through the CLI ----------------------------------------------------------------

FIELDS = {
    "ladder": (3, [("random", "python3 {root}/bots/random_bot.py"),
                   ("greedy", "python3 {root}/bots/greedy_bot.py"),
                   ("mc", "python3 {root}/bots/mc_bot.py --playouts {playouts}")]),
    "ctwins": (2, [("random-a", "{ctwin}"), ("random-b", "{ctwin}")]),
    "twins": (2, [("random-a", "python3 {root}/bots/random_bot.py"),
                  ("random-b", "python3 {root}/bots/random_bot.py")]),
    "near": (2, [("greedy", "python3 {root}/bots/greedy_bot.py"),
                 ("eps-greedy", "python3 {root}/bench/bots/eps_greedy.py 0.002")]),
}
"""The real fields: random < greedy < mc; two copies of the random bot (each seat seeded by the
match id); greedy against greedy with a random move one time in 500 (truly weaker by 0.13 +-
0.018 points a hand, issue 22)."""


@dataclass
class RealRun:
    """One tournament through the CLI."""

    kind: str
    seed: int
    matches: int
    stopped: str
    pairs: list[dict[str, Any]]
    records: list[dict[str, Any]]
    seconds: float
    margin: float


def real_run(kind: str, seed: int, args: argparse.Namespace, folder: Path) -> RealRun:
    """Runs one ``kind`` tournament with ``ct-referee tournament`` (its own process, fresh
    bots per match) and reads back its standings and records."""
    players, entrants = FIELDS["ladder" if kind == "fixed" else kind]
    margin = args.margin
    config: dict[str, Any] = {
        "name": f"{kind}-{seed}", "players": players, "target": args.target,
        "seatings": args.seatings, "seed": seed, "sandbox": args.sandbox,
        "entrants": [{"name": n, "command": c.format(root=ROOT, playouts=args.playouts,
                                                     ctwin=args.ctwin_path)}
                     for n, c in entrants],
        "stop": {"confidence": args.confidence, "margin": margin},
        "max_matches": args.real_cap if kind == "ladder" else args.twin_cap,
        "limits": {"move_ms": 5000, "startup_ms": 20000},
    }
    if kind == "fixed":  # no stop: a fixed number of rounds, for the bound study
        del config["stop"], config["max_matches"]
        config["rounds"] = args.bound_rounds
    path = folder / f"{kind}-{seed}.yaml"
    path.write_text(json.dumps(config))
    out = folder / f"{kind}-{seed}"
    t0 = time.perf_counter()
    done = subprocess.run([str(ROOT / ".venv" / "bin" / "ct-referee"), "tournament", str(path),
                           "--output", str(out), "--fresh"], capture_output=True, text=True,
                          check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{kind} {seed}: exit {done.returncode}: {done.stderr[-2000:]}")
    standings = json.loads((out / "standings.json").read_text())
    records = [read_json(p) for p in sorted((out / "games").glob("*.json*"))]
    shutil.rmtree(out, ignore_errors=True)
    return RealRun(kind, seed, standings["matches"], standings["stopped"], standings["pairs"],
                   records, time.perf_counter() - t0, margin)


def _decided(run: RealRun) -> bool:
    return (run.stopped == "settled"
            and [(p["upper"], p["lower"], p["verdict"]) for p in run.pairs]
            == [("mc", "greedy", "stronger"), ("greedy", "random", "stronger")])


def _wrong(run: RealRun) -> bool:
    """A verdict that contradicts the truth: a pair called stronger the wrong way, twins
    called different, or a tie where the margin is narrower than the true difference."""
    truth = {"random": 0, "greedy": 1, "mc": 2, "random-a": 0, "random-b": 0, "eps-greedy": 0}
    for p in run.pairs:
        up, low = truth[p["upper"]], truth[p["lower"]]
        if p["verdict"] == "stronger" and up <= low:
            return True
        if p["verdict"] == "tie" and run.kind == "near" and run.margin < 0.13:
            return True
    return False


def seat_study(records: Sequence[dict[str, Any]]) -> dict[tuple[str, str], dict[str, float]]:
    """From real ``seatings: all`` sets of 3 seats, per pair: the mean and per-deal variance of
    its difference over the whole set (``raw``, ``adjusted`` by the flips' luck), and over the 3
    seatings of each rotation class (``rotate0``, ``rotate1``: what ``seatings: rotate`` plays,
    one class or the other)."""
    sets: dict[tuple[int, int], list[dict[str, Any]]] = {}
    for r in records:
        _, g, _ = r["id"].split("-")
        rnd = int(r["id"].split("-")[0][1:])
        sets.setdefault((rnd, int(g[1:])), []).append(r)
    rows: dict[tuple[str, str], dict[str, list[float]]] = {}
    for group in sets.values():
        if len(group) != 6:
            continue
        common = min(len(r["hands"]) for r in group)
        names = sorted(group[0]["players"])
        for k in range(common):
            for cls in (None, 0, 1):
                for adjust in (False, True):
                    pts = {n: 0.0 for n in names}
                    chosen = [r for r in group if cls is None or _cyclic(r["players"]) == cls]
                    for r in chosen:
                        h = r["hands"][k]
                        for seat, n in enumerate(r["players"]):
                            pts[n] += (h["scores"][seat] - (h["luck"][seat] if adjust else 0.0)) \
                                / len(chosen)
                    key = ("adjusted" if adjust else "raw") if cls is None else \
                        f"rotate{cls}{'' if adjust else '_raw'}"
                    for a, b in itertools.combinations(names, 2):
                        rows.setdefault((a, b), {}).setdefault(key, []).append(pts[a] - pts[b])
    return {pair: {f"{k}_{stat}": f(v) for k, v in kinds.items() if len(v) > 1
                   for stat, f in (("mean", statistics.fmean), ("var", statistics.pvariance))}
            for pair, kinds in rows.items()}


def bound_study(records: Sequence[dict[str, Any]], *, confidence: float, margin: float,
                draws: int = 4000, seed: int = 1) -> list[str]:
    """How fast *any* rule could decide mc over greedy on this evidence: the real ``all`` sets
    of mc and greedy resampled (a tournament draws whole sets, with replacement), each set
    giving its per-deal pieces (:func:`referee.tournament.stopping.deal_pieces`). Three rules
    read the same draws at every set's end: the real sign test; an *oracle* sequential
    probability ratio test told the true mean and standard deviation of a piece (no real rule
    knows them), at the pair's level of a field of three with the direction known
    (``log(3/alpha)``) and unknown (``log(6/alpha)``); and a single look after 2 sets, a
    normal test told the true standard deviation (not sequential: it decides then or never)."""
    sets: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in records:
        rnd, g, _ = r["id"].split("-")
        sets.setdefault((r.get("tournament", ""), rnd + g), []).append(r)
    pool = []
    for group in sets.values():
        if len(group) != 6:
            continue
        names = sorted(group[0]["players"])
        ix = {n: i for i, n in enumerate(names)}
        pool.append(deal_pieces(ix["mc"], ix["greedy"], [[ix[n] for n in r["players"]]
                                                         for r in group],
                                [[h["scores"] for h in r["hands"]] for r in group],
                                [[h["luck"] for h in r["hands"]] for r in group]))
    if len(pool) < 4:
        return []
    flat = [x for d in pool for x in d]
    mu, sd = statistics.fmean(flat), statistics.stdev(flat)
    alpha = 1 - confidence
    rng = random.Random(seed)
    cap = 10

    def sets_to(rule: str, threshold: float) -> list[int]:
        out = []
        for _ in range(draws):
            test, log_e, took = PairTest(margin), 0.0, cap + 1
            for i in range(cap):
                xs = rng.choice(pool)
                if rule == "sign":
                    test.add(xs)
                    log_e = max(test.peak_up, test.peak_down)  # the test's own evidence
                else:
                    log_e += sum(mu / sd ** 2 * (x - mu / 2) for x in xs)
                if log_e >= threshold:
                    took = i + 1
                    break
            out.append(took)
        return sorted(out)

    def line(label: str, took: list[int]) -> str:
        med, p90 = took[len(took) // 2], took[int(0.9 * len(took))]
        return (f"  {label}: median {6 * med} matches, p90 {6 * p90}; decided within 12 "
                f"matches in {sum(t <= 2 for t in took) / len(took):.0%}")

    deals2 = statistics.fmean(len(d) for d in pool) * 2
    z = statistics.NormalDist()
    power = 1 - z.cdf(z.inv_cdf(1 - alpha / 3) - mu / sd * math.sqrt(deals2))
    return [f"bound, mc over greedy from {len(pool)} real sets ({len(flat)} deals: mean "
            f"{mu:+.2f}, sd {sd:.2f} a deal), {draws} resampled tournaments, cap {cap} sets:",
            line("ct-referee's test (sign and normal bets)", sets_to("sign", math.log(3 / alpha))),
            line("oracle ratio test, direction unknown", sets_to("oracle", math.log(6 / alpha))),
            line("oracle ratio test, direction known", sets_to("oracle", math.log(3 / alpha))),
            f"  one look at 12 matches, true sd known (not sequential): decides {power:.0%}"]


def _cyclic(players: Sequence[str]) -> int:
    """Which of the two cyclic orders of three seats a seating is."""
    order = sorted(players)
    i = list(players).index(order[0])
    return 0 if players[(i + 1) % 3] == order[1] else 1


def real(args: argparse.Namespace) -> list[str]:
    """The real-bot part; returns its summary lines."""
    first = args.first_seed
    queues = [[("ladder", first + s) for s in range(args.real)],
              [("near", first + s) for s in range(args.near)],
              [("twins", first + s) for s in range(args.twins)],
              [("ctwins", first + s) for s in range(args.ctwins)],
              [("fixed", first)] if args.bound_rounds else []]
    kinds = [q[i] for i in range(max(map(len, queues))) for q in queues if i < len(q)]
    print(f"real bots through the CLI: {args.real} random/greedy/mc tournaments (mc --playouts "
          f"{args.playouts}, cap {args.real_cap}), {args.near} near-twin, {args.twins} twin and "
          f"{args.ctwins} C twin tournaments (cap {args.twin_cap}); target {args.target}, "
          f"seatings {args.seatings}, "
          f"stop confidence {args.confidence} margin {args.margin}, sandbox {args.sandbox}, "
          f"{args.jobs} at once", flush=True)
    runs: dict[str, list[RealRun]] = {"ladder": [], "near": [], "twins": [], "ctwins": [],
                                      "fixed": []}
    deadline = time.monotonic() + args.real_minutes * 60
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(max(1, args.jobs)) as pool:
        args.ctwin_path = str(Path(tmp) / "random_twin")  # the starter bot, random moves
        if args.ctwins:
            subprocess.run(["cc", "-O2", "-o", args.ctwin_path,
                            "-DRANDOM_MOVES", str(ROOT / "bots" / "starter.c")], check=True)
        futures = [pool.submit(_maybe, kind, seed, args, Path(tmp), deadline)
                   for kind, seed in kinds]
        for f in futures:
            run = f.result()
            if run is None:
                continue
            runs[run.kind].append(run)
            line = " ".join(f"{p['upper']}>{p['lower']}:{p['verdict']}"
                            f"({(p['diff'] or 0):+.1f})" for p in run.pairs)
            print(f"  {run.kind} {run.seed}: {run.matches} matches, {run.stopped}: {line} "
                  f"({run.seconds:.0f} s)", flush=True)
    out = []
    ladder = runs["ladder"]
    if ladder:
        cap = args.real_cap
        counts = sorted(r.matches if _decided(r) else cap + 1 for r in ladder)
        med = statistics.median(counts)
        p90 = counts[min(len(counts) - 1, math.ceil(0.9 * len(counts)) - 1)]
        study = seat_study([rec for r in ladder for rec in r.records])
        for (a, b), s in study.items():
            if "rotate0_mean" not in s:
                continue
            out.append(f"seatings, {a}-{b} per deal (from {len(ladder)} runs' all sets): all: "
                       f"mean {s['adjusted_mean']:+.1f}, variance {s['raw_var']:.0f} raw, "
                       f"{s['adjusted_var']:.0f} adjusted; rotation classes: mean "
                       f"{s['rotate0_mean']:+.1f} / {s['rotate1_mean']:+.1f}, variance "
                       f"{s['rotate0_var']:.0f} / {s['rotate1_var']:.0f} adjusted")
        out += bound_study([rec for r in ladder for rec in r.records],
                           confidence=args.confidence, margin=args.margin)
        out.append(f"random<greedy<mc: matches to decide {' '.join(map(str, counts))} "
                   f"({cap + 1} = not decided by the cap {cap}); "
                   f"{sum(_wrong(r) for r in ladder)} wrong")
    else:
        med = p90 = math.nan
    if runs["fixed"]:
        out += bound_study([rec for r in runs["fixed"] for rec in r.records],
                           confidence=args.confidence, margin=args.margin)
    ctwins = runs["ctwins"]
    if ctwins:
        out.append(f"twins in C (bots/starter.c -DRANDOM_MOVES): {len(ctwins)} tournaments, "
                   f"{sum(_wrong(r) for r in ctwins)} called different "
                   f"({100 * sum(_wrong(r) for r in ctwins) / len(ctwins):.1f}%); matches mean "
                   f"{statistics.fmean(r.matches for r in ctwins):.1f}")
    twins, near = runs["twins"] + ctwins, runs["near"]
    err = 100 * sum(_wrong(r) for r in twins) / len(twins) if twins else math.nan
    wrong_ties = 100 * sum(_wrong(r) for r in near) / len(near) if near else math.nan
    if near:
        out.append(f"near-twins: {len(near)} tournaments, verdicts "
                   f"{', '.join(p['verdict'] for r in near for p in r.pairs)}; "
                   f"matches {' '.join(str(r.matches) for r in near)}")
    out.append(f"twins: {len(twins)} tournaments ({len(runs['twins'])} of random_bot.py, "
               f"{len(ctwins)} in C), {sum(_wrong(r) for r in twins)} called "
               f"different; matches mean "
               f"{statistics.fmean(r.matches for r in twins) if twins else math.nan:.1f}")
    alpha = 100 * (1 - args.confidence)
    out.append(f"stopping: median {med:g} matches (p90 {p90:g}) to decide random<greedy<mc; "
               f"error {err:.1f}% on twins, {wrong_ties:.1f}% wrong ties on near-twins, "
               f"at {alpha:g}%")
    return out


def _maybe(kind: str, seed: int, args: argparse.Namespace, folder: Path,
           deadline: float) -> RealRun | None:
    if time.monotonic() > deadline:
        return None
    return real_run(kind, seed, args, folder)


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sims", type=int, default=400, help="simulated tournaments per scenario")
    ap.add_argument("--cap", type=int, default=30, help="sets at most per simulated tournament")
    ap.add_argument("--confidence", type=float, default=0.95)
    ap.add_argument("--measure", type=int, default=24, help="real sets measured for the noise")
    ap.add_argument("--real", type=int, default=0,
                    help="random/greedy/mc tournaments through the CLI (minutes each)")
    ap.add_argument("--near", type=int, default=0, help="near-twin tournaments")
    ap.add_argument("--twins", type=int, default=0, help="twin tournaments")
    ap.add_argument("--ctwins", type=int, default=0,
                    help="twin tournaments of a random bot in C (bots/starter.c -DRANDOM_MOVES, "
                         "built with cc -O2): the same question, 10 times cheaper")
    ap.add_argument("--real-cap", type=int, default=60, help="matches at most per real run")
    ap.add_argument("--twin-cap", type=int, default=40, help="matches at most per (near-)twin run")
    ap.add_argument("--margin", type=float, default=0.0,
                    help="stop.margin of the real runs (0: the default)")
    ap.add_argument("--seatings", default="all")
    ap.add_argument("--playouts", type=int, default=100)
    ap.add_argument("--sandbox", default="none")
    ap.add_argument("--real-minutes", type=float, default=60.0,
                    help="start no real tournament after this many minutes")
    ap.add_argument("--target", type=int, default=1000)
    ap.add_argument("--worlds", type=int, default=ranking.WORLDS)
    ap.add_argument("--seed", default="stopping")
    ap.add_argument("--noise", choices=("adjusted", "raw"), default="adjusted",
                    help="simulate with the residuals of the adjusted points (the default "
                         "evidence) or of the raw ones")
    ap.add_argument("--only", default="", help="simulate only the scenarios named (commas)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--bound-rounds", type=int, default=0,
                    help="also play one random/greedy/mc tournament of this many rounds without "
                         "stop, and print how fast any rule could decide mc over greedy on it")
    ap.add_argument("--first-seed", type=int, default=0,
                    help="seed of the first real tournament of each kind (to add runs to "
                         "an earlier batch without repeating it)")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    noise = measure(args.measure, args.seed, adjusted=args.noise == "adjusted")
    flat = [x for r in noise.residuals for x in r]
    pair = [r[0] - r[1] for r in noise.residuals]
    print(f"noise ({args.noise}): {len(noise.residuals)} deals from {args.measure} real sets "
          f"(random, greedy, random twin; target 1000), deals per set "
          f"{statistics.fmean(noise.deals):.1f}; residual sd per entrant "
          f"{statistics.pstdev(flat):.1f}, per pair {statistics.pstdev(pair):.1f} points; "
          f"means {', '.join(f'{m:.1f}' for m in noise.means)} "
          f"({time.perf_counter() - t0:.1f} s)")
    alpha = 1 - args.confidence
    lines = []
    with ProcessPoolExecutor(max(1, args.jobs)) as pool:
        wanted = set(args.only.split(",")) - {""}
        for sc in scenarios(noise) if args.sims > 0 else []:
            if wanted and sc.name not in wanted:
                continue
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
    if args.real or args.near or args.twins or args.ctwins or args.bound_rounds:
        lines += real(args)
    for line in lines:
        print(line)
    print(f"({time.perf_counter() - t0:.0f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
