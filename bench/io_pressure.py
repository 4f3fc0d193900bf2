"""The host's disk read latency while a sandboxed bot reads the disk as hard as it can.

A probe on the host reads 4 KiB pages at random offsets of a file of its own with
``O_DIRECT`` (one at a time, the disk itself each time) and reports the median and 90th
percentile latency, first alone, then beside a hostile bot of 16 threads reading random 4 KiB
pages of a cold 1 GiB file in its own folder:

- ``direct, no io limit``: the bot with ``O_DIRECT`` (the filter off, as before it refused
  it) and no io controller limit;
- ``buffered, no io limit``: buffered reads of the cold file (what a bot can still do), no
  limit;
- ``buffered, io limit``: the same under the io controller's per-bot limits
  (:data:`referee.bots.cgroups.IO_READ_BPS`, :data:`~referee.bots.cgroups.IO_READ_IOPS`);
- ``default``: the default sandbox (``O_DIRECT`` asked for, refused: the bot falls back to
  buffered reads) with its limits.

The cold file is dropped from the page cache before each phase. Run as root (the io
controller, and dropping the cache), with the sandbox working: ``python3 bench/io_pressure.py
[SECONDS]`` (default 10 a phase).
"""

from __future__ import annotations

import dataclasses
import mmap
import os
import random
import select
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import referee.bots.cgroups as cgroups  # noqa: E402
from referee.bots.policy import SandboxPolicy  # noqa: E402
from referee.bots.process import Launcher, start_process  # noqa: E402

SECONDS = float(sys.argv[1]) if len(sys.argv) > 1 else 10.0
THREADS = 16
SIZE = 1 << 30
HOG = '''
import mmap, os, random, sys, threading, time
mode, threads, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
flags = os.O_RDONLY
if mode == "direct":
    try:
        os.close(os.open("cold.bin", os.O_RDONLY | os.O_DIRECT))
        flags |= os.O_DIRECT
    except OSError as e:
        mode = f"buffered (O_DIRECT refused: errno {e.errno})"
size = os.path.getsize("cold.bin")
done = [0] * threads
def run(i):
    fd = os.open("cold.bin", flags)
    buf = mmap.mmap(-1, 4096)
    rnd = random.Random(i)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        os.preadv(fd, [buf], rnd.randrange(size // 4096) * 4096)
        done[i] += 1
print("ready", mode, flush=True)
ts = [threading.Thread(target=run, args=(i,)) for i in range(threads)]
for t in ts: t.start()
for t in ts: t.join()
print("reads", sum(done), flush=True)
'''


def fill(path: Path, size: int) -> None:
    block = os.urandom(1 << 20)
    with open(path, "wb") as f:
        for _ in range(size >> 20):
            f.write(block)
        f.flush()
        os.fsync(f.fileno())


def drop(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def probe(path: Path, seconds: float) -> list[float]:
    """Latencies (ms) of one-at-a-time O_DIRECT 4 KiB reads of ``path`` for ``seconds``."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    buf = mmap.mmap(-1, 4096)
    pages = os.path.getsize(path) // 4096
    rnd = random.Random(7)
    out: list[float] = []
    end = time.monotonic() + seconds
    try:
        while time.monotonic() < end:
            t0 = time.perf_counter()
            os.preadv(fd, [buf], rnd.randrange(pages) * 4096)
            out.append((time.perf_counter() - t0) * 1000)
            time.sleep(0.002)
    finally:
        os.close(fd)
    return out


def lines(fd: int, count: int, timeout: float) -> list[str]:
    data = b""
    end = time.monotonic() + timeout
    while data.count(b"\n") < count and time.monotonic() < end:
        if select.select([fd], [], [], 0.1)[0]:
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            data += chunk
    return data.decode().splitlines()


def phase(name: str, folder: Path, host: Path, policy: SandboxPolicy | None, mode: str,
          limited: bool) -> None:
    saved = cgroups.IO_READ_BPS, cgroups.IO_READ_IOPS
    if not limited:
        cgroups.IO_READ_BPS = cgroups.IO_READ_IOPS = 0
    try:
        drop(folder / "cold.bin")
        drop(host)
        if policy is None:
            lat = probe(host, SECONDS)
            told = ""
        else:
            proc = start_process([sys.executable, "hog.py", mode, str(THREADS), str(SECONDS)],
                                 workdir=folder, launcher=Launcher(policy))
            try:
                first = lines(proc.stdout, 1, 30)
                got: list[float] = []
                t = threading.Thread(target=lambda: got.extend(probe(host, SECONDS - 1)))
                t.start()
                t.join()
                rest = lines(proc.stdout, 1, SECONDS + 30)
            finally:
                proc.stop(0.5)
            lat = got
            reads = next((w.split()[1] for w in rest if w.startswith("reads")), "?")
            told = f"; bot: {' '.join(first[:1])}, {reads} reads " \
                   f"({float(reads) / SECONDS:.0f}/s)" if reads != "?" else f"; bot: {first}"
    finally:
        cgroups.IO_READ_BPS, cgroups.IO_READ_IOPS = saved
    q = statistics.quantiles(lat, n=10)
    print(f"{name:24} host 4 KiB read: median {statistics.median(lat):.2f} ms, "
          f"p90 {q[8]:.2f} ms ({len(lat)} reads){told}", flush=True)


def main() -> None:
    folder = Path(tempfile.mkdtemp(prefix="ct-io-", dir="/var/tmp"))
    host = Path(tempfile.mkdtemp(prefix="ct-io-host-", dir="/var/tmp")) / "host.bin"
    try:
        folder.chmod(0o755)
        (folder / "hog.py").write_text(HOG)
        fill(folder / "cold.bin", SIZE)
        for p in folder.iterdir():
            p.chmod(0o644)
        fill(host, 256 << 20)
        print(f"io limits per bot: {cgroups.IO_READ_BPS >> 20} MiB/s, "
              f"{cgroups.IO_READ_IOPS} IOPS; {THREADS} threads, {SECONDS:.0f} s a phase")
        plain = SandboxPolicy()
        unfiltered = dataclasses.replace(plain, seccomp=False)
        phase("idle", folder, host, None, "", True)
        phase("direct, no io limit", folder, host, unfiltered, "direct", False)
        phase("buffered, no io limit", folder, host, plain, "buffered", False)
        phase("buffered, io limit", folder, host, plain, "buffered", True)
        phase("default", folder, host, plain, "direct", True)
        phase("idle", folder, host, None, "", True)
    finally:
        for p in (folder / "cold.bin", folder / "hog.py", host):
            p.unlink(missing_ok=True)
        folder.rmdir()
        host.parent.rmdir()


if __name__ == "__main__":
    main()
