"""Does the fair-play audit catch a bot that remembers the deals, and leave honest ones alone?

Run:  .venv/bin/python bench/audit.py                   # in-process, ~10 minutes on 2 cores
      .venv/bin/python bench/audit.py --real 2          # also real bots through the CLI

A field of three entrants, 2 players, a round robin of ``--sets`` duplicate sets a pair (two
seatings each, played in the order the deal secret draws), target ``--target``. In-process
(:mod:`bench.ranking`'s twins of the bundled bots, the real rules engine, luck adjusted as
records are), each tournament judged by :class:`referee.tournament.audit.Audit` at 95%:

- ``gain``: the cheat plays random in the first-played seating of a deal and, in the later
  one (it "remembers" the deal), a greedy move with probability ``--p-gain`` (else random):
  it gains about 15 points a hand; the others are honest random and greedy bots;
- ``loss``: the cheat plays greedy first and random later (it loses about 30 a hand: it may be
  feeding an accomplice);
- ``honest``: the same field, every bot honest (the cheat's seat plays random throughout).

It prints, per scenario, how often each entrant is flagged and after how many sets a pair the
cheat was first flagged. ``--real N``: N tournaments of each cheat through ``ct-referee
tournament`` with ``bench/bots/remember.py`` (``sandbox: none``: it keeps the deals it has
seen in a file, the channel the sandbox closes).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import ranking  # noqa: E402
from stopping import play_hands  # noqa: E402

from referee.game.rules import Variant  # noqa: E402
from referee.records.luck import model_luck  # noqa: E402
from referee.tournament.audit import Audit, in_play_order  # noqa: E402
from referee.tournament.schedule import schedule  # noqa: E402

NAMES = ("cheat", "greedy", "random")


class Mixed(ranking.Policy):
    """Greedy with probability ``p`` on each decision, else random."""

    def __init__(self, seed: str, p: float) -> None:
        self.rng = random.Random(seed)
        self.p = p
        self.greedy = ranking.GreedyPolicy(Variant.CLASSIC)
        self.random = ranking.RandomPolicy(seed + ":r")

    def move(self, hand: Any) -> Any:
        return (self.greedy if self.rng.random() < self.p else self.random).move(hand)

    def pick(self, hand: Any) -> Any:
        return (self.greedy if self.rng.random() < self.p else self.random).pick(hand)


def cheat_p(kind: str, later: bool, p_gain: float) -> float:
    """The cheat's chance of a greedy decision."""
    if kind == "gain":
        return p_gain if later else 0.0
    if kind == "loss":
        return 0.0 if later else 1.0
    return 0.0


def tournament(args: tuple[str, int, int, int, float]) -> dict[str, Any]:
    kind, rep, sets, target, p_gain = args
    secret = hashlib.sha256(f"audit:{kind}:{rep}".encode()).digest()
    specs = schedule(3, players=2, rounds=sets, seatings="all", seed=f"a{rep}", secret=secret)
    audit = Audit(list(NAMES), bound=240, per_set=2)
    seen: set[tuple[int, int]] = set()
    first_flag = None
    done_sets: dict[tuple[int, int], int] = {}
    for spec in in_play_order(specs):
        later = spec.deals_key in seen
        seen.add(spec.deals_key)
        seats: list[ranking.Policy] = []
        for s, e in enumerate(spec.seats):
            seed = f"{rep}:{spec.id}:{s}"
            if NAMES[e] == "cheat":
                seats.append(Mixed(seed, cheat_p(kind, later, p_gain)))
            elif NAMES[e] == "greedy":
                seats.append(ranking.GreedyPolicy(Variant.CLASSIC))
            else:
                seats.append(ranking.RandomPolicy(seed))
        match, entries = play_hands(spec, seats, target=target)
        luck = [model_luck(entry, 2, Variant.CLASSIC) for entry in entries]
        audit.add(spec, match.hand_scores, luck)
        done_sets[spec.deals_key] = done_sets.get(spec.deals_key, 0) + 1
        if (done_sets[spec.deals_key] == 2 and first_flag is None and kind != "honest"
                and audit.result(alpha=0.05)["cheat"].flag):
            first_flag = spec.round
    result = audit.result(alpha=0.05)
    cheat_values = audit.values(0)
    return {"kind": kind, "rep": rep, "flags": {n: v.flag for n, v in result.items()},
            "why": {n: v.why for n, v in result.items()}, "first": first_flag,
            "effect": statistics.fmean(cheat_values) if cheat_values else None}


