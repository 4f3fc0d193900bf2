"""What still crosses a drop of the kernel's caches (``referee/bots/hygiene.py``) from one
seating of a set to the next: each channel written, the caches dropped as the referee drops
them, then read back; its accuracy with the drop and, the control, without. Run as root (outside
a sandbox: the channels do not depend on it, the timing is the same inside)::

    python3 bench/cache_residue.py [--marks 400]

- ``page (guest)``: 1-byte reads of cold pages of large system files, read back by timing with a
  threshold of 20 us (a page cached in this kernel answers in 1-5 us);
- ``page (below)``: the same pages read back with the best threshold between "read before"
  and "never read", in the range a page this kernel does not hold takes (on a virtual machine,
  the host's page cache of the disk image remembers what was read; a disk's own cache too);
- ``meminfo``: 2 bits a write as 0-3 x 16 MiB of cold file pages read, read back from
  ``Cached:`` in ``/proc/meminfo`` (host-wide, every sandbox reads it);
- ``dentry``: negative dentries, read back by timing a second ``stat`` against a threshold
  measured at once.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # before bench/ (its referee.py)

from referee.bots import hygiene  # noqa: E402

PAGE = os.sysconf("SC_PAGE_SIZE")
SLOT = 32 * PAGE


def slots() -> list[tuple[int, int]]:
    """Every 32nd page of the files of 4 MiB or more under ``/usr/lib`` (fd, offset)."""
    found = []
    for folder, _, files in os.walk("/usr/lib"):
        for name in files:
            path = os.path.join(folder, name)
            if os.path.isfile(path) and not os.path.islink(path) and \
                    os.path.getsize(path) >= 4 << 20:
                fd = os.open(path, os.O_RDONLY)
                found += [(fd, k * SLOT + 3 * PAGE)
                          for k in range(1, os.path.getsize(path) // SLOT - 1)]
    return found


def timed_read(slot: tuple[int, int]) -> float:
    began = time.perf_counter_ns()
    os.pread(slot[0], 1, slot[1])
    return (time.perf_counter_ns() - began) / 1000


def best_threshold(marked: list[float], unmarked: list[float]) -> tuple[float, float]:
    """The threshold (us) that best tells marked (fast) from unmarked, and its accuracy."""
    best = (0.0, 0.5)
    for t in sorted(marked + unmarked):
        right = sum(x <= t for x in marked) + sum(x > t for x in unmarked)
        acc = right / (len(marked) + len(unmarked))
        if acc > best[1]:
            best = (t, acc)
    return best


def pages(pool: list[tuple[int, int]], n: int, drop: bool) -> tuple[float, float, float]:
    """Guest accuracy (20 us), the best threshold below it, its accuracy."""
    chosen = random.sample(pool, 2 * n)
    for slot in chosen:
        pool.remove(slot)
    marked, unmarked = chosen[:n], chosen[n:]
    for slot in marked:
        os.pread(slot[0], 1, slot[1])
    if drop:
        hygiene.drop_caches()
    order = [(s, True) for s in marked] + [(s, False) for s in unmarked]
    random.shuffle(order)
    times = {True: [], False: []}  # type: dict[bool, list[float]]
    for slot, was in order:
        times[was].append(timed_read(slot))
    guest = (sum(t < 20 for t in times[True]) + sum(t >= 20 for t in times[False])) / (2 * n)
    slow_marked = [t for t in times[True] if t >= 20] or [0.0]
    slow_unmarked = [t for t in times[False] if t >= 20] or [0.0]
    threshold, below = best_threshold(times[True], times[False])
    print(f"    marked: median {statistics.median(times[True]):.1f} us ({len(slow_marked)} "
          f"slow, median {statistics.median(slow_marked):.1f}); never read: median "
          f"{statistics.median(times[False]):.1f} us ({len(slow_unmarked)} slow, median "
          f"{statistics.median(slow_unmarked):.1f})")
    return guest, threshold, below


def cached_kib() -> int:
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("Cached:"):
                return int(line.split()[1])
    return 0


def meminfo(pool: list[tuple[int, int]], drop: bool, trials: int = 8) -> float:
    """Accuracy of 2-bit values sent through ``Cached:``."""
    right = 0
    for _ in range(trials):
        value = random.randrange(4)
        if drop:
            hygiene.drop_caches()  # the state before the writer
        before = cached_kib()
        chosen = pool[:value * 128]  # 16 MiB: 4096 pages, 128 slots of 32
        del pool[:len(chosen)]
        for fd, offset in chosen:
            os.pread(fd, SLOT, offset - 3 * PAGE)  # the slot's 32 pages
        if drop:
            hygiene.drop_caches()
        after = cached_kib()
        guess = round((after - before) / 16384)
        right += guess == value
    return right / trials


def dentries(n: int, drop: bool) -> float:
    tag = random.getrandbits(48)
    names = [f"/usr/share/doc/.residue-{tag}-{i}" for i in range(2 * n)]
    marked, unmarked = names[:n], names[n:]
    for name in marked:
        with_stat(name)
    if drop:
        hygiene.drop_caches()
    cal = [f"/usr/share/doc/.cal-{tag}-{i}" for i in range(24)]
    first = [with_stat(c) for c in cal]
    second = [with_stat(c) for c in cal]
    limit = (statistics.median(first) * statistics.median(second)) ** 0.5
    right = sum(with_stat(m) < limit for m in marked) + sum(with_stat(u) >= limit
                                                              for u in unmarked)
    return right / (2 * n)


def with_stat(name: str) -> float:
    began = time.perf_counter_ns()
    try:  # noqa: SIM105 (a with statement would add its own time to what is timed)
        os.stat(name)
    except OSError:
        pass
    return (time.perf_counter_ns() - began) / 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--marks", type=int, default=400)
    args = parser.parse_args()
    if not hygiene.can_drop():
        sys.exit("run it as root: only root may drop the kernel's caches")
    pool = slots()
    random.shuffle(pool)
    print(f"{len(pool)} page slots; 50% is chance for a bit")
    for drop in (False, True):
        said = "with the drop" if drop else "without (control)"
        print(f"{said}:")
        guest, threshold, below = pages(pool, args.marks, drop)
        print(f"  page (guest, < 20 us): {guest:.1%}; page (best threshold, {threshold:.0f} us): "
              f"{below:.1%}")
        print(f"  dentry: {dentries(args.marks, drop):.1%}")
        print(f"  meminfo Cached, 2 bits a write: {meminfo(pool, drop):.0%} of values exact")


if __name__ == "__main__":
    main()
