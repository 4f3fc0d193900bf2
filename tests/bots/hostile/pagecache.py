"""A hostile bot with memory across the seatings of a duplicate set, through the page cache of
a read-only file in its own folder (``cache.bin``, 16 regions of 64 pages, one per hand).

In a hand it has not seen (the first-played seating of a set), it evicts the hand's region
(``posix_fadvise DONTNEED``), marks its layout (8 hash bits) and its own cards (one page per
card) by reading those pages, and plays weakly (``random_bot``). In a hand whose layout it finds
marked (a later seating: the same deals), it reads the marks back (an ``RWF_NOWAIT`` read says
whether a page is cached), writes ``KNEW hand <k>: <cards>`` to stderr (in a two-player set, the
cards the opponent holds now), clears the region and plays its best (``greedy_bot``). Where the
calls are refused or the file is a fresh copy, it never finds a mark: ``FRESH hand <k>``.

Run beside ``greedy_bot.py``, ``random_bot.py`` and ``cache.bin`` (16 x 64 pages).
"""

import contextlib
import os
import random
import sys

import greedy_bot
import random_bot

PAGE = os.sysconf("SC_PAGE_SIZE")
RANKS, SUITS = "A23456789TJQK", "cdhs"
DECK = [r + s for s in SUITS for r in RANKS]
REGION = 64
fd = os.open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "cache.bin"), os.O_RDONLY)
with contextlib.suppress(OSError):
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)  # no readahead: one page per read


def page(n: int) -> int:
    return n * PAGE


def cached(n: int) -> bool:
    try:
        os.preadv(fd, [bytearray(1)], page(n), os.RWF_NOWAIT)
        return True
    except OSError:
        return False  # not cached (EAGAIN), or refused (EPERM)


def touch(n: int) -> None:
    os.pread(fd, 1, page(n))


def evict(first: int, count: int) -> None:
    with contextlib.suppress(OSError):
        os.fsync(fd)  # dirty pages (a file just written) cannot be dropped
        os.posix_fadvise(fd, page(first), count * PAGE, os.POSIX_FADV_DONTNEED)


def layout_bits(layout: list[str]) -> list[int]:
    h = sum((DECK.index(c) + 1) * 131 ** i for i, c in enumerate(sorted(layout))) % 251 + 1
    return [i for i in range(8) if h >> i & 1]


def remember(k: int, cards: list[str], layout: list[str]) -> bool:
    """Whether hand ``k`` was seen (then the marks are read and cleared), else marks it."""
    base = (k - 1) % 16 * REGION
    bits = layout_bits(layout)
    seen = all(cached(base + 52 + i) == (i in bits) for i in range(8))
    if seen:
        knew = [c for i, c in enumerate(DECK) if cached(base + i)]
        print(f"KNEW hand {k}: {' '.join(knew)}", file=sys.stderr, flush=True)
        evict(base, REGION)
        return True
    print(f"FRESH hand {k}", file=sys.stderr, flush=True)
    evict(base, REGION)
    for c in cards:
        touch(base + DECK.index(c))
    for i in bits:
        touch(base + 52 + i)
    return False


def main() -> None:
    rng = random.Random(7)
    variant, knows = "classic", False
    for line in sys.stdin:
        words = line.split()
        if not words or words[0] == "quit":
            break
        if words[0] == "chinese-ten":
            print("ready pagecache", flush=True)
        elif words[0] == "match":
            variant = words[words.index("variant") + 1]
        elif words[0] == "hand":
            knows = remember(int(words[1]), greedy_bot.cards_after(words, "cards"),
                             greedy_bot.cards_after(words, "layout"))
        elif words[0] == "go":
            hand, table = greedy_bot.cards_after(words, "hand"), greedy_bot.cards_after(
                words, "table")
            card, target = (greedy_bot.choose_move(hand, table, variant) if knows else
                            random_bot.choose_move(hand, table, rng))
            print(card if target is None else f"{card} {target}", flush=True)
        elif words[0] == "pick":
            offered = greedy_bot.cards_after(words, "from")
            print(greedy_bot.choose_pick(offered, variant) if knows else offered[0], flush=True)


main()
