"""The league's goals, simulated and with real bots.

Run:  .venv/bin/python bench/league.py                   # everything (~15 min on 2 shared cores)
      .venv/bin/python bench/league.py --parts placement,memory  # the simulations alone
      .venv/bin/python bench/league.py --matches 100000  # a smaller memory run
      .venv/bin/python bench/league.py --parts poll      # the watcher's poll, 1,000 folders

Four figures:

1. **placement, simulated**: a field of ``--field`` entrants of known skill (TrueSkill's own
   model: a set is won by the higher skill plus noise of ``beta``), warmed up by the league's
   matchmaking (50 sets each); then a newcomer of random skill joins. Two arms from the same
   warmed field: the league (placement, then the matchmaker, the field playing on) and a round
   robin (the newcomer meets the others in the schedule's order, a set each). Counted: the
   newcomer's matches until its rating first puts it within one place of where its true skill
   belongs among the field's ratings (the median over ``--trials``), and how many places off
   it is after its first 2, 6, 12, 24 and 58 matches (the mean).
2. **memory**: ``--entrants`` versions (1,000) and ``--matches`` simulated matches (1,000,000:
   two seatings a set) through the league's own bookkeeping (:class:`~referee.league.season.
   League`: every match's journal line parsed and booked, every set rated, the matchmaker
   choosing every set, every set fed to the pairs' tests and the fair-play audit); the
   process's resident memory at each tenth and its peak, and the tests kept.
3. **a new folder's first match, real bots**: a league of two submissions (random, greedy;
   ``concurrency 2``, the default sandbox) playing, then three new folders, one after the other;
   for each, the seconds from its folder written to its first set handed to the runner (the
   league's ``first`` event), and what the league says took it from its watcher's first sight.
4. **placement, real bots**: a field of four (random, greedy, mc at 4 and at 40 playouts)
   placed, then a newcomer (mc at 12 playouts); its matches until it holds its final place for
   good (by its rating history beside the others' at the same sets), beside one round of a
   round robin (``2 (n - 1)`` matches, the fewest in which it meets every opponent once).

5. **poll**: the watcher's poll (:meth:`~referee.league.submissions.Admissions.poll`) over
   ``--folders`` (1,000) settled submission folders of 8 entries each (a bot, a
   ``command.txt``, a subfolder of three files), ``settle_s`` an hour so nothing is admitted:
   the median and the least of 20 polls after a first one. The figure before the incremental
   look: this script at commit ``cbce47c`` (``git archive cbce47c | tar -x -C /tmp/before``,
   then ``.venv/bin/python /tmp/before/bench/league.py --parts poll``: it imports the
   ``referee`` beside it). On 2026-12-02 (2 shared cores, load average 2.5), three runs each,
   alternating: 22-31 ms a poll, against 76-128 ms before (docs/league.md, *Figures*).

Measured on 2026-12-02 on the 2-core development machine shared with five other sessions (load
average 13-15), each part alone (``--parts``): docs/league.md, *Figures*, lists them with their
settings (first match 4.8-8.7 s; placement median 6 matches against 12 in a round robin's
order; 1,000,000 simulated matches over 1,000 versions at a peak RSS of 51 MB, 150 MB with the
pairs' verdicts and the audit: 65,644 pairs' tests kept).
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import NormalDist
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # before bench/ (its referee.py)

from referee.league.config import LeagueConfig  # noqa: E402
from referee.league.matchmaker import Matchmaker  # noqa: E402
from referee.league.season import League  # noqa: E402
from referee.league.table import Table  # noqa: E402
from referee.match.job import DealSecret  # noqa: E402
from referee.tournament.output import JournalLine  # noqa: E402

BETA = 25.0 / 6


def settled_after(ranks: list[int], final: int, within: int = 1) -> int:
    """How many of ``ranks``'s steps before it stays within ``within`` places of ``final``."""
    for t in range(len(ranks)):
        if all(abs(r - final) <= within for r in ranks[t:]):
            return t
    return len(ranks)


def rank_of(mu: float, others: list[float]) -> int:
    return 1 + sum(o > mu for o in others)


def win(rng: random.Random, a: float, b: float) -> bool:
    return rng.random() < NormalDist().cdf((a - b) / (2 ** 0.5 * BETA))


def play_set(table: Table, mm: Matchmaker | None, skill: dict[str, float], a: str, b: str,
             rng: random.Random) -> None:
    winner = a if win(rng, skill[a], skill[b]) else b
    table.rate_set({a: float(winner == a), b: float(winner == b)}, faulted=())
    if mm is not None:
        for n in (a, b):
            r = table.rows[n].rating
            mm.update(n, r.mu, r.sigma)


