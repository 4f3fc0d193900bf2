"""Who plays a tournament's matches: the pre-flight and the fault limit.

**The pre-flight**: each entrant started once, before any match.

An entrant that cannot start (no ``ready`` in time, a crash, a wrong first line) would lose
every one of its matches by a ``startup`` fault, each after waiting out ``startup_ms``.
:func:`preflight` starts every entrant once, at the same time, with the tournament's limits and
sandbox, and says which did not start, with the end of their stderr
(``preflight/<name>.stderr`` in the output folder). The tournament then leaves them out of
play (a :class:`Benched` seat, as below), unless its configuration says otherwise
(``preflight: keep``).

**The fault limit** (``max_faults: N``): :class:`FaultLimit` counts each entrant's faults in
schedule order; once N are counted, the entrant is disqualified, and in every duplicate set
after the one holding its N-th fault a :class:`Benched` entrant sits in its place: no process, a
``startup`` fault in hand 1 whose detail says why, and the referee's fallback plays the seat.
Which matches it is benched in depends on the schedule alone, never on the order matches finish.
"""

from __future__ import annotations

import dataclasses
import heapq
import queue
import threading
import time
import typing
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from referee.bots.bot import Answer, BotCrash, BotError, BotStartupError, CancelSignal
from referee.bots.limits import Limits, SandboxMode
from referee.bots.process import BotCommandError, Launcher, stderr_tail
from referee.game.faults import Fault, Reason
from referee.match.job import MatchSpec
from referee.match.play import Entrant, Player
from referee.protocol.escape import escape_controls
from referee.tournament.audit import cut_sets
from referee.tournament.dispatch import TournamentError
from referee.tournament.formats import Prefix

if TYPE_CHECKING:
    from referee.tournament.config import Config


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
    code: str = ""
    """Why, within the fault (:class:`~referee.game.faults.Reason`)."""
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
              stop: CancelSignal | None = None,
              done: Callable[[int, PreflightResult], None] | None = None
              ) -> list[PreflightResult]:
    """Starts each entrant once (up to 8 at once) with ``launcher``, waits for its ``ready``
    (within ``limits.startup_ms``), and stops it; one that ran out of time beside others is
    started once more, alone among the pre-flight's starts (:data:`SLOW`). ``done`` is called
    (on a pre-flight thread) with each entrant's index and its final result as soon as it is
    known: at once for most, after its second start for one tried again.

    :raises referee.bots.bot.BotCommandError: if a command cannot be started at all.
    """
    logs_dir.mkdir(parents=True, exist_ok=True)
    told = done or (lambda i, result: None)

    def fly(entrant: Entrant) -> PreflightResult:
        log = logs_dir / f"{entrant.name}.stderr"
        if stop is not None and stop.is_set():  # the run is over: no bot starts any more
            return PreflightResult(entrant.name, False, 0.0, fault=Fault.STARTUP,
                                   code=Reason.STOPPED, detail="stopped before it started")
        player = entrant.spawn(launcher=launcher, stderr_path=log, hidden=hidden)
        t0 = time.monotonic()
        try:
            ready = player.start(limits.startup_ms, stop)
        except BotError as err:
            ms = (time.monotonic() - t0) * 1000
            player.close()
            return PreflightResult(entrant.name, False, ms, fault=err.fault, code=err.code,
                                   detail=err.detail, log=log, tail=stderr_tail(log))
        except BaseException:
            player.close()
            raise
        ms = (time.monotonic() - t0) * 1000
        player.close()
        return PreflightResult(entrant.name, True, ms, ready=ready, log=log)

    alone = len(entrants) <= 1

    def first(i: int) -> PreflightResult:
        result = fly(entrants[i])
        if alone or result.code not in SLOW:
            told(i, result)
        return result

    if not entrants:
        return []
    with ThreadPoolExecutor(max_workers=min(8, len(entrants)),
                            thread_name_prefix="preflight") as pool:
        results = list(pool.map(first, range(len(entrants))))
    if alone:
        return results
    # beside others, one of which may have burned the CPU it needed
    until = time.monotonic() + RETRIES_FOR * limits.startup_ms / 1000
    for i, result in enumerate(results):
        if result.code not in SLOW:
            continue
        if stop is not None and stop.is_set():
            pass
        elif time.monotonic() < until:
            results[i] = fly(entrants[i])  # once more, alone
        else:  # many silent entrants: their retries cost no more than 8 start-ups
            results[i] = dataclasses.replace(
                result, detail=f"{result.detail} (not tried again alone: the pre-flight's "
                               f"retries took {RETRIES_FOR} start-up limits already)")
        told(i, results[i])
    return results


