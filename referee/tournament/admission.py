"""Who plays a tournament's matches: the pre-flight and the fault limit.

**The pre-flight**: each entrant started once, before any match.

An entrant that cannot start (no ``ready`` in time, a crash, a wrong first line) would lose
every one of its matches by a ``startup`` fault, each after waiting out ``startup_ms``.
:func:`preflight` starts every entrant once, at the same time, with the tournament's limits and
sandbox, and says which did not start, with the end of their stderr
(``preflight/<name>.stderr`` in the output folder). The tournament then leaves them out of
play (a :class:`Benched` seat, as below), unless its configuration says otherwise
(``preflight: keep``).

**The fault limit** (``max_faults: N``): :class:`FaultLimit` counts each entrant's faults as
matches end; after its N-th, the entrant is disqualified, and its matches that start from then
on seat a :class:`Benched` entrant in its place: no process, a ``startup`` fault in hand 1 whose
detail says why, and the referee's fallback plays the seat.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from referee.bots.bot import Answer, BotCrash, BotError, BotStartupError, CancelSignal
from referee.bots.limits import Limits
from referee.bots.process import Launcher, stderr_tail
from referee.game.faults import Reason
from referee.match.play import Entrant, Player
from referee.protocol.escape import escape_controls


class Preflight(StrEnum):
    """``preflight`` in a configuration: leave out an entrant that does not start (the default),
    keep it (it loses its matches by fault), or start no entrant before the matches (a
    configuration's unquoted ``off``, which YAML reads as false, is ``off`` too)."""

    LEAVE_OUT = "leave-out"
    KEEP = "keep"
    OFF = "off"


@dataclass(frozen=True)
class PreflightResult:
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
        text = (f"{self.name} did not start in the pre-flight: {self.fault}: "
                f"{escape_controls(self.detail)}")
        if self.log is not None:
            if self.tail:  # the bot's own bytes: escaped, never sent raw to a terminal
                text += f"\n  end of its stderr ({self.log}):"
                text += "".join(f"\n    {escape_controls(line)}" for line in self.tail[-lines:])
            else:
                text += f"\n  its stderr ({self.log}) is empty"
        return text


def preflight(entrants: Sequence[Entrant], *, limits: Limits, launcher: Launcher,
              logs_dir: Path, hidden: Sequence[Path] = (),
              stop: CancelSignal | None = None) -> list[PreflightResult]:
    """Starts each entrant once (all at once) with ``launcher``, waits for its ``ready``
    (within ``limits.startup_ms``), and stops it.

    :raises referee.bots.bot.BotCommandError: if a command cannot be started at all.
    """
    logs_dir.mkdir(parents=True, exist_ok=True)

    def fly(entrant: Entrant) -> PreflightResult:
        log = logs_dir / f"{entrant.name}.stderr"
        player = entrant.spawn(launcher=launcher, stderr_path=log, hidden=hidden)
        t0 = time.monotonic()
        try:
            ready = player.start(limits.startup_ms, stop)
        except BotError as err:
            ms = (time.monotonic() - t0) * 1000
            player.close()
            return PreflightResult(entrant.name, False, ms, fault=err.fault, detail=err.detail,
                                   log=log, tail=stderr_tail(log))
        except BaseException:
            player.close()
            raise
        ms = (time.monotonic() - t0) * 1000
        player.close()
        return PreflightResult(entrant.name, True, ms, ready=ready, log=log)

    if not entrants:
        return []
    with ThreadPoolExecutor(max_workers=min(8, len(entrants)),
                            thread_name_prefix="preflight") as pool:
        return list(pool.map(fly, entrants))




# -- the fault limit ---------------------------------------------------------------------------

BENCHED = ("disqualified: ", "left out: ")
"""How the detail of a benched seat's fault starts (such faults are not counted again)."""


class _Bench:
    """A player that never starts: the match records a ``startup`` fault and plays on."""

    def __init__(self, detail: str) -> None:
        self.detail = detail

    def start(self, startup_ms: float, stop: CancelSignal | None = None) -> str:
        raise BotStartupError(self.detail, code=Reason.DISQUALIFIED)

    def send(self, line: str) -> None:
        """Nothing is listening."""

    def request(self, line: str, timeout_ms: float) -> Answer:
        raise BotCrash("disqualified", code=Reason.DISQUALIFIED)

    def forfeit(self, fault: str) -> None:
        """Nothing is listening."""

    def close(self) -> None:
        """Nothing to stop."""


@dataclass(frozen=True)
class Benched(Entrant):
    """A disqualified or left-out entrant's seat: no process (see :class:`FaultLimit`)."""

    detail: str = ""
    """The detail of its ``startup`` fault (it starts with one of :data:`BENCHED`)."""

    def spawn(self, *, launcher: Launcher, stderr_path: Path | None,
              hidden: Sequence[Path]) -> Player:
        """A player that does not start."""
        return _Bench(self.detail)


class FaultLimit:
    """Each entrant's faults, counted as matches end; at ``limit`` (0: never) it is
    disqualified. Faults of a benched seat are not counted."""

    def __init__(self, names: Sequence[str], limit: int) -> None:
        self.names = list(names)
        self.limit = limit
        self.counts = [0] * len(self.names)
        self.disqualified: dict[int, str] = {}
        """Entrant index: why (``after 3 faults, the last in r1-g004-s02``)."""
        self.left_out: dict[int, str] = {}
        """Entrant index: why the pre-flight left it out (it gets no process either)."""

    def count(self, match_id: str, seats: Sequence[int], faults: Sequence[Any]) -> list[int]:
        """Counts a finished match's faults (``seats``: entrant index by seat); returns the
        entrants it disqualified."""
        newly = []
        for f in faults:
            seat = f.get("seat") if isinstance(f, dict) else None
            if not isinstance(seat, int) or not 0 <= seat < len(seats):
                continue
            if str(f.get("detail", "")).startswith(BENCHED):
                continue
            i = seats[seat]
            self.counts[i] += 1
            if self.limit and self.counts[i] >= self.limit and i not in self.disqualified:
                self.disqualified[i] = (f"after {self.counts[i]} faults (max_faults "
                                        f"{self.limit}), the last in {match_id}")
                newly.append(i)
        return newly

    def entrant(self, i: int, entrant: Entrant) -> Entrant:
        """Who sits for entrant ``i`` in a match starting now."""
        if i in self.left_out:
            detail = BENCHED[1] + self.left_out[i]
        elif i in self.disqualified:
            detail = BENCHED[0] + self.disqualified[i]
        else:
            return entrant
        return Benched(entrant.name, entrant.command, entrant.workdir, entrant.hidden,
                       detail=detail)


__all__ = ["BENCHED", "Benched", "FaultLimit", "Preflight", "PreflightResult", "preflight"]