def placement_trial(field: int, seed: int, sets: int) -> tuple[list[int], list[int]]:
    """The newcomer's distance in places from where its true skill puts it among the field's
    ratings, after each of its sets: (league, round robin)."""
    rng = random.Random(seed)
    names = [f"e{i}" for i in range(field)]
    skill = {n: rng.gauss(25, 8) for n in names}
    table, mm = Table(), Matchmaker(players=2, placement=3)
    for n in names:
        table.join(n, author=n, version=1)
        mm.add(n, 25.0, 25.0 / 3)
    for _ in range(field * 25):  # warm-up: the field placed and played (50 sets each)
        chosen = mm.next_set()
        assert chosen is not None
        play_set(table, mm, skill, chosen[0], chosen[1], rng)
    skill["new"] = rng.gauss(25, 8)
    state = {n: table.rows[n].rating for n in names}
    true = rank_of(skill["new"], [state[n].mu for n in names])
    results = []
    for arm in ("league", "round robin"):
        t = Table()
        for n in names:
            t.join(n, author=n, version=1)
            t.rows[n].rating = state[n]
        t.join("new", author="new", version=1)
        errors: list[int] = []
        arm_rng = random.Random(seed * 7 + 1)

        def place(t: Table = t) -> int:
            return rank_of(t.rows["new"].rating.mu, [t.rows[n].rating.mu for n in names])

        if arm == "league":
            m = Matchmaker(players=2, placement=3)
            for n in names:
                m.add(n, state[n].mu, state[n].sigma, placement=0)
            m.add("new", 25.0, 25.0 / 3)
            while len(errors) < sets:
                chosen = m.next_set()
                assert chosen is not None
                play_set(t, m, skill, chosen[0], chosen[1], arm_rng)
                if "new" in chosen:
                    errors.append(abs(place() - true))
        else:
            order = names[:]
            arm_rng.shuffle(order)
            for k in range(sets):
                play_set(t, None, skill, "new", order[k % len(order)], arm_rng)
                errors.append(abs(place() - true))
        results.append(errors)
    return results[0], results[1]


def placement(field: int, trials: int) -> None:
    sets = field - 1  # one round of a round robin for the newcomer
    league, rr = [], []
    for seed in range(trials):
        a, b = placement_trial(field, seed, sets)
        league.append(a)
        rr.append(b)

    def first(errors: list[int]) -> int:
        return 2 * next((k + 1 for k, e in enumerate(errors) if e <= 1), len(errors) + 1)

    def median(runs: list[list[int]]) -> float:
        return statistics.median(first(e) for e in runs)

    print(f"placement, simulated ({field} entrants, {trials} trials, TrueSkill's model): "
          f"matches until the newcomer is first within one place of where its skill puts it: "
          f"league median {median(league):.0f}, round robin order median {median(rr):.0f} "
          f"(one round robin round: {2 * sets} matches)")
    cols = [k for k in (1, 3, 6, 12, sets) if k <= sets]
    print("  mean places off after its first N matches:  N = " +
          "  ".join(f"{2 * k:>4}" for k in cols))
    for label, runs in (("league", league), ("round robin order", rr)):
        print(f"  {label:<42}" + "  ".join(
            f"{statistics.mean(e[k - 1] for e in runs):4.1f}" for k in cols))


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def memory(entrants: int, matches: int) -> None:
    """The league's bookkeeping over ``matches`` simulated matches."""
    rng = random.Random(1)
    with tempfile.TemporaryDirectory() as tmp:
        config = LeagueConfig(path=Path(tmp) / "l.yaml", name="mem", output=Path(tmp))
        league = League(config, DealSecret(bytes(16)), runner=None,  # type: ignore[arg-type]
                        stop=None, mode=None)  # type: ignore[arg-type]
        skill = {}
        for i in range(entrants):
            name = f"s{i}"
            league.book.join(name, author=name, version=1)
            skill[name] = rng.gauss(25, 8)
            league.mm.add(name, 25.0, 25.0 / 3)
            league.versions.playable[name] = None  # type: ignore[assignment]
        start, t0 = rss_mb(), time.perf_counter()
        marks = []
        step = max(1, matches // 10)
        done = 0
        while done < matches:
            specs = league.planner.next_set()
            for spec in specs:
                seats = [league.book.names[i] for i in spec.seats]
                a_wins = win(rng, skill[seats[0]], skill[seats[1]])
                hands = [[rng.randint(0, 20), rng.randint(0, 20)] for _ in range(6)]
                hands[-1] = [60, 0] if a_wins else [0, 60]
                totals = [sum(h[0] for h in hands), sum(h[1] for h in hands)]
                ranks = [1, 2] if totals[0] >= totals[1] else [2, 1]
                line = {"id": spec.id, "players": seats, "totals": totals, "ranks": ranks,
                        "faults": [], "hands": len(hands), "scores": hands,
                        "record": f"games/{spec.id}.json.gz"}
                league.planner.rated(league.book.book(JournalLine.parse(
                    json.loads(json.dumps(line)))))
                done += 1
                if done % step == 0:
                    marks.append(rss_mb())
        seconds = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"memory: {entrants:,} entrants, {done:,} simulated matches ({league.book.table.sets:,} "
          f"sets rated) in {seconds:.0f} s; resident MB at the start {start:.0f}, at each "
          f"tenth {' '.join(f'{m:.0f}' for m in marks)}; peak RSS {peak:.0f} MB (goal <= 500); "
          f"{len(league.book.verdicts.pairs):,} pairs' tests and "
          f"{len(league.book.verdicts.audits):,} "
          f"audits kept")


