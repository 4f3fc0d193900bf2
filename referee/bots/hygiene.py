"""Cache hygiene: what one seating's bots left in the kernel's caches is gone before the next
seating of its duplicate set starts.

Every sandbox on a machine shares one kernel, and the kernel's caches remember what its
processes looked at: a ``stat`` of a made-up name leaves a negative dentry, a read of a cold
page of a system file leaves it cached. A bot reads such marks back by timing a second look
(a cached lookup or page answers many times faster), so a bot in the first-played seating of a
set could leave its cards there for itself in a later one, which plays the same deals
(``docs/security.md``, *Between the seatings of a set*). Writing ``3`` to
``/proc/sys/vm/drop_caches`` frees every unused dentry and inode (``2``) and every clean,
unmapped page of the page cache (``1``): the marks of processes that have ended are gone
(a page some live process maps stays, whoever read it first). Only root may write it.

:class:`Hygiene` batches the drops: a drop serves every seating whose predecessors in its set
ended before it, so a later seating starts after at most one, and a run of them after one.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["DROP_CACHES", "EVERYTHING", "Hygiene", "can_drop", "drop_caches"]

DROP_CACHES = Path("/proc/sys/vm/drop_caches")
"""The kernel's switch: ``1`` frees the clean page cache, ``2`` the unused dentries and inodes
(slab objects), ``3`` both."""

EVERYTHING = 3
"""What a drop frees: dentries, inodes and the clean page cache."""


def can_drop(path: Path = DROP_CACHES) -> bool:
    """Whether this process may drop the kernel's caches: root, with ``/proc/sys`` writable (a
    container may mount it read-only)."""
    return os.geteuid() == 0 and os.access(path, os.W_OK)


def drop_caches(level: int = EVERYTHING, path: Path = DROP_CACHES) -> float:
    """Drops the kernel's caches (``level`` as :data:`DROP_CACHES` reads it): no ``sync``
    first, since no bot can write a file another bot reads (a dirty page stays; it is no
    mark). The seconds it took.

    :raises OSError: if the kernel refuses (not root, ``/proc/sys`` read-only)."""
    began = time.monotonic()
    with open(path, "w") as f:
        f.write(f"{level}\n")
    return time.monotonic() - began


@dataclass
class Hygiene:
    """When to drop the caches: :meth:`ended` as each match ends (its bots' processes gone),
    :meth:`before` as each match is about to start; ``before`` drops them (through ``drop``)
    when a match of the same set ended since the last drop. ``drop`` is ``None`` where the
    caches cannot be dropped (a referee that is not root, a remote runner): nothing is done,
    and :attr:`active` says so.

    >>> h = Hygiene(drop=lambda: None)
    >>> h.before("a"), h.ended("a"), h.before("b"), h.before("a"), h.before("a")
    (False, None, False, True, False)
    >>> h.ended("a"), h.ended("b"), h.before("b"), h.before("a"), h.drops
    (None, None, True, False, 2)
    """

    drop: Callable[[], object] | None
    drops: int = 0
    """How many drops it made."""
    seconds: float = 0.0
    """The time they took, all together."""
    _ended: set[object] = field(default_factory=set)
    """The sets (their deals keys) with a seating ended since the last drop."""
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def active(self) -> bool:
        """Whether it drops the caches between the seatings of a set."""
        return self.drop is not None

    def ended(self, key: object) -> None:
        """A match of the set ``key`` ended, its bots gone."""
        if self.drop is not None:
            with self._lock:
                self._ended.add(key)

    def before(self, key: object) -> bool:
        """A match of the set ``key`` is about to start: drops the caches if a match of that
        set ended since the last drop (one drop serves every set that waited on it). Whether
        it dropped them."""
        if self.drop is None:
            return False
        with self._lock:
            if key not in self._ended:
                return False
            began = time.monotonic()
            self.drop()
            self.seconds += time.monotonic() - began
            self.drops += 1
            self._ended.clear()
            return True
