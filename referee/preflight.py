"""The pre-flight of a tournament: each entrant started once, before any match.

An entrant that cannot start (no ``ready`` in time, a crash, a wrong first line) would lose
every one of its matches by a ``startup`` fault, each after waiting out ``startup_ms``.
:func:`preflight` starts every entrant once, at the same time, with the tournament's limits and
sandbox, and says which did not start, with the end of their stderr
(``logs/preflight/<name>.stderr``). The tournament then leaves them out, unless its
configuration says otherwise (``preflight: keep``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from referee.bot import BotError, stderr_tail
from referee.match import Entrant, Limits

MODES = ("leave-out", "keep", "off")
"""``preflight`` in a configuration: leave out an entrant that does not start (the default),
keep it (it loses its matches by fault), or start no entrant before the matches."""


@dataclass(frozen=True)
class Flight:
    """How one entrant's pre-flight start went."""

    name: str
    ok: bool
    ms: float
    """From the start of the process to its ``ready`` (or to the failure)."""
    ready: str = ""
    """The name it gave in ``ready``."""
    fault: str = ""
    detail: str = ""
    log: Path | None = None
    """Its stderr file."""
    tail: list[str] = field(default_factory=list)
    """The last lines of its stderr."""

    def report(self, *, lines: int = 6) -> str:
        """What went wrong, then the end of the bot's stderr, one line each."""
        text = f"{self.name} did not start in the pre-flight: {self.fault}: {self.detail}"
        if self.log is not None:
            if self.tail:
                text += f"\n  end of its stderr ({self.log}):"
                text += "".join(f"\n    {line}" for line in self.tail[-lines:])
            else:
                text += f"\n  its stderr ({self.log}) is empty"
        return text


def preflight(entrants: Sequence[Entrant], *, limits: Limits, sandbox: str, logs_dir: Path,
              hide: Sequence[Path] = (), stop: threading.Event | None = None) -> list[Flight]:
    """Starts each entrant once (all at once), waits for its ``ready``, and stops it.

    :raises referee.bot.BotCommandError: if a command cannot be started at all.
    """
    logs_dir.mkdir(parents=True, exist_ok=True)

    def fly(entrant: Entrant) -> Flight:
        log = logs_dir / f"{entrant.name}.stderr"
        player = entrant.spawn(limits=limits, sandbox=sandbox, stderr_path=log, hide=hide)
        t0 = time.monotonic()
        try:
            ready = player.start(limits.startup_ms, stop)
        except BotError as err:
            ms = (time.monotonic() - t0) * 1000
            player.close()
            return Flight(entrant.name, False, ms, fault=err.fault, detail=err.detail, log=log,
                          tail=stderr_tail(log))
        except BaseException:
            player.close()
            raise
        ms = (time.monotonic() - t0) * 1000
        player.close()
        return Flight(entrant.name, True, ms, ready=ready, log=log)

    if not entrants:
        return []
    with ThreadPoolExecutor(max_workers=min(8, len(entrants)),
                            thread_name_prefix="preflight") as pool:
        return list(pool.map(fly, entrants))


__all__ = ["MODES", "Flight", "preflight"]
