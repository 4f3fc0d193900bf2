"""Who the fair-play audit names beside a cheat: a fast in-process simulation.

Run:  .venv/bin/python bench/attribution.py [--reps 1000] [--before 1fda365]
      .venv/bin/python bench/attribution.py --league 200 --reps 0   # league seasons only
      .venv/bin/python bench/attribution.py --league-interval 2000 --before 1fda365 --reps 0

Not bots, not processes: each duplicate set is simulated from per-seating points, since what
is measured is the attribution (:mod:`referee.tournament.attribution`) and not the play. A field
of three entrants (``cheat``, ``b``, ``c``), a round robin of duplicate sets (2 seats: each
pair, 2 seatings; 3 seats: all three, 6 seatings), every set's first-played seating drawn at
random. In a seating an entrant's points a hand are its share plus zero-sum noise of ``--sd``
points a deal (the points of a hand are fixed), averaged over the deals of a match (about
``target / (240 / players * 1.35)``, as the forecast counts). The cheat gains ``g`` points a
hand in every seating after the first-played one, taken evenly from the others (a feeder:
``g`` < 0, given to them). Each tournament is read after ``10``, ``20`` and ``40`` sets a pair
by :func:`referee.tournament.audit.flags` at 95% (and, with ``--before REV``, by the audit of
that revision, loaded from git). It prints, per scenario, how often the cheat is flagged and
how often an honest entrant is named alone (``b`` or ``c``: flag with ``gains later`` or
``loses later``) or in a group.

``--sd 30`` is a choice that puts the audit of 1fda365 near the issue's figures measured on the
real engine (cheat +8, 2 seats, target 1000: flagged in 83% by 20 sets a pair).
"""

from __future__ import annotations

import argparse
import math
import random
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from referee.tournament.attribution import AuditEvidence, FieldAudit, SetStat  # noqa: E402
from referee.tournament.audit import flags  # noqa: E402
from referee.tournament.stopping import PairTest  # noqa: E402

LOOKS = (10, 20, 40)
NAMES = ("cheat", "b", "c")


def deals(target: int, players: int) -> int:
    """Hands a match plays, about (the forecast's count)."""
    return max(1, round(target / (240 / players * 1.35)))


def a_set(rng: random.Random, members: tuple[int, ...], gain: float, sd: float,
          hands: int) -> dict[int, SetStat]:
    """Each member's ``T`` of one simulated set (``gain``: the cheat's, entrant 0, in the
    later seatings)."""
    seatings = 2 if len(members) == 2 else 6
    first = rng.randrange(seatings)
    points = []
    for s in range(seatings):
        noise = [sum(rng.gauss(0, sd) for _ in range(hands)) / hands for _ in members]
        mean = sum(noise) / len(noise)
        y = [x - mean for x in noise]
        if s != first and 0 in members:
            for k, e in enumerate(members):
                y[k] += gain if e == 0 else -gain / (len(members) - 1)
        points.append(y)
    out = {}
    for k, e in enumerate(members):
        ys = [p[k] for p in points]
        total = sum(ys)
        alts = tuple((total - y) / (seatings - 1) - y for y in ys)
        out[e] = SetStat(tuple(sorted(members)), alts[first], alts)
    return out


def tournament(seed: str, gain: float, players: int, target: int, sd: float,
               before: types.ModuleType | None) -> dict[str, Any]:
    """One tournament: who is flagged, and how, at each look (now, and before)."""
    rng = random.Random(seed)
    groups = [(0, 1, 2)] if players == 3 else [(0, 1), (0, 2), (1, 2)]
    hands = deals(target, players)
    field = FieldAudit(lambda e: 1 / 3, closed=3)
    history: list[dict[int, SetStat]] = []
    out: dict[str, Any] = {}
    for look in range(1, LOOKS[-1] + 1):
        for g in groups:
            stats = a_set(rng, g, gain, sd, hands)
            field.add(stats)
            history.append(stats)
        if look in LOOKS:
            out[f"now{look}"] = flags(field, 3, 0.05)
            if before is not None:
                out[f"before{look}"] = old_flags(before, history)
    return out


def old_flags(module: types.ModuleType, history: list[dict[int, SetStat]]) -> dict[int, str]:
    """The flags of the audit of an earlier revision on the same sets."""
    audit = module.Audit(list(NAMES), bound=240, per_set=2)

    def entrant_stats(e: int) -> list[Any]:
        return [module.SetStat(s[e].members, s[e].observed, s[e].alternatives)
                for s in history if e in s]

    audit.entrant_stats = entrant_stats
    result = audit.result(alpha=0.05)
    return {i: result[n].why for i, n in enumerate(NAMES) if result[n].flag}


def load_module(rev: str, path: str) -> types.ModuleType:
    """The module at ``path`` of revision ``rev``, from git."""
    text = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:{path}"],
                          capture_output=True, text=True, check=True).stdout
    module = types.ModuleType(f"before_{Path(path).stem}")
    sys.modules[module.__name__] = module
    exec(compile(text, f"{rev}:{path}", "exec"), module.__dict__)
    return module


def load_before(rev: str) -> types.ModuleType:
    """The audit module of revision ``rev``, from git."""
    return load_module(rev, "referee/tournament/audit.py")


