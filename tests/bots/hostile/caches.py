"""A hostile bot with memory across the seatings of a duplicate set through the kernel's caches
that every sandbox shares, read back by timing (no call seccomp refuses):

- ``dentry``: a ``stat`` of a made-up name in a system folder leaves a negative dentry; a
  second ``stat`` of the name is then several times faster than the first;
- ``page``: a 1-byte read of a cold page of a large system file leaves it in the page cache; a
  second read is then tens of times faster.

For each hand it derives names and pages from the hand's number and layout (the same in every
seating of the set, other in every other set): 8 sentinels, and 5 per card. It times the
sentinels first (which marks them): if most answer fast, a seating before it left them, and it
times the card marks and writes ``KNEW <channel> hand <k>: <cards>`` to stderr (in a two-player
set, the cards its opponent holds now); else ``FRESH <channel> hand <k>`` and it marks its own
cards. It plays as ``instant_bot.py`` (copied beside it). Where nothing survives between the
seatings, every hand is ``FRESH``.
"""

import hashlib
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import instant_bot

RANKS, SUITS = "A23456789TJQK", "cdhs"
DECK = [r + s for s in SUITS for r in RANKS]
SENTINELS, COPIES = 8, 5
NEEDED = {"dentry": 3, "page": 4}  # of the COPIES marks of a card found: a page may have
# been cached before (a file some process uses), a stat may be slowed by a preemption
PAGE = os.sysconf("SC_PAGE_SIZE")
SLOT = 32  # pages between two marks: a random 1-byte read brings in no neighbour
HOT_PAGE_US = 20.0  # a cached page: 1-5 us; a cold one 40 us or more


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def timed(call, *args) -> float:  # type: ignore[no-untyped-def]
    began = time.perf_counter_ns()
    try:  # noqa: SIM105 (a with statement would add its own time to what is timed)
        call(*args)
    except OSError:
        pass
    return (time.perf_counter_ns() - began) / 1000


# -- the dentry channel --------------------------------------------------------------------------

FOLDER = next((d for d in ("/usr/share/doc", "/usr/lib", "/usr/share", "/usr")
               if os.path.isdir(d)), "/usr")


def dentry_threshold() -> float:
    """Between a first and a second look of made-up names, measured now."""
    names = [f"{FOLDER}/.cal-{os.getpid()}-{time.monotonic_ns()}-{i}" for i in range(24)]
    first = [timed(os.stat, n) for n in names]
    second = [timed(os.stat, n) for n in names]
    return (statistics.median(first) * statistics.median(second)) ** 0.5


def dentry_name(tag: str, what: str) -> str:
    return f"{FOLDER}/.ct-{tag}-{what}"


# -- the page channel ----------------------------------------------------------------------------


def large_files() -> list[str]:
    """Files of 4 MiB or more in the system's library folders (not below them: a walk of
    ``/usr`` after a drop takes seconds), in a fixed order."""
    found = []
    for folder in ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64",
                   "/usr/lib", "/usr/bin"):
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_file(follow_symlinks=False) and entry.stat().st_size >= 4 << 20:
                    found.append(entry.path)
            except OSError:
                pass
    return found


FILES = large_files()
SIZES = [os.path.getsize(p) // (SLOT * PAGE) - 2 for p in FILES]
TOTAL = sum(SIZES)
FDS: dict[int, int] = {}


def page_of(tag: str, what: str) -> tuple[int, int]:
    """The file (index) and offset of mark ``what`` of ``tag``: a slot of all the files'."""
    n = int.from_bytes(hashlib.sha256(f"{tag}/{what}".encode()).digest()[:8], "big") % TOTAL
    for i, size in enumerate(SIZES):
        if n < size:
            return i, (n + 1) * SLOT * PAGE + 3 * PAGE
        n -= size
    raise AssertionError


def read_page(tag: str, what: str) -> float:
    i, offset = page_of(tag, what)
    if i not in FDS:
        FDS[i] = os.open(FILES[i], os.O_RDONLY)
    return timed(os.pread, FDS[i], 1, offset)


# -- both ----------------------------------------------------------------------------------------


def channel(name: str, k: int, tag: str, cards: list[str]) -> None:
    if name == "dentry":
        limit = dentry_threshold()

        def hot(what: str) -> bool:
            return timed(os.stat, dentry_name(tag, what)) < limit
    else:
        if not TOTAL:
            log(f"NONE {name}: no large file")
            return

        def hot(what: str) -> bool:
            return read_page(tag, what) < HOT_PAGE_US

    seen = sum(hot(f"s{i}") for i in range(SENTINELS))
    if seen * 4 >= SENTINELS * 3:
        knew = [c for c in DECK if sum(hot(f"{c}{r}") for r in range(COPIES)) >= NEEDED[name]]
        log(f"KNEW {name} hand {k}: {' '.join(knew)}")
        return
    log(f"FRESH {name} hand {k} ({seen}/{SENTINELS} sentinels)")
    for c in cards:
        for r in range(COPIES):
            hot(f"{c}{r}")


def cards_after(words: list[str], key: str) -> list[str]:
    out = []
    for word in words[words.index(key) + 1:]:
        if len(word) != 2 or word[0] not in RANKS or word[1] not in SUITS:
            break
        out.append(word)
    return out


def main() -> None:
    log(f"files {len(FILES)} slots {TOTAL} folder {FOLDER}")
    for line in sys.stdin:
        words = line.split()
        if not words or words[0] == "quit":
            break
        if words[0] == "hand":
            k, layout = int(words[1]), sorted(cards_after(words, "layout"))
            tag = hashlib.sha256(f"{k}:{' '.join(layout)}".encode()).hexdigest()[:16]
            for name in ("dentry", "page"):
                channel(name, k, tag, cards_after(words, "cards"))
        reply = instant_bot.answer(line)
        if reply is not None:
            print(reply, flush=True)


main()