# -- real bots -------------------------------------------------------------------------------

def _start(folder: Path, yaml_text: str) -> subprocess.Popen[bytes]:
    (folder / "league.yaml").write_text(yaml_text)
    log = open(folder / "league.log", "wb")  # noqa: SIM115 - the process holds it
    return subprocess.Popen([sys.executable, "-c", "from referee.cli import main; main()",
                             "league", str(folder / "league.yaml")], stdout=log,
                            stderr=subprocess.STDOUT, start_new_session=True)


def _events(out: Path) -> list[dict[str, Any]]:
    path = out / "league.jsonl"
    if not path.exists():
        return []
    return [json.loads(x) for x in path.read_text().splitlines() if x.endswith("}")]


def _wait(what: Any, proc: subprocess.Popen[bytes], limit: float = 600) -> None:
    deadline = time.monotonic() + limit
    while not what():
        if proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit("the league ended or took too long; see its league.log")
        time.sleep(0.05)


def _submit(subs: Path, author: str, bot: str, *args: str) -> None:
    """A submission folder, written aside and renamed into place (it appears whole); mc's
    copy takes the rules engine along (it imports it from the folder above its own)."""
    folder = subs / author
    tmp = subs / f".{author}"
    tmp.mkdir()
    where = "bot.py"
    if bot == "mc_bot.py":
        (tmp / "bots").mkdir()
        where = "bots/bot.py"
        (tmp / "referee").mkdir()
        shutil.copy(ROOT / "referee" / "__init__.py", tmp / "referee")
        shutil.copytree(ROOT / "referee" / "game", tmp / "referee" / "game",
                        ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "bots" / bot, tmp / where)
    if args or where != "bot.py":
        (tmp / "command.txt").write_text(" ".join(["python3", where, *args]) + "\n")
    tmp.rename(folder)


def first_match(tmp: Path) -> None:
    subs = tmp / "subs"
    subs.mkdir()
    _submit(subs, "alice", "random_bot.py")
    _submit(subs, "bob", "greedy_bot.py")
    proc = _start(tmp, "name: first\nsubmissions: subs\ntarget: 100\nconcurrency: 2\n"
                  "output: out\nplacement: 2\npoll_s: 0.5\nsettle_s: 1.0\n")
    out = tmp / "out"
    try:
        _wait(lambda: (out / "results.jsonl").exists() and
              (out / "results.jsonl").read_bytes().count(b"\n") >= 6, proc)
        figures = []
        for author in ("carol", "dave", "erin"):
            t0 = time.time()
            _submit(subs, author, "greedy_bot.py")
            _wait(lambda a=author: any(e["event"] == "first" and e["name"] == a
                                       for e in _events(out)), proc)
            first = next(e for e in _events(out) if e["event"] == "first" and e["name"] == author)
            figures.append((first["at"] - t0, first["seconds"]))
    finally:
        proc.send_signal(2)
        proc.wait(timeout=120)
    print("new folder to its first match, real bots (poll_s 0.5, settle_s 1, default sandbox, "
          "pre-flight and check): " + ", ".join(f"{a:.1f} s ({b:.1f} s after the watcher saw "
                                                 f"it)" for a, b in figures) + " (goal <= 10 s)")


