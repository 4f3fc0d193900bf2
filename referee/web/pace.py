"""How often a live page is rewritten (a tournament's report, a league's page): at most every
:data:`PAGE_S`, and never more than a :data:`SHARE`-th of the time of the thread that pays for
it (:class:`Throttle`: the interval grows to :data:`SHARE` times what the last write cost).
"""

from __future__ import annotations

import time

__all__ = ["PAGE_S", "SHARE", "Throttle"]

PAGE_S = 3.0
"""The shortest time between two writes of a live page."""
SHARE = 20
"""A write that costs ``c`` seconds is followed by none for ``SHARE * c`` seconds at least."""


class Throttle:
    """When a page is due (:meth:`due`), given what its last write cost (:meth:`took`).

    >>> t = Throttle(every=3.0)
    >>> t.due(now=0.0), t.took(0.5, now=0.0), t.due(now=5.0), t.due(now=10.0)
    (True, None, False, True)
    """

    def __init__(self, every: float = PAGE_S) -> None:
        self.every = every
        self.next = float("-inf")  # the first write at once

    def due(self, now: float | None = None) -> bool:
        """Whether a write is due now."""
        return (time.monotonic() if now is None else now) >= self.next

    def took(self, cost: float, now: float | None = None) -> None:
        """A write that started at ``now`` cost ``cost`` seconds of the paying thread."""
        start = time.monotonic() if now is None else now
        self.next = start + max(self.every, SHARE * cost)
