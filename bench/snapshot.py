"""What sealing an entrant costs: the snapshot into memory (once per tournament), for a small
bot (the example bots' folder), a 100 MB folder, folders of 4,000 and 10,000 empty files and a
128 MiB sparse file; then the start-up of a sandboxed bot run from its own folder (on the disk)
vs from its snapshot (in memory, as every tournament match runs it).

``python3 bench/snapshot.py [RUNS]``: ``RUNS`` (default 10) interleaved runs each; prints the
median (and minimum) of each figure in ms, then the ratio of sealed to unsealed start-up
(measured in this run). ``python3 bench/snapshot.py --start N``: what snapshotting every
folder when a tournament starts costs an entrant, for N folders of one 16 KiB file each (a
10,000-entrant ladder's), against the stat walk alone (issue 19's fingerprint, about).

Needs a working sandbox for the start-up figures (``ct-referee
sandbox``); the 100 MB folder is made in the default temporary folder (its file system decides
the copy speed: ext4 copies the bytes; btrfs or XFS could clone them).
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from referee.bots.policy import SandboxPolicy  # noqa: E402
from referee.bots.probing import capabilities  # noqa: E402
from referee.bots.process import Launcher, start_process  # noqa: E402
from referee.bots.snapshot import (  # noqa: E402
    Sealed,
    Store,
    remove_copy,
    sealed_binds,
    take_snapshot,
)

RUNS = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1] != "--start" else 10
BOT = ["python3", "instant_bot.py"]


def show(label: str, values: list[float]) -> float:
    med = statistics.median(values)
    print(f"{label:<46} median {med:8.1f} ms   min {min(values):8.1f} ms")
    return med


def blocks(folder: Path) -> int:
    """KiB the files under ``folder`` take on disk."""
    return sum(p.lstat().st_blocks for p in folder.rglob("*")) // 2


def start(folder: Path, sealed: Sealed | None) -> float:
    """Spawn to ``ready``: the bot's first line."""
    t0 = time.perf_counter()
    copy = sealed.snapshot.copy if sealed else None
    proc = start_process(BOT, workdir=folder, launcher=Launcher(SandboxPolicy()),
                         binds=sealed.binds if sealed else None,
                         sources=sealed.sources(copy) if sealed and copy else None)
    os.write(proc.stdin, b"chinese-ten 1\n")
    data = b""
    while b"\n" not in data:
        try:
            data += os.read(proc.stdout, 100)
        except BlockingIOError:
            time.sleep(0.0005)
    took = (time.perf_counter() - t0) * 1000
    proc.stop(0)
    return took


def start_cost(count: int) -> None:
    """Snapshots of ``count`` one-file folders against a stat walk of them, per entrant."""
    work = Path(tempfile.mkdtemp(prefix="ct-bench-start-"))
    data = os.urandom(16 << 10)
    try:
        for i in range(count):
            (work / f"e{i}").mkdir()
            (work / f"e{i}" / "bot").write_bytes(data)
        with Store(work) as store:
            t0 = time.perf_counter()
            for i in range(count):
                with os.scandir(work / f"e{i}") as it:
                    for entry in it:
                        entry.stat(follow_symlinks=False)
            walk = time.perf_counter() - t0
            t0 = time.perf_counter()
            for i in range(count):
                take_snapshot(work / f"e{i}", store, f"e{i}")
            took = time.perf_counter() - t0
        print(f"{count} folders of one 16 KiB file: snapshot {took / count * 1000:.2f} ms an "
              f"entrant ({took:.1f} s), stat walk {walk / count * 1000:.2f} ms an entrant")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    if sys.argv[1:2] == ["--start"]:
        start_cost(int(sys.argv[2]))
        return
    work = Path(tempfile.mkdtemp(prefix="ct-bench-snapshot-"))
    small = work / "small"
    shutil.copytree(ROOT / "bots", small)
    shutil.copy(ROOT / "bench" / "instant_bot.py", small)
    big = work / "big"
    shutil.copytree(small, big)
    for i in range(100):  # 100 files of 1 MB (a model, say)
        (big / f"weights-{i:03d}.bin").write_bytes(os.urandom(1 << 20))
    folders = [("small (example bots)", small), ("100 MB", big)]
    for count in (4000, 10_000):
        many = work / f"many{count}"
        shutil.copytree(small, many)
        for i in range(count):
            (many / f"{i:05d}").touch()
        folders.append((f"{count} empty files", many))
    sparse = work / "sparse"
    shutil.copytree(small, sparse)
    with open(sparse / "sparse.bin", "wb") as f:
        f.truncate(128 << 20)  # 128 MiB, no block written
    folders.append(("a 128 MiB sparse file", sparse))
    for path in (work, *(folder for _, folder in folders)):
        path.chmod(0o755)
    try:
        with Store() as store:
            for name, folder in folders:
                snaps = []
                for i in range(RUNS):
                    t0 = time.perf_counter()
                    snap = take_snapshot(folder, store, f"s{i}", cap_mb=0)
                    snaps.append((time.perf_counter() - t0) * 1000)
                    if i < RUNS - 1:
                        remove_copy(snap.copy)
                print(f"{name}: {snap.size / (1 << 20):.1f} MB in {snap.files} files, "
                      f"{snap.entries} entries, {blocks(snap.copy)} KiB in memory")
                show("  snapshot (once per tournament)", snaps)
                remove_copy(snap.copy)
            if not capabilities().works:
                print("no sandbox here: no start-up figures")
                return
            for name, folder in (("small (example bots)", small), ("100 MB", big)):
                snap = take_snapshot(folder, store, "st")
                sealed = Sealed(snap, sealed_binds(BOT, folder, folder.resolve()))
                plain, seal = [], []
                for _ in range(RUNS):
                    plain.append(start(folder, None))
                    seal.append(start(folder, sealed))
                print(f"sandboxed start-up to ready, {name}:")
                a = show("  from its own folder (unsealed)", plain)
                b = show("  from its snapshot in memory (sealed)", seal)
                print(f"  ratio sealed / unsealed: {b / a:.2f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