def real_placement(tmp: Path, matches: int) -> None:
    subs = tmp / "subs"
    subs.mkdir()
    for author, bot, args in (("random", "random_bot.py", ()), ("greedy", "greedy_bot.py", ()),
                              ("mc4", "mc_bot.py", ("--playouts", "4")),
                              ("mc40", "mc_bot.py", ("--playouts", "40"))):
        _submit(subs, author, bot, *args)
    proc = _start(tmp, f"name: placement\nsubmissions: subs\ntarget: 300\nconcurrency: 2\n"
                  f"output: out\nplacement: 3\npoll_s: 0.5\nsettle_s: 0.5\n"
                  f"max_matches: {matches}\n")
    out = tmp / "out"
    try:
        _wait(lambda: (out / "results.jsonl").exists() and
              (out / "results.jsonl").read_bytes().count(b"\n") >= matches // 3, proc)
        _submit(subs, "new", "mc_bot.py", "--playouts", "12")
        proc.wait(timeout=3600)
    finally:
        if proc.poll() is None:
            proc.send_signal(2)
            proc.wait(timeout=120)
    data = json.loads((out / "report" / "league.json").read_text())
    rows = {r["name"]: r for r in data["rows"]}
    if "new" not in rows:
        print("placement, real bots: the newcomer was not admitted (see league.log)")
        return
    field = {n: r["history"] for n, r in rows.items() if n != "new" and r["active"]}

    def mu_at(history: list[list[float]], when: float) -> float:
        before = [h[1] for h in history if h[0] <= when]
        return before[-1] if before else 25.0

    ranks = [rank_of(mu, [mu_at(h, when) for h in field.values()])
             for when, mu, _ in rows["new"]["history"]]
    final = rank_of(rows["new"]["mu"], [r["mu"] for n, r in rows.items()
                                          if n != "new" and r["active"]])
    sets = settled_after(ranks, final, within=0) + 1  # a small field: its very place
    n = len(field) + 1
    print(f"placement, real bots ({n} entrants, target 300, {data['matches']} matches in all, "
          f"the newcomer {rows['new']['matches']}): at its final place ({final} of {n}) for "
          f"good after {2 * sets} of its matches; one round robin round is {2 * (n - 1)} "
          f"matches for it")


def poll(folders: int, rounds: int) -> None:
    """Seconds a poll of the watcher takes over ``folders`` settled submission folders (each a
    bot, a ``command.txt``, a subfolder of three files: eight entries), nothing admitted
    (``settle_s`` an hour): the median of ``rounds`` polls after a first one."""
    from referee.bots.limits import SandboxMode
    from referee.league.config import load_league
    from referee.league.submissions import Admissions

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        subs = root / "subs"
        for i in range(folders):
            sub = subs / f"author{i:04d}" / "lib"
            sub.mkdir(parents=True)
            (sub.parent / "bot.py").write_text(f"# bot {i}\n" * 40)
            (sub.parent / "command.txt").write_text("python3 bot.py\n")
            for k in range(3):
                (sub / f"m{k}.py").write_text(f"x = {k}\n")
        (root / "league.yaml").write_text("name: bench\nsubmissions: subs\nsandbox: none\n"
                                          "settle_s: 3600\n")
        watcher = Admissions(load_league(root / "league.yaml"), store=None,  # type: ignore[arg-type]
                             mode=SandboxMode.NONE, logs=root / "logs", known={}, versions={})
        time.sleep(2.5)  # every entry older than the watcher's doubt about fresh timestamps
        watcher.poll()  # nothing settles: no admission starts, no thread
        times = []
        for _ in range(rounds):
            start = time.perf_counter()
            watcher.poll()
            times.append(time.perf_counter() - start)
    print(f"poll: {folders} settled folders (8 entries each): "
          f"{statistics.median(times) * 1000:.1f} ms a poll (median of {rounds}; min "
          f"{min(times) * 1000:.1f} ms)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--field", type=int, default=30)
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--entrants", type=int, default=1000)
    parser.add_argument("--matches", type=int, default=1_000_000)
    parser.add_argument("--real-matches", type=int, default=160)
    parser.add_argument("--folders", type=int, default=1000, help="the poll part's folders")
    parser.add_argument("--parts", default="placement,first,real,memory,poll",
                        help="which figures, of placement,first,real,memory,poll (default: "
                             "all)")
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    if "placement" in parts:
        placement(args.field, args.trials)
    if "first" in parts:
        with tempfile.TemporaryDirectory() as tmp:
            first_match(Path(tmp))
    if "real" in parts:
        with tempfile.TemporaryDirectory() as tmp:
            real_placement(Path(tmp), args.real_matches)
    if "memory" in parts:
        memory(args.entrants, args.matches)
    if "poll" in parts:
        poll(args.folders, 20)


if __name__ == "__main__":
    main()
