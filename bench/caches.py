"""What dropping the kernel's caches between the seatings of a set costs: a tournament (default
the demo, ``tournaments/demo.yaml``) played ``N`` times with the drops and ``N`` times
without, alternately, each in a fresh output folder; the wall time per match of each, and the
drops (how many, their own time). Run as root (without root nothing is dropped)::

    python3 bench/caches.py 3 [CONFIG.yaml] [--level 3]

``--level 2`` drops only dentries and inodes (not the page cache), to see what each costs.
``--evict`` does, in place of the drops, what a referee that is not root does: the pages of
every file the sandboxes show evicted (``posix_fadvise``; :class:`referee.bots.hygiene.Eviction`,
its walk of the folders made once per run), here as root (the same files, but for the few only
root may read).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # before bench/ (its referee.py)

from referee.bots import hygiene  # noqa: E402
from referee.runners import local  # noqa: E402
from referee.tournament.config import load_config  # noqa: E402
from referee.tournament.run import run  # noqa: E402


def play(config: Path, drop: bool, level: int, evict: bool = False
         ) -> tuple[float, int, list[float]]:
    """One run: seconds, matches, the seconds of each drop (or eviction)."""
    drops: list[float] = []
    real_can, real_drop = hygiene.can_drop, hygiene.drop_caches
    real_evict, real_call = hygiene.can_evict, hygiene.Eviction.__call__

    def evicted(self: hygiene.Eviction) -> None:
        began = time.monotonic()
        real_call(self)
        drops.append(time.monotonic() - began)

    def counted(lvl: int = level, path: Path = hygiene.DROP_CACHES) -> float:
        took = real_drop(level, path)
        drops.append(took)
        return took

    hygiene.can_drop = (lambda *_: real_can()) if drop and not evict else (lambda *_: False)
    hygiene.can_evict = (lambda: real_evict()) if drop and evict else (lambda: False)
    hygiene.drop_caches = counted
    hygiene.Eviction.__call__ = evicted  # type: ignore[method-assign]
    local.system_eviction.cache_clear()  # each run walks the folders again
    try:
        with tempfile.TemporaryDirectory(prefix="ct-bench-caches-", dir="/var/tmp") as out:
            began = time.monotonic()
            outcome = run(load_config(config, output=Path(out)), fresh=True)
            took = time.monotonic() - began
    finally:
        hygiene.can_drop, hygiene.drop_caches = real_can, real_drop
        hygiene.can_evict, hygiene.Eviction.__call__ = real_evict, real_call  # type: ignore
    return took, outcome.played, drops


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", type=int, nargs="?", default=2)
    parser.add_argument("config", type=Path, nargs="?",
                        default=ROOT / "tournaments" / "demo.yaml")
    parser.add_argument("--level", type=int, default=hygiene.EVERYTHING, choices=(1, 2, 3))
    parser.add_argument("--evict", action="store_true", help="evict pages as a referee that "
                        "is not root does, in place of the drops")
    args = parser.parse_args()
    if not hygiene.can_drop() and not args.evict:
        sys.exit("run it as root: only root may drop the kernel's caches")
    per: dict[bool, list[float]] = {True: [], False: []}
    for k in range(2 * args.runs):
        drop = k % 2 == 0
        took, played, each = play(args.config, drop, args.level, args.evict)
        drops, dropping = len(each), sum(each)
        per[drop].append(took / played)
        what = "evictions" if args.evict else "drops"
        print(f"{'with' if drop else 'without':>7} {what}: {played} matches in {took:.1f} s, "
              f"{took / played:.2f} s a match; {drops} {what}, {dropping:.2f} s in them"
              + (f" (the first {each[0]:.2f} s, the others {sum(each[1:]):.2f} s)"
                 if len(each) > 1 else ""),
              flush=True)
    for drop in (False, True):
        times = per[drop]
        print(f"{'with' if drop else 'without':>7}: median {statistics.median(times):.2f} s a "
              f"match (of {', '.join(f'{t:.2f}' for t in times)})")
    print(f"ratio {statistics.median(per[True]) / statistics.median(per[False]):.3f}")


if __name__ == "__main__":
    main()
