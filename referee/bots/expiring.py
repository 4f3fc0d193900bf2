"""A cache whose answers expire: for lookups the host rarely changes (the password database,
``PATH``, where system folders lead) that a tournament asked once per entrant, 10,000 times,
before its first match.

>>> @expiring(60.0)
... def double(x: int) -> int:
...     return 2 * x
>>> double(2), double(2)
(4, 4)
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable, Hashable
from typing import Generic, ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")

MAX_ENTRIES = 4096
"""Past this many answers the cache starts again (it holds lookups, not data)."""


class Expiring(Generic[P, R]):
    """``function`` with each answer (by its arguments, which must be hashable, or by what
    ``key`` makes of them) kept for ``seconds``; :meth:`cache_clear` forgets them all."""

    def __init__(self, function: Callable[P, R], seconds: float,
                 key: Callable[..., Hashable] | None = None) -> None:
        self.function, self.seconds, self.key = function, seconds, key
        self._answers: dict[Hashable, tuple[float, R]] = {}
        self._lock = threading.Lock()
        functools.update_wrapper(self, function)

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        key = self.key(*args, **kwargs) if self.key is not None else \
            (args, tuple(sorted(kwargs.items())))
        now = time.monotonic()
        with self._lock:
            kept = self._answers.get(key)
        if kept is not None and now - kept[0] < self.seconds:
            return kept[1]
        answer = self.function(*args, **kwargs)
        with self._lock:
            if len(self._answers) >= MAX_ENTRIES:
                self._answers.clear()
            self._answers[key] = (now, answer)
        return answer

    def cache_clear(self) -> None:
        with self._lock:
            self._answers.clear()


def expiring(seconds: float, key: Callable[..., Hashable] | None = None
             ) -> Callable[[Callable[P, R]], Expiring[P, R]]:
    """Decorates a function with an :class:`Expiring` cache of ``seconds`` (by ``key``)."""
    def wrap(function: Callable[P, R]) -> Expiring[P, R]:
        return Expiring(function, seconds, key)
    return wrap