class Checks:
    """A pre-flight under way beside play (:func:`preflight` on a thread of its own): each
    entrant's result as it comes (:meth:`put`, from any thread), taken on the coordinator's
    thread (:meth:`take`), so that the matches of entrants already checked start while the
    rest are (:meth:`wait_for`)."""

    def __init__(self, wanted: Iterable[int]) -> None:
        self.pending = set(wanted)
        """Entrants whose result has not been taken yet."""
        self.total = len(self.pending)
        self.results: dict[int, PreflightResult] = {}
        self._queue: queue.SimpleQueue[tuple[int, PreflightResult] | BaseException] = \
            queue.SimpleQueue()
        self.t0 = time.monotonic()
        self.worker: threading.Thread | None = None
        """The thread that runs the pre-flight, if any (joined once play is over)."""

    @property
    def done(self) -> int:
        """Entrants checked (their results taken)."""
        return self.total - len(self.pending)

    def put(self, i: int, result: PreflightResult) -> None:
        """Entrant ``i`` is checked (any thread)."""
        self._queue.put((i, result))

    def fail(self, error: BaseException) -> None:
        """The pre-flight itself failed (any thread): :meth:`take` raises ``error``."""
        self._queue.put(error)

    def take(self, timeout: float | None = 0) -> list[tuple[int, PreflightResult]]:
        """The results come since the last call (waiting up to ``timeout`` seconds for the
        first; ``0``: none, ``None``: as long as it takes).

        :raises BaseException: what the pre-flight raised (:meth:`fail`).
        """
        got: list[tuple[int, PreflightResult]] = []
        block = timeout != 0
        while self.pending:
            try:
                item = self._queue.get(block=block, timeout=timeout if block else None)
            except queue.Empty:
                break
            block = False  # the first is in: the rest only if there already
            if isinstance(item, BaseException):
                raise item
            i, result = item
            if i in self.pending:
                self.pending.discard(i)
                self.results[i] = result
                got.append(item)
        return got

    def left(self, done: int) -> float | None:
        """Seconds the rest should take, at the pace so far (``None``: not known yet)."""
        if not done:
            return None
        return (time.monotonic() - self.t0) / done * (self.total - done)


RETRIES_FOR = 8
"""The pre-flight's retries (:data:`SLOW`) take at most this many ``startup_ms``: a field of
silent entrants does not hold the first match back by one limit each."""


SLOW = (Reason.NO_ANSWER, Reason.PARTIAL_LINE)
"""Why a pre-flight start that ran out of time is tried once more, alone, before its entrant
is left out: started beside up to 7 others, at the full CPU weight every bot has until its
``ready``, a bot that burns CPU and holds its own ``ready`` back could push a slow starter (a
JVM, a bot loading tables) past ``startup_ms``, and out of the whole tournament."""




# -- the fault limit ---------------------------------------------------------------------------

LOOKAHEAD = 256
"""Sets :meth:`FaultLimit.plan` holds back at most while later ones go ahead."""


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