def season(seed: str, gain: float, versions: int, sets: int, sd: float) -> dict[str, set[int]]:
    """One simulated league season of 2-player sets (target 500: 3 hands a match) among the
    versions arrived so far (one more every ``sets / versions`` sets), version 3 gaining
    ``gain`` in later seatings: who is named now (the league's :class:`FieldAudit`, version
    ``j`` at the share ``1 / (j (j + 1))``) and who was before (each version on all its sets at
    its level)."""
    rng = random.Random(seed)
    field = FieldAudit(lambda e: 1 / ((e + 1) * (e + 2)))
    before: dict[int, AuditEvidence] = {}
    every = max(1, sets // versions)
    for k in range(sets):
        arrived = min(versions, 2 + k // every)
        pair = tuple(rng.sample(range(arrived), 2))
        stats = a_set_of(rng, pair, gain, sd, 3)
        field.add(stats)
        for e, st in stats.items():
            before.setdefault(e, AuditEvidence()).add(st)
    named = {e for e in field.entrants if not field.indivisible and field.named(e, 0.05)}
    old = {e for e, ev in before.items() if ev.peak >= math.log((e + 1) * (e + 2) / 0.05)}
    return {"now": named, "before": old}


def a_set_of(rng: random.Random, members: tuple[int, ...], gain: float, sd: float,
             hands: int) -> dict[int, SetStat]:
    """:func:`a_set` with the cheat as entrant 3."""
    relabel = {e: (0 if e == 3 else 3 if e == 0 else e) for e in members}
    stats = a_set(rng, tuple(relabel[e] for e in members), gain, sd, hands)
    back = {v: k for k, v in relabel.items()}
    return {back[e]: SetStat(tuple(sorted(members)), st.observed, st.alternatives)
            for e, st in stats.items()}


def leagues(reps: int, sd: float) -> None:
    """Honest seasons, and seasons with one cheat (+8, +15): who is named."""
    print(f"league seasons: {reps} a line, 12 versions, 600 two-player sets, sd {sd:g}, 95%")
    for gain in (0.0, 8.0, 15.0):
        runs = [season(f"season:{gain}:{r}", gain, 12, 600, sd) for r in range(reps)]
        for who in ("now", "before"):
            honest = sum(bool(r[who] - {3}) if gain else bool(r[who]) for r in runs)
            cheat = sum(3 in r[who] for r in runs) if gain else 0
            print(f"  cheat {gain:+3.0f} {who:6s}: an honest version named in "
                  f"{100 * honest / reps:4.1f}% of seasons"
                  + (f", the cheat in {100 * cheat / reps:4.1f}%" if gain else ""), flush=True)


def league_interval(reps: int, rev: str) -> None:
    """An honest version's audit interval in a season of 87 sets whose ``T`` spreads by 15, 33
    or 50 points (a league at target 500: about 33): how often it excludes the true 0 at the
    end, now and at revision ``rev`` (the league's level for version 1, 2.5%)."""
    rules: dict[str, Any] = {"now": PairTest}
    if rev:
        rules["before"] = load_module(rev, "referee/tournament/stopping.py").PairTest
    print(f"league audit interval, honest version 1, 87 sets, {reps} seasons a line")
    for sd in (15.0, 33.0, 50.0):
        for who, rule in rules.items():
            miss = 0
            for r in range(reps):
                rng = random.Random(f"iv:{sd}:{r}")
                t = rule(10.0)
                for _ in range(87):
                    y = [rng.gauss(0, sd / math.sqrt(2)) for _ in range(2)]
                    t.add([(y[1] - y[0]) * (1 if rng.random() < 0.5 else -1)])
                low, high = t.interval(0.025)
                miss += not low <= 0 <= high
            print(f"  spread {sd:4.0f} {who:6s}: the interval excludes 0 in "
                  f"{100 * miss / reps:4.1f}%", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=1000, help="tournaments per scenario")
    ap.add_argument("--sd", type=float, default=30.0, help="points a deal, one entrant's noise")
    ap.add_argument("--before", default="", help="also the audit of this git revision")
    ap.add_argument("--gains", default="5,8,15,-29", help="the cheat's gains (< 0: a feeder)")
    ap.add_argument("--targets", default="300,1000")
    ap.add_argument("--league", type=int, default=0, help="also this many league seasons")
    ap.add_argument("--league-interval", type=int, default=0,
                    help="also the audit interval of this many honest seasons")
    args = ap.parse_args()
    if args.league_interval:
        league_interval(args.league_interval, args.before)
    if args.league:
        leagues(args.league, args.sd)
    if not args.reps:
        return
    before = load_before(args.before) if args.before else None
    whos = ("now", "before") if before is not None else ("now",)
    print(f"{args.reps} tournaments a line, sd {args.sd:g} a deal, field of three, 95%")
    print("gain players target audit | cheat flagged @10 @20 @40 | honest named alone "
          "@10 @20 @40 | honest in a pair/group @40")
    for gain in [float(x) for x in args.gains.split(",")] + [0.0]:
        for players in (2, 3):
            for target in [int(x) for x in args.targets.split(",")]:
                runs = [tournament(f"{gain}:{players}:{target}:{r}", gain, players, target,
                                   args.sd, before) for r in range(args.reps)]
                for who in whos:
                    cheat = [sum(0 in r[f"{who}{k}"] for r in runs) for k in LOOKS]
                    alone = [sum(any(r[f"{who}{k}"].get(e, "") in ("gains later",
                                                                    "loses later")
                                     for e in (1, 2)) for r in runs) for k in LOOKS]
                    group = sum(any(r[f"{who}40"].get(e, "").endswith("differs")
                                    for e in (1, 2)) for r in runs)
                    pct = [f"{100 * x / args.reps:5.1f}%" for x in cheat + alone]
                    print(f"{gain:+5.0f} {players} {target:5d} {who:6s} | "
                          f"{' '.join(pct[:3])} | {' '.join(pct[3:])} | "
                          f"{100 * group / args.reps:5.1f}%", flush=True)


if __name__ == "__main__":
    main()