def real_run(kind: str, rep: int, args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    """One tournament through the CLI with the remembering bot."""
    memory = folder / f"memory-{kind}-{rep}"
    bot = f"python3 {ROOT}/bench/bots/remember.py {kind} {memory} {args.p_gain}"
    config = {"name": f"audit-{kind}-{rep}", "players": 2, "target": args.target,
              "seatings": "all", "seed": rep, "rounds": args.sets, "sandbox": "none",
              "entrants": [{"name": "cheat", "command": bot},
                           {"name": "greedy", "command": f"python3 {ROOT}/bots/greedy_bot.py"},
                           {"name": "random", "command": f"python3 {ROOT}/bots/random_bot.py"}],
              "limits": {"move_ms": 5000, "startup_ms": 20000}}
    path = folder / f"{kind}-{rep}.yaml"
    path.write_text(json.dumps(config))
    out = folder / f"out-{kind}-{rep}"
    done = subprocess.run([str(ROOT / ".venv" / "bin" / "ct-referee"), "tournament", str(path),
                           "--output", str(out), "--fresh"], capture_output=True, text=True,
                          check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{kind} {rep}: exit {done.returncode}: {done.stderr[-2000:]}")
    rows = {r["name"]: r for r in json.loads((out / "standings.json").read_text())["standings"]}
    return {"kind": kind, "rep": rep, "flags": {n: r["audit"]["flag"] for n, r in rows.items()},
            "why": {n: r["audit"].get("why") for n, r in rows.items()},
            "effect": rows["cheat"]["audit"]["later_minus_first"]}


def summary(label: str, runs: list[dict[str, Any]]) -> str:
    n = len(runs)
    flags = {name: sum(r["flags"][name] for r in runs) for name in NAMES}
    effects = [r["effect"] for r in runs if r["effect"] is not None]
    firsts = sorted(r["first"] for r in runs if r.get("first") is not None)
    first = (f"; first flagged after a median of {firsts[len(firsts) // 2]} sets a pair"
             if firsts else "")
    why: dict[str, int] = {}
    for r in runs:
        for name in NAMES:
            if r["flags"][name]:
                key = f"{name} {r['why'][name]}"
                why[key] = why.get(key, 0) + 1
    counts = ", ".join(f"{k}: {v}" for k, v in sorted(why.items()))
    return (f"audit {label}: {n} tournaments; flagged cheat {flags['cheat']}, greedy "
            f"{flags['greedy']}, random {flags['random']} ({counts or 'none'}); the cheat's "
            f"later-minus-first "
            f"{statistics.fmean(effects) if effects else float('nan'):+.1f} a hand{first}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", type=int, default=20, help="duplicate sets a pair")
    ap.add_argument("--target", type=int, default=1000)
    ap.add_argument("--reps", type=int, default=20, help="in-process tournaments per cheat")
    ap.add_argument("--honest", type=int, default=20, help="in-process honest tournaments")
    ap.add_argument("--p-gain", type=float, default=0.4,
                    help="the gaining cheat's chance of a greedy decision in later seatings")
    ap.add_argument("--real", type=int, default=0, help="tournaments of each cheat via the CLI")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    t0 = time.perf_counter()
    jobs = ([("gain", i, args.sets, args.target, args.p_gain) for i in range(args.reps)]
            + [("loss", i, args.sets, args.target, args.p_gain) for i in range(args.reps)]
            + [("honest", i, args.sets, args.target, args.p_gain) for i in range(args.honest)])
    with ProcessPoolExecutor(args.jobs) as pool:
        runs = list(pool.map(tournament, jobs))
    print(f"in-process: field of three, 2 players, {args.sets} sets a pair, target "
          f"{args.target} ({time.perf_counter() - t0:.0f} s)")
    for kind in ("gain", "loss", "honest"):
        print(summary(kind, [r for r in runs if r["kind"] == kind]))
    if args.real:
        with tempfile.TemporaryDirectory() as tmp:
            real = [real_run(kind, i, args, Path(tmp)) for kind in ("gain", "loss")
                    for i in range(args.real)]
        for kind in ("gain", "loss"):
            print(summary(f"{kind} (real bots, CLI)", [r for r in real if r["kind"] == kind]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