class _Held:
    """The sets one :meth:`FaultLimit.plan` holds back, and which of them to decide again.

    A held set was undecided when last decided: some entrant of it, not benched there, had a
    load (:meth:`FaultLimit._load`) and matches in the held sets before (ahead) that together
    reached the limit, and not every match before the set was counted. That answer stands
    until the counted prefix reaches the set, or such an entrant is disqualified or left out,
    or its load drops (a match of its ends): a load that grows (a match admitted) or a held set
    before admitted (its matches move from ahead to running) changes no ``None``. So a match that
    ends (:meth:`FaultLimit.finished` lists its seats in :attr:`touched`) marks, for each of
    its entrants, the held sets of that entrant where its load and ahead are below the limit
    (the first few of them: at most ``limit``); a disqualified or left-out entrant marks all of
    its held sets, once; the counted prefix marks the sets it reaches.

    The plan goes through the held sets in order (a pass), deciding the marked ones: a set
    marked while the pass is past it waits for the next pass, as when every held set was
    decided again in each pass (the same answers, in the same order)."""

    def __init__(self, limit: FaultLimit) -> None:
        self.limit = limit
        self.sets: dict[int, list[MatchSpec]] = {}
        """The sets held, by key (the order they were taken in: the plan's)."""
        self.touched: set[int] = set()
        """Entrants whose load may have dropped, or disqualified, since the last look."""
        self._index: list[dict[int, int]] = [{} for _ in limit.names]  # key: matches, in order
        self._firsts: list[tuple[int, int]] = []  # heap: a set's first schedule index, key
        self._settled: set[int] = set()  # disqualified or left out: every held set marked
        self._key = 0
        self._cursor = -1  # the pass is past the sets up to this key
        self._now: list[int] = []  # heap: marked, after the cursor
        self._queued: set[int] = set()  # what _now holds
        self._later: set[int] = set()  # marked, for the next pass

    def add(self, members: list[MatchSpec]) -> None:
        key, self._key = self._key, self._key + 1
        self.sets[key] = members
        for i in members[0].seats:
            self._index[i][key] = len(members)
        heapq.heappush(self._firsts, (members[0].index - members[0].seating + 1, key))

    def remove(self, key: int) -> list[MatchSpec]:
        members = self.sets.pop(key)
        for i in members[0].seats:
            self._index[i].pop(key, None)
        return members

    def ahead(self, key: int | None) -> Callable[[int], int]:
        """An entrant's matches in the held sets before ``key`` (``None``: all), counted as far
        as what its load leaves to the limit (enough to compare)."""
        def count(i: int) -> int:
            need = self.limit.limit - self.limit._load(i)
            n = 0
            for k, matches in self._index[i].items():
                if n >= need or (key is not None and k >= key):
                    break
                n += matches
            return n
        return count

    def new_pass(self) -> None:
        self._cursor = -1
        if self._later:
            self._queued |= self._later
            self._now = sorted(self._queued)
            self._later = set()

    def next_dirty(self) -> int | None:
        """The next held set of this pass to decide again (``None``: the pass is over)."""
        self._look()
        while self._now:
            key = heapq.heappop(self._now)
            self._queued.discard(key)
            if key in self.sets:
                self._cursor = key
                return key
        return None

    def _mark(self, key: int) -> None:
        if key <= self._cursor:
            self._later.add(key)
        elif key not in self._queued:
            self._queued.add(key)
            heapq.heappush(self._now, key)

    def _look(self) -> None:
        """Marks what changed since the last look."""
        if not self.sets:  # nothing to mark: a set taken now is decided as it is
            self.touched.clear()
            return
        fl = self.limit
        while self._firsts and ((after := fl._prefix.next) is None
                                or self._firsts[0][0] <= after.index):
            key = heapq.heappop(self._firsts)[1]
            if key in self.sets:
                self._mark(key)
        touched, self.touched = self.touched, set()
        for i in touched:
            if i in self._settled:
                continue
            if i in fl.left_out or i in fl.disqualified:
                self._settled.add(i)
                for key in self._index[i]:
                    self._mark(key)
                continue
            need, n = fl.limit - fl._load(i), 0
            for key, matches in self._index[i].items():
                if n >= need:
                    break
                self._mark(key)
                n += matches


