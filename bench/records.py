"""Records on disk: a tournament's game records as plain JSON (before 2026-12-02), gzip
(what ct-referee writes now, ``games/<id>.json.gz``) and, where the ``zstandard`` package is
installed, zstd; then one match read out of 100,000 record files in one folder, each way.

    python bench/records.py results/demo/games          # sizes and codecs, then 100,000 files
    python bench/records.py results/demo/games --many 0 # sizes and codecs only

Prints, per codec and level: the mean bytes a match, the ratio, the time to compress one and to
decompress one (the JSON parse, the same for all, printed once); then for plain and gzip files:
the bytes a match and what the file system allocates (4 KiB blocks), the median time to find
and read one match of ``--many`` (``record_file`` + ``read_record``, in this process) and of
``ct-referee replay`` of one (a new process each: what a user waits). The ``--many`` files are
hard links to the folder's records (the directory holds that many names; the page cache holds
the few distinct files, as it would the one file read).
"""

from __future__ import annotations

import argparse
import gzip
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from referee.records.record import (  # noqa: E402
    load_json,
    read_record,
    record_file,
    record_id,
    write_record,
)


def per(fn: Callable[[bytes], object], datas: list[bytes], reps: int = 3) -> float:
    """The best of ``reps`` mean times of ``fn`` over ``datas``, in ms."""
    best = float("inf")
    for _ in range(reps):
        start = time.perf_counter()
        for d in datas:
            fn(d)
        best = min(best, time.perf_counter() - start)
    return best / len(datas) * 1e3


def codecs() -> dict[str, tuple[Callable[[bytes], bytes], Callable[[bytes], bytes]]]:
    found: dict[str, tuple[Callable[[bytes], bytes], Callable[[bytes], bytes]]] = {
        f"gzip-{level}": ((lambda d, lv=level: gzip.compress(d, lv, mtime=0)), gzip.decompress)
        for level in (6, 9)}
    try:
        import zstandard  # type: ignore[import-not-found]  # not a dependency: measured if there
    except ImportError:
        print("(zstandard not installed: zstd not measured)")
        return found
    for level in (3, 10, 19):
        found[f"zstd-{level}"] = (zstandard.ZstdCompressor(level=level).compress,
                                  zstandard.ZstdDecompressor().decompress)
    return found


def sizes_and_codecs(datas: list[bytes]) -> None:
    n, raw = len(datas), sum(map(len, datas))
    print(f"{n} records, {raw / n / 1000:.1f} KB a match as JSON")
    parse = per(load_json, datas)
    print(f"parse (bounded JSON): {parse:.2f} ms a record")
    for name, (compress, decompress) in codecs().items():
        write = per(compress, datas, 1)
        packed = [compress(d) for d in datas]
        size = sum(map(len, packed)) / n
        print(f"{name}: {size / 1000:.2f} KB a match ({raw / n / size:.1f}x), compress "
              f"{write:.2f} ms, decompress {per(decompress, packed):.3f} ms")


def many(sources: list[Path], count: int, base: Path) -> None:
    rnd = random.Random(1)
    picks = [rnd.randrange(count) for _ in range(2000)]
    cli = ROOT / ".venv" / "bin" / "ct-referee"
    for suffix in (".json", ".json.gz"):
        games = base / suffix.strip(".") / "games"
        games.mkdir(parents=True)
        distinct = []
        for i, path in enumerate(sources):
            q = base / suffix.strip(".") / f"u{i}{suffix}"
            write_record(read_record(path), q)
            distinct.append(q)
        for i in range(count):
            os.link(distinct[i % len(distinct)], games / f"m{i:06d}{suffix}")
        stats = [q.stat() for q in distinct]
        size = sum(s.st_size for s in stats) / len(stats)
        blocks = sum(s.st_blocks * 512 for s in stats) / len(stats)
        times = []
        for i in picks:
            start = time.perf_counter()
            read_record(record_file(games, f"m{i:06d}"))
            times.append(time.perf_counter() - start)
        told = []
        for i in picks[:15]:
            start = time.perf_counter()
            subprocess.run([str(cli), "replay", str(games / f"m{i:06d}{suffix}")],
                           capture_output=True, check=True)
            told.append(time.perf_counter() - start)
        print(f"{suffix}: {size / 1000:.2f} KB a match ({blocks / 1024:.0f} KiB allocated); one "
              f"of {count:,} found and read: median {statistics.median(times) * 1e3:.2f} ms; "
              f"`ct-referee replay` of one: median {statistics.median(told):.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("games", type=Path, help="a tournament's games/ folder")
    parser.add_argument("--many", type=int, default=100_000)
    args = parser.parse_args()
    sources = sorted(p for p in args.games.iterdir() if record_id(p.name) is not None)
    datas = [dumps_of(p) for p in sources]
    sizes_and_codecs(datas)
    if args.many:
        with tempfile.TemporaryDirectory(prefix="ct-records-") as tmp:
            many(sources, args.many, Path(tmp))


def dumps_of(path: Path) -> bytes:
    """A record's JSON text as ct-referee writes it, from a plain or a compressed file."""
    from referee.records.record import dumps

    return dumps(read_record(path)).encode()


if __name__ == "__main__":
    main()
