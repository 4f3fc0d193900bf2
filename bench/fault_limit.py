"""What counting ``max_faults`` in schedule order costs in throughput: a set that may follow a
disqualification waits for every match before it (the slots take no later match meanwhile).

Run:  .venv/bin/python bench/fault_limit.py                 # a second or two
      .venv/bin/python bench/fault_limit.py --entrants 30 --slots 1 2 8 32

A simulated dispatcher (no processes, simulated time: the makespans do not depend on the
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

For each: the makespan relative to **clean** at the same ``slots`` (1.00: no cost), the
share of slot time idle while matches were left to play, and the limit's own cost to the
coordinator: this thread's CPU time in the plan's answers and in ``finished``, a match (the
clock's reading included, about 1 µs a call), before (``fault_sim.Rescan``: every held set
decided again each time the plan is asked, the cost growing with the sets held) and now (only
the held sets whose answer may have changed), in the same run, on the same plans (checked: the
answers are the same). Printed as one line per scenario and slot count.

The dispatcher is tests/fault_sim.py's ``dispatch``, the one tests/test_fault_limit.py uses.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from fault_sim import Rescan, Run, dispatch  # noqa: E402
from referee.match.job import MatchSpec  # noqa: E402
from referee.tournament.admission import FaultLimit  # noqa: E402
from referee.tournament.audit import in_play_order  # noqa: E402
from referee.tournament.formats import RoundRobin, State, plan_round  # noqa: E402


def simulate(entrants: int, slots: int, scenario: str, seed: int,
             kind: type[FaultLimit] = FaultLimit) -> Run:
    """One run (``kind``: the plan to time)."""
    limit = kind([f"e{i}" for i in range(entrants)], 0 if scenario == "clean" else 3)
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

    def lasts(spec: MatchSpec) -> float:
        return random.Random(f"{seed}:{spec.id}").expovariate(1.0)

    return dispatch(limit, limit.plan(in_play_order(specs)), slots, lasts, faults)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--entrants", type=int, default=20)
    parser.add_argument("--slots", type=int, nargs="+", default=[1, 2, 8, 32])
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    print(f"bench/fault_limit.py --entrants {args.entrants} --slots "
          f"{' '.join(map(str, args.slots))} --reps {args.reps}: round robin, 2 seats, all "
          f"seatings; makespan relative to clean, mean over reps; the limit's CPU a match "
          f"(this thread's, in plan and finished), before (every held set decided again) and "
          f"now, summed over reps")
    for slots in args.slots:
        base = [simulate(args.entrants, slots, "clean", s).makespan for s in range(args.reps)]
        for scenario in ("clean", "unused", "near", "faulty"):
            runs = [simulate(args.entrants, slots, scenario, s) for s in range(args.reps)]
            before = [simulate(args.entrants, slots, scenario, s, Rescan)
                      for s in range(args.reps)]
            assert [r.log for r in runs] == [r.log for r in before], "the plans differ"
            ratio = sum(r.makespan / b for r, b in zip(runs, base, strict=True)) / args.reps
            idle = sum(r.idle for r in runs) / args.reps
            matches = sum(r.matches for r in runs)
            cpu = [sum(r.cpu_ns for r in rs) / matches / 1000 for rs in (before, runs)]
            print(f"slots {slots:3d}  {scenario:<7} makespan x{ratio:5.2f}  idle {idle:6.1%}  "
                  f"CPU a match {cpu[0]:6.1f} -> {cpu[1]:5.1f} us (x{cpu[1] / cpu[0]:4.2f})")


if __name__ == "__main__":
    main()