class FaultLimit:
    """Each entrant's faults, counted in schedule order; at ``limit`` (0: never) it is
    disqualified, from the next duplicate set on.

    Matches finish in any order (concurrency, runner, resume), so :meth:`finished` only stores a
    match's faults and counts the finished prefix of the schedule (at most one fault an entrant
    a match: a faulted seat is played by the fallback to the end). Whether an entrant sits in a
    set (:meth:`plan`) depends on its faults in the sets before it in the schedule and nothing
    else: the same at any concurrency, on any runner, resumed or not. It is known at once when
    no entrant of the set can have reached the limit before it (its faults counted, finished,
    running and still to play before the set are fewer than the limit), and otherwise once
    every match before the set is counted; such a set is held back meanwhile, and later ones go
    ahead. Faults of a benched seat are not counted."""

    def __init__(self, names: Sequence[str], limit: int) -> None:
        self.names = list(names)
        self.limit = limit
        self.counts = [0] * len(self.names)
        """Faults counted so far (the finished prefix of the schedule)."""
        self.disqualified: dict[int, str] = {}
        """Entrant index: why (``after 3 faults (max_faults 3), the last in r1-g004-s02``)."""
        self.left_out: dict[int, str] = {}
        """Entrant index: why it was left out (it gets no process either): :meth:`leave_out`."""
        self._at: dict[int, int] = {}  # disqualified: the schedule index of its last fault
        self._early = [0] * len(self.names)  # faults of those, an entrant's
        self._open = [0] * len(self.names)  # matches admitted, not finished yet, an entrant's
        self._admitted: set[str] = set()
        self._prefix: Prefix[Sequence[Any]] = Prefix()  # faults, counted in schedule order
        self._watchers: list[_Held] = []  # the plans asked (their held sets)

    def leave_out(self, entrant: int, why: str) -> None:
        """``entrant`` sits in no later set (the pre-flight, or its folder changed mid-run):
        the plans asked decide its held sets again."""
        self.left_out[entrant] = why
        for watcher in self._watchers:
            watcher.touched.add(entrant)

    def add_round(self, specs: Iterable[MatchSpec]) -> None:
        """The matches of the next round, in schedule order (the rounds before may still be in
        play), before any of them is planned (:meth:`plan`) or finished."""
        self._prefix.add_round(specs)

    def finished(self, spec: MatchSpec, faults: Sequence[Any]) -> list[int]:
        """A match of a round added ended (played now, or kept from an earlier run), with its
        ``faults``; counts every match of the finished prefix of the schedule and returns the
        entrants that disqualified (in the order they were)."""
        seen = self._faulted(spec, faults)
        for i in seen:
            self._early[i] += 1
        if spec.id in self._admitted:
            self._admitted.discard(spec.id)
            for i in spec.seats:
                self._open[i] -= 1
        newly = []
        for done, counted in self._prefix.finish(spec.id, faults):
            for i in self._faulted(done, counted):
                self._early[i] -= 1
                self.counts[i] += 1
                if self.limit and self.counts[i] >= self.limit and i not in self.disqualified:
                    self.disqualified[i] = (f"after {self.counts[i]} faults (max_faults "
                                            f"{self.limit}), the last in {done.id}")
                    self._at[i] = done.index
                    newly.append(i)
        for watcher in self._watchers:
            watcher.touched.update(spec.seats, newly)
        return newly

    @staticmethod
    def _faulted(spec: MatchSpec, faults: Sequence[Any]) -> list[int]:
        """The entrants that faulted in a match (once each; a benched seat's fault is not one)."""
        out: list[int] = []
        for f in faults:
            seat = f.get("seat") if isinstance(f, dict) else None
            if not isinstance(seat, int) or not 0 <= seat < len(spec.seats):
                continue
            if str(f.get("detail", "")).startswith(BENCHED):
                continue
            if spec.seats[seat] not in out:
                out.append(spec.seats[seat])
        return out

    def plan(self, specs: Iterable[MatchSpec]
             ) -> Iterator[tuple[MatchSpec, dict[int, str]] | None]:
        """The matches to play (``specs``: in play order, a set's seatings together, of
        rounds added before they are taken),
        each with the entrants benched in it and their fault's detail; ``None`` while nothing
        may start until a match ends (ask again then).

        A set whose seating depends on matches not counted yet is held back, and the sets
        after it go ahead where they can (up to :data:`LOOKAHEAD` sets held): so a limit costs
        throughput only where an entrant has about as many matches running as faults left.
        Every seating of a set gets the same answer.

        Each time it is asked, it goes through the held sets in order, as if deciding each
        again, but decides again only those whose answer may have changed since (see
        :class:`_Held`): the others wait still."""
        sets = cut_sets(specs)
        held = _Held(self)
        self._watchers.append(held)
        try:
            ended = False
            while True:
                moved = False
                held.new_pass()
                while (key := held.next_dirty()) is not None:
                    benched = self._decide(held.sets[key][0], held.ahead(key))
                    if benched is None:
                        continue
                    moved = True
                    for spec in held.remove(key):
                        yield spec, self._admit(spec, benched)
                if not ended and len(held.sets) < LOOKAHEAD:
                    members = next(sets, None)
                    if members is None:
                        ended = True
                        continue
                    benched = self._decide(members[0], held.ahead(None))
                    if benched is None:
                        held.add(members)
                    else:
                        for spec in members:
                            yield spec, self._admit(spec, benched)
                    continue
                if ended and not held.sets:
                    return
                if not moved:
                    yield None
        finally:
            self._watchers = [w for w in self._watchers if w is not held]

    def _admit(self, spec: MatchSpec, benched: dict[int, str]) -> dict[int, str]:
        self._admitted.add(spec.id)
        for i in spec.seats:
            self._open[i] += 1
        return {i: why for i, why in benched.items() if i in spec.seats}

    def _decide(self, spec: MatchSpec, ahead: Callable[[int], int]) -> dict[int, str] | None:
        """Who is benched in ``spec``'s set: an entrant whose N-th fault (schedule order)
        lies before the set; ``None`` while that is not known: not every match before the set
        is counted, and an entrant's faults counted, finished, running and in the ``ahead``
        matches (held back, not started; counted as far as the limit) could add up to the
        limit."""
        first = spec.index - spec.seating + 1  # a set's seatings follow each other
        after = self._prefix.next
        counted = after is None or after.index >= first
        benched = {i: BENCHED[1] + self.left_out[i] for i in spec.seats if i in self.left_out}
        for i in spec.seats:
            if i in benched:
                continue
            if i in self.disqualified and self._at[i] < first:
                benched[i] = BENCHED[0] + self.disqualified[i]
            elif not counted and self.limit and self._load(i) + ahead(i) >= self.limit:
                return None  # it may reach the limit in a match before the set
        return benched

    def _load(self, i: int) -> int:
        """Entrant ``i``'s faults counted and finished, and its matches running."""
        return self.counts[i] + self._early[i] + self._open[i]

    def entrant(self, entrant: Entrant, detail: str | None) -> Entrant:
        """Who sits for ``entrant`` in a match: itself, or benched with ``detail`` (from
        :meth:`plan`)."""
        if detail is None:
            return entrant
        return Benched(entrant.name, entrant.command, entrant.workdir, entrant.hidden,
                       detail=detail)


