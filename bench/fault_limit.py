"""What counting ``max_faults`` in schedule order costs in throughput: a set that may follow a
disqualification waits for every match before it (the slots take no later match meanwhile).

Run:  .venv/bin/python bench/fault_limit.py                 # a second or two
      .venv/bin/python bench/fault_limit.py --entrants 30 --slots 1 2 8 32

A simulated dispatcher (no processes, simulated time: the figures do not depend on the
machine's load) plays a round robin of ``--entrants`` in 2 seats, all seatings, through the
real :class:`referee.tournament.admission.FaultLimit` and its job stream
(:meth:`~referee.tournament.admission.FaultLimit.plan`, as :func:`referee.tournament.run.run`
uses it; ``None``: wait), keeping ``slots`` matches running; a match
lasts an exponential time of mean 1 (benched or not), the same in every scenario. Entrant 0 is
the faulty one:

* **clean**: it never faults (and ``max_faults`` is 0: nothing is ever held);
* **unused**: ``max_faults 3``, and it never faults either (what the limit costs by itself);
* **near**: ``max_faults 3``, it faults in its first two matches, then never: it stays one fault
  from the limit to the end, the worst case (each of its sets waits);
* **faulty**: ``max_faults 3``, it faults in every match it plays: disqualified after its
  second set.

For each: the makespan relative to **clean** at the same ``slots`` (1.00: no cost), and the
share of slot time idle while matches were left to play. Printed as one line per scenario and
slot count.
"""

from __future__ import annotations

import argparse
import heapq
import random
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from referee.match.job import MatchSpec  # noqa: E402
from referee.tournament.admission import FaultLimit  # noqa: E402
from referee.tournament.audit import in_play_order  # noqa: E402
from referee.tournament.formats import RoundRobin, State, plan_round  # noqa: E402


def simulate(entrants: int, slots: int, scenario: str, seed: int) -> tuple[float, float]:
    """Makespan and idle share of one run."""
    limit = FaultLimit([f"e{i}" for i in range(entrants)], 0 if scenario == "clean" else 3)
    specs = list(plan_round(RoundRobin(entrants, 2), State(entrants, 1), players=2,
                            seatings="all", seed=seed, secret=bytes(32)))
    limit.add_round(specs)
    played_by_0 = 0

    def faults(spec: MatchSpec, benched: dict[int, str]) -> list[dict[str, Any]]:
        nonlocal played_by_0
        if 0 not in spec.seats:
            return []
        seat = spec.seats.index(0)
        if 0 in benched:
            return [{"seat": seat, "fault": "startup", "detail": benched[0]}]
        played_by_0 += 1
        if scenario == "faulty" or (scenario == "near" and played_by_0 <= 2):
            return [{"seat": seat, "fault": "crash", "detail": "x"}]
        return []

    todo = limit.plan(in_play_order(specs))
    running: list[tuple[float, int, MatchSpec, dict[int, str]]] = []
    now, idle, ended, order = 0.0, 0.0, False, 0

    def top_up() -> None:
        nonlocal ended, order
        while not ended and len(running) < slots:
            item = next(todo, "end")
            if item == "end":
                ended = True
            elif item is None:
                return
            else:
                assert isinstance(item, tuple)
                order += 1
                lasts = random.Random(f"{seed}:{item[0].id}").expovariate(1.0)
                heapq.heappush(running, (now + lasts, order, *item))

    top_up()
    while running:
        end, _, spec, benched = heapq.heappop(running)
        if not ended:
            idle += (slots - len(running) - 1) * (end - now)
        now = end
        top_up()  # as play_jobs: the next match starts before the one that ended is saved
        limit.finished(spec, faults(spec, benched))
        top_up()  # and again once it is (what waited on it)
    return now, idle / (now * slots)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--entrants", type=int, default=20)
    parser.add_argument("--slots", type=int, nargs="+", default=[1, 2, 8, 32])
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    print(f"bench/fault_limit.py --entrants {args.entrants} --slots "
          f"{' '.join(map(str, args.slots))} --reps {args.reps}: round robin, 2 seats, all "
          f"seatings; makespan relative to clean, mean over reps")
    for slots in args.slots:
        base = [simulate(args.entrants, slots, "clean", s)[0] for s in range(args.reps)]
        for scenario in ("clean", "unused", "near", "faulty"):
            runs = [simulate(args.entrants, slots, scenario, s) for s in range(args.reps)]
            ratio = sum(r[0] / b for r, b in zip(runs, base, strict=True)) / args.reps
            idle = sum(r[1] for r in runs) / args.reps
            print(f"slots {slots:3d}  {scenario:<7} makespan x{ratio:5.2f}  idle {idle:6.1%}")


if __name__ == "__main__":
    main()