__all__ = ["BENCHED", "LOOKAHEAD", "RETRIES_FOR", "SLOW", "Benched", "FaultLimit", "Preflight",
           "PreflightResult", "preflight", "start_checks"]


class _Picked(Sequence[Entrant]):
    """``entrants[wanted[k]]`` as item ``k``, each asked for only when the pre-flight starts
    it (a session's ``Lineup`` waits for its snapshot)."""

    def __init__(self, entrants: Sequence[Entrant], wanted: Sequence[int]) -> None:
        self.entrants, self.wanted = entrants, wanted

    def __len__(self) -> int:
        return len(self.wanted)

    @typing.overload
    def __getitem__(self, k: int) -> Entrant: ...

    @typing.overload
    def __getitem__(self, k: slice) -> Sequence[Entrant]: ...

    def __getitem__(self, k: int | slice) -> Entrant | Sequence[Entrant]:
        if isinstance(k, slice):
            return [self.entrants[i] for i in self.wanted[k]]
        return self.entrants[self.wanted[k]]


def start_checks(config: Config, entrants: Sequence[Entrant], order: Iterable[int],
                 sandbox: SandboxMode, stop: CancelSignal, *, logs_dir: Path,
                 skip: Collection[int] = ()) -> Checks | None:
    """Starts the pre-flight (``preflight`` not ``off``) on a thread of its own: each entrant
    started once (not those in ``skip``, left out already), in the ``order`` play needs them
    (a session's :class:`~referee.tournament.session.Lineup` waits for each snapshot);
    returns the :class:`Checks` it fills in as each entrant's result is known (the session
    reports them, and leaves out those that did not start with ``leave-out``, before any of
    their matches starts).

    :raises TournamentError: if the sandbox cannot be resolved for the bots (a command that
        cannot be started at all is raised where the results are taken).
    """
    if config.preflight is Preflight.OFF:
        return None
    wanted = [i for i in order if i not in skip]
    try:
        launcher = Launcher.resolve(sandbox, config.limits)
    except BotCommandError as err:
        raise TournamentError(str(err)) from None
    checks = Checks(wanted)

    def fly() -> None:
        try:
            preflight(_Picked(entrants, wanted), limits=config.limits, launcher=launcher,
                      logs_dir=logs_dir, hidden=(config.output,), stop=stop,
                      done=lambda k, result: checks.put(wanted[k], result))
        except BotCommandError as err:
            checks.fail(TournamentError(str(err)))
        except BaseException as err:  # raised again on the coordinator's thread
            checks.fail(err)

    checks.worker = threading.Thread(target=fly, name="preflight", daemon=True)
    checks.worker.start()
    return checks
