"""One run of a tournament over its output folder: :class:`TournamentSession` and its parts.

:func:`referee.tournament.run.run` works out what the machine means (the runner, the sandbox,
the snapshots) and hands a session the rest; the session plays what is missing of the
tournament, round by round, and writes the standings once it ended. Each part holds one concern
over the typed journal line (:class:`~referee.tournament.output.JournalLine`) and the one
:class:`~referee.tournament.output.OutputFolder`, and is tested alone, in process:

* :class:`~referee.tournament.resume.Resumed` and :class:`~referee.tournament.resume.RoundsLog`:
  what earlier runs finished and planned;
* :class:`Roster`: who sits for each entrant (sealing: its snapshot, waited for before its
  first match; a folder changed since the start, a pre-flight that failed or a
  disqualification bench it);
* :class:`Books`: the bookkeeping of each saved match (the journal, the course, the audit, the
  fault limit, the hooks);
* :class:`TournamentSession`: planning (each round's missing matches as jobs, every round in
  one stream where no result changes the plan) and the standings at the end.
"""

from __future__ import annotations

import dataclasses
import os
import threading
import typing
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from referee.bots.limits import SandboxMode
from referee.bots.policy import SandboxError
from referee.game.faults import Reason
from referee.match.job import DealSecret, Done, MatchJob, MatchSpec
from referee.match.play import Entrant
from referee.protocol.escape import escape_controls
from referee.records.record import FaultDict, RecordDict
from referee.runners.local import CancelSignal, Runner
from referee.tournament.admission import (
    BENCHED,
    Checks,
    FaultLimit,
    Preflight,
    PreflightResult,
    start_checks,
)
from referee.tournament.audit import Audit, in_play_order
from referee.tournament.config import Config, ConfigError
from referee.tournament.course import Stopped, TournamentProgress
from referee.tournament.dispatch import WAIT_S, TournamentError, play_jobs
from referee.tournament.formats import set_size
from referee.tournament.output import Journal, JournalLine, OutputFolder, write_standings
from referee.tournament.ratings import MatchResult, Standing, Standings
from referee.tournament.resume import Kept, Resumed, RoundsLog
from referee.tournament.sealing import Seals
from referee.tournament.startup import match_job
from referee.tournament.stopping import Pair, Stop

__all__ = ["BIG_PLAN", "Books", "NoPages", "Outcome", "Pages", "Reporter", "Roster",
           "TournamentSession", "plan_advice"]


class Pages(Protocol):
    """Keeps pages current as a tournament runs (the report: :class:`referee.web.report.Refresher`
    is one); the tournament layer knows them only by these two calls, both made on the
    coordinator's thread. The coordinator does no more for them than hand over what it has: an
    implementation returns within microseconds and does its work on a thread of its own."""

    def match_done(self, line: dict[str, Any], table: Standings) -> None:
        """A match was saved. ``line``: its ``results.jsonl`` line, as just appended (``id``,
        ``players``, ``totals``, ``ranks``, ``faults``, ``hands``, ``record``: the game
        record's path in the output folder; read it, do not change it). ``table``: the running
        standings over the finished prefix of the schedule; :meth:`Standings.standings` may be
        called here, on this thread, at most every few seconds (about 25 µs an entrant:
        ``bench/report.py``), never from another thread; the object may be kept for
        :meth:`finish`."""

    def finish(self) -> None:
        """The run is over (finished, stopped or failed), the standings files written if it
        finished; called on the coordinator's thread, which waits for the last write."""

    def replay_page(self) -> Callable[[RecordDict], None] | None:
        """What makes a match's page from its record where the match is played, once its
        record is written (:attr:`MatchJob.after`: a picklable callable, it travels to worker
        processes), so that the pages are made as the matches are played, on every core,
        rather than after the last one; ``None``: nothing. Asked once, before play."""


class NoPages:
    """No pages to keep current."""

    def match_done(self, line: dict[str, Any], table: Standings) -> None:
        """Nothing to do."""

    def replay_page(self) -> None:
        """No page."""

    def finish(self) -> None:
        """Nothing to do."""


class Reporter:
    """Hooks called (from one thread) as a tournament runs; the base class ignores them all."""

    def started(self, config: Config, total: int, done: int, sandbox: str) -> None:
        """Play is about to start; ``done`` matches were kept from an earlier run."""

    def warn(self, message: str) -> None:
        """Something the user should know (no sandbox, say)."""

    def note(self, message: str) -> None:
        """Something that happened, for the record (a league's version admitted or refused,
        its progress)."""

    def preflight(self, done: int, total: int, left_s: float | None) -> None:
        """The pre-flight has checked ``done`` of ``total`` entrants (called with 0 when it
        starts, after :meth:`started`, then after each entrant: matches of the entrants
        checked already may be under way); ``left_s``: the seconds the rest should take at
        the pace so far (``None``: not known yet)."""

    def fault(self, spec: MatchSpec, name: str, fault: FaultDict) -> None:
        """A bot faulted in a running match."""

    def match_done(self, spec: MatchSpec, result: MatchResult, done: int, table: Standings) -> None:
        """A match finished and was saved; ``table`` rates the finished prefix of the schedule."""

    def finished(self, standings: list[Standing]) -> None:
        """Every match is played; the standings files are written."""


@dataclass(frozen=True)
class Outcome:
    """How a call to :func:`referee.tournament.run.run` ended."""

    total: int | None
    """Matches of the tournament: once it ended, those played; before, the most it may play
    (``None``: not known)."""
    done: int
    played: int
    """Matches played by this call (the rest were kept from earlier runs)."""
    standings: list[Standing] | None
    """The final table, ``None`` until the tournament ended."""
    stopped: Stopped | None = None
    """Why the tournament ended, once it did; ``None`` while it has not."""
    pairs: list[Pair] | None = None
    """The verdict on each adjacent pair of the final order."""
    questions: list[Pair] | None = None
    """A gauntlet's verdicts: each candidate against each of the others (else ``None``)."""
    left_out: dict[str, str] = field(default_factory=dict)
    """The entrants left out (the pre-flight's ``leave-out``, a folder changed), and why."""

    @property
    def finished(self) -> bool:
        """Whether the tournament ended (every match it needs is played)."""
        return self.stopped is not None


BIG_PLAN = 100_000
"""Matches past which the header warns and says what to use instead."""


RATE_BARE = 20.0
"""Matches a second one core plays of instant bots with ``sandbox: none`` (2 cores, 40 matches/s:
``docs/scaling.md``)."""
RATE_SANDBOXED = 12.0
"""The same, sandboxed: ``bench/pipeline.py -j 2`` (72 matches of instant C bots, the whole
command) took 4.24 s with ``--sandbox none`` and 6.72 s with ``--sandbox bwrap`` in one
session (2026-12-05, load 3-4): 20 x 4.24 / 6.72, rounded down."""


def plan_advice(config: Config, total: int | None) -> str | None:
    """What to say before a plan of ``total`` matches that is past :data:`BIG_PLAN`
    (``None``: nothing)."""
    if total is None or total <= BIG_PLAN:
        return None
    instead = []
    if not config.format.fixed_groups_per_entrant:
        instead.append("format: ladder (each entrant in a fixed number of groups a round)")
    if config.max_matches is None:
        instead.append("max_matches")
    if config.players > 2:
        instead.append("players: 2")
    if config.seatings == "all" and config.players > 2:
        instead.append("seatings: rotate")
    boxed = config.sandbox is not SandboxMode.NONE
    cores = os.cpu_count() or 1
    here = round((RATE_SANDBOXED if boxed else RATE_BARE) * cores)
    at = [f"{total / rate / 3600:,.0f} h at {rate} matches/s" for rate in (here, 500)]
    more = f"; to play fewer, use {', '.join(instead)}" if instead else ""
    return (f"this plan has {total:,} matches: about {at[0]} (instant bots, "
            f"{'sandboxed' if boxed else 'no sandbox'}, this machine's {cores} cores), "
            f"{at[1]} (a large cluster){more}")


# -- who sits ----------------------------------------------------------------------------------

class Roster:
    """Who sits for each entrant in a match planned now: the entrant itself (a sealed entrant
    on its snapshot, taken beside play and waited for here), or, for one left out (a failed
    pre-flight) or disqualified, a bench that loses by fault
    (:meth:`FaultLimit.entrant`)."""

    def __init__(self, entrants: Sequence[Entrant], limit: FaultLimit, *,
                 seals: Seals | None = None,
                 left_out: Callable[[Collection[int]], None] = lambda _: None) -> None:
        self.entrants, self.limit, self.seals = list(entrants), limit, seals
        self.names = [e.name for e in self.entrants]
        self._left_out = left_out

    def seat(self, i: int, detail: str | None = None) -> Entrant:
        """Who sits for entrant ``i`` (``detail``: benched, why, from :meth:`FaultLimit.plan`).

        :raises TournamentError: if its snapshot cannot be made (not the entrant's doing:
            resume later), or its folder is refused (one line naming it, as before play).
        """
        if detail is None and i in self.limit.left_out:  # left out since its set was planned
            detail = BENCHED[1] + self.limit.left_out[i]
        if self.seals is not None and detail is None and self.entrants[i].sealed is None:
            try:
                self.entrants[i] = dataclasses.replace(
                    self.entrants[i], sealed=self.seals.sealed(self.names[i]))
            except SandboxError as err:  # not the entrant's doing: stop, resume later
                raise TournamentError(f"entrant {self.names[i]!r}: {err}") from None
            except ConfigError as err:  # its folder refused: stop, fix it, resume
                raise TournamentError(str(err)) from None
        return self.limit.entrant(self.entrants[i], detail)

    def on_snapshot(self, i: int, stop: CancelSignal) -> Entrant:
        """(any thread) Entrant ``i`` on its snapshot, once taken (the pre-flight starts
        it); unsealed if ``stop`` is set meanwhile (then nothing starts it: the run is over).

        :raises TournamentError: its folder refused (one line naming it).
        """
        entrant = self.entrants[i]
        if self.seals is None or entrant.sealed is not None:
            return entrant
        try:
            sealed = self.seals.wait_for(self.names[i], stop)
        except ConfigError as err:
            raise TournamentError(str(err)) from None
        return entrant if sealed is None else dataclasses.replace(entrant, sealed=sealed)

    def leave_out(self, why: dict[int, str]) -> None:
        """Leaves these entrants out, each with why (no process in their matches)."""
        for i, reason in why.items():
            self.limit.leave_out(i, reason)
        self._left_out(list(why))

    def digests(self, spec: MatchSpec) -> tuple[str | None, ...] | None:
        """The snapshot digest of each seat's entrant (``None``: not sealed)."""
        if self.seals is None:
            return None
        return tuple(self.seals.digest(self.names[i]) for i in spec.seats)


# -- bookkeeping -------------------------------------------------------------------------------

class Books:
    """The bookkeeping of finished matches: each one kept from an earlier run (:meth:`kept`) or
    saved now (:meth:`saved`: its journal line appended, unsynced until its batch ends) goes to
    the course (ratings, evidence), the audit and the fault limit, in that order, then to the
    hooks."""

    def __init__(self, course: TournamentProgress, audit: Audit, limit: FaultLimit,
                 journal: Journal, *, folder: OutputFolder, reporter: Reporter,
                 pages: Pages | None = None,
                 pace: Callable[[int, int], None] = lambda done, played: None,
                 done: int = 0) -> None:
        self.course, self.audit, self.limit, self.journal = course, audit, limit, journal
        self.folder, self.reporter, self.pace = folder, reporter, pace
        self.pages: Pages = pages or NoPages()
        self.done = done
        """Matches finished, those kept from earlier runs included."""
        self.played = 0
        """Matches played by this run."""

    def kept(self, spec: MatchSpec, old: Kept) -> None:
        """Takes a match an earlier run finished (counted in :attr:`done` already)."""
        hands = old.hands
        self.course.add(spec, old.result, hands, old.luck)
        self.audit.add(spec, hands, old.luck)
        self.limit.finished(spec, old.faults)

    def saved(self, job: MatchJob, finished: Done) -> None:
        """Takes a match played now: appends its journal line, rates it, reports it."""
        spec = job.spec
        line = JournalLine.parse(dict(finished.line, record=self.folder.record_ref(spec.id)))
        if line.scores is None:
            raise TournamentError(f"match {spec.id}: its result line has no hand scores")
        self.journal.append(line.raw, sync=False)  # synced with its batch (on_batch)
        self.folder.drop_superseded(spec.id)  # an older run's games/<id>.json, never counted
        self.course.add(spec, line.result, line.scores, line.luck)
        self.audit.add(spec, line.scores, line.luck)
        self.done += 1
        self.played += 1
        self.reporter.match_done(spec, line.result, self.done, self.course.table)
        names = self.course.names
        for i in self.limit.finished(spec, line.faults):
            self.reporter.warn(f"{names[i]} is disqualified {self.limit.disqualified[i]}: the "
                               f"referee's fallback plays its seat from its next set on")
        self.pages.match_done(line.raw, self.course.table)
        self.pace(self.done, self.played)


class Lineup(Sequence[Entrant]):
    """The entrants as the pre-flight starts them: each on its snapshot, waited for when
    asked (:meth:`Roster.on_snapshot`), and :attr:`order`, the order play needs them in (the
    pre-flight checks them in it, as they are sealed)."""

    def __init__(self, roster: Roster, order: Sequence[int], stop: CancelSignal) -> None:
        self.roster, self.order, self.stop = roster, list(order), stop

    def __len__(self) -> int:
        return len(self.roster.entrants)

    @typing.overload
    def __getitem__(self, i: int) -> Entrant: ...

    @typing.overload
    def __getitem__(self, i: slice) -> Sequence[Entrant]: ...

    def __getitem__(self, i: int | slice) -> Entrant | Sequence[Entrant]:
        if isinstance(i, slice):
            return [self[k] for k in range(len(self))[i]]
        return self.roster.on_snapshot(i, self.stop)


class _Either:
    """Set once either of two signals is (the run's stop, the session's end)."""

    def __init__(self, a: CancelSignal, b: CancelSignal) -> None:
        self.a, self.b = a, b

    def is_set(self) -> bool:
        return self.a.is_set() or self.b.is_set()


def entrant_order(first: Iterable[MatchSpec], entrants: int) -> list[int]:
    """The entrants in the order ``first`` (a round's matches, in play order) seats them, then
    those it does not seat: read only up to the match that seats the last of them (a round
    robin of 100 names every entrant within its first 600 matches of 970,200)."""
    seen: dict[int, None] = {}
    for spec in first:
        seen.update(dict.fromkeys(spec.seats))
        if len(seen) == entrants:
            break
    return list(dict.fromkeys([*seen, *range(entrants)]))


# -- the session -------------------------------------------------------------------------------

class TournamentSession:
    """One run of a tournament over its output folder (prepared: :func:`prepare_output`), whose
    deals ``secret`` keys: :meth:`resume` reads what earlier runs finished, :meth:`play`
    decides who plays (snapshots, pre-flight: :meth:`_start_checks`), plays the rest and
    returns the :class:`Outcome`, its standings written once the tournament ended.

    ``hidden``: per entrant, what its sandbox shows empty; ``remote``: the bots start on other
    machines (no snapshot, no pre-flight here; a worker that shares this output folder writes
    its records there); ``seals``: the entrants' snapshots (a sandboxed run on this machine).
    """

    def __init__(self, config: Config, secret: DealSecret, *, runner: Runner,
                 stop: CancelSignal, reporter: Reporter | None = None,
                 seals: Seals | None = None, hidden: dict[str, tuple[Path, ...]] | None = None,
                 remote: bool = False) -> None:
        self.config, self.runner, self.stop, self.remote = config, runner, stop, remote
        self.reporter = reporter or Reporter()
        self.folder = OutputFolder(config.output)
        self.course = config.course(secret=secret)
        self.names = [e.name for e in config.entrants]
        self.mode = config.sandbox.strict()  # a tournament's auto requires a sandbox
        self.resumed = Resumed(self.folder, seals)
        self.rounds = RoundsLog(self.folder.rounds_log(), self.names)
        self.limit = FaultLimit(self.names, config.max_faults)
        hidden = hidden or {}
        self.roster = Roster([dataclasses.replace(e.entrant(), hidden=hidden.get(e.name, ()))
                              for e in config.entrants], self.limit, seals=seals,
                             left_out=self.course.leave_out)
        self.audit = Audit(self.names, bound=config.variant.hand_total,
                           per_set=set_size(config.players, config.seatings))
        self.books = Books(self.course, self.audit, self.limit, self.folder.journal(),
                           folder=self.folder, reporter=self.reporter)
        # a worker that reads this folder's own secret in the same place shares the folder (the
        # secret travels with every match anyway: it deals the cards)
        self._shared = (self.folder.secret, self.folder.secret.read_text(encoding="ascii")) \
            if remote else None
        self._checks: Checks | None = None
        self._halt = threading.Event()
        self._after: Callable[[RecordDict], None] | None = None
        """What a job does with its record once written (a page: :meth:`Pages.replay_page`)."""

    # -- resume and admission ------------------------------------------------------------------

    def resume(self) -> None:
        """Reads what earlier runs of the folder finished and the rounds they planned."""
        self.resumed.load(self.books.journal)
        self.rounds.load()
        self.books.done = len(self.resumed)  # a line that turns out not to fit is not

    def _start_checks(self, first: Sequence[MatchSpec]) -> None:
        """Starts the snapshots, then the pre-flight (``preflight`` not ``off``; nothing here
        for bots that start on other machines), both in the order ``first`` (the first round's
        matches) needs the entrants in, once the header is out: the pre-flight fills in its
        :class:`Checks` on a thread of its own (:func:`start_checks`) while the matches of the
        entrants checked already play."""
        order = entrant_order(first, len(self.names))
        seals = self.roster.seals
        if seals is not None and not self.remote:
            seals.start([self.names[i] for i in order])
        if self.remote:  # each worker checks its own bots
            return
        signal = _Either(self.stop, self._halt)
        entrants: Sequence[Entrant] = self.roster.entrants if seals is None else \
            Lineup(self.roster, order, signal)
        self._checks = start_checks(self.config, entrants, order, self.mode, signal,
                                    logs_dir=self.folder.preflight,
                                    skip=dict(self.limit.left_out))
        if self._checks is not None:
            self.reporter.preflight(0, self._checks.total, None)

    def _await(self, entrants: Iterable[int] | None = None) -> None:
        """Takes the pre-flight's results come so far, then waits for those of ``entrants``
        (``None``: every one) unless the run stops meanwhile; says what the snapshots taken
        meanwhile say.

        :raises TournamentError: an entrant's folder refused (:meth:`_sealing`)."""
        self._sealing()
        checks = self._checks
        if checks is None:
            return
        self._checked(checks.take())
        wanted = checks.pending if entrants is None else set(entrants)
        while not self.stop.is_set() and checks.pending & wanted:
            self._checked(checks.take(timeout=WAIT_S))
            self._sealing()

    def _sealing(self, wait: bool = False) -> None:
        """Says what the snapshots taken since have to say (a large folder, a folder changed
        since kept matches); ``wait``: once every one is taken (unless the run stops).

        :raises TournamentError: the first folder refused so far, in one line naming its
            entrant: the run stops there (the matches played so far kept: fix it, then
            resume), whether or not the entrant played yet (``docs/tournaments.md``)."""
        seals = self.roster.seals
        if seals is None or self.remote:
            return
        while wait and not self.stop.is_set() and not seals.done and seals.refusal() is None:
            seals.settle(WAIT_S)
        seals.tell()
        refused = seals.refusal()
        if refused is not None:
            raise TournamentError(str(refused))

    def _checked(self, results: Sequence[tuple[int, PreflightResult]]) -> None:
        """Reports each entrant checked, and leaves out those that did not start
        (``preflight: leave-out``): left out before any match of theirs is planned."""
        checks = self._checks
        if not results or checks is None:
            return
        mode = self.config.preflight
        for i, flight in results:
            if flight.ok or flight.code == Reason.STOPPED:  # stopped: the run is over
                continue
            then = ("it is left out: no process in its matches, which it loses by fault "
                    "(preflight: keep starts it in each match all the same)"
                    if mode is Preflight.LEAVE_OUT else
                    "it plays all the same and loses by fault (preflight: keep)")
            self.reporter.warn(f"{flight.report()}\n  {then}")
            if mode is Preflight.LEAVE_OUT:
                self.roster.leave_out(
                    {i: f"did not start in the pre-flight: {flight.fault}: "
                        f"{escape_controls(flight.detail)}"})  # may quote the bot's bytes
        self.reporter.preflight(checks.done, checks.total, checks.left(checks.done))

    # -- planning ------------------------------------------------------------------------------

    def next_round(self) -> Sequence[MatchSpec]:
        """The next round's matches, planned now (``[]``: none is left); a round seeded by the
        results is logged as planned (a resume plays it the same)."""
        specs = self.course.next_round(self.rounds.get(self.course.round + 1))
        if specs and self.config.format.seeded_by_results:
            self.rounds.add(self.course.round, specs)
        self.limit.add_round(specs)
        return specs

    def _later(self, first: Sequence[MatchSpec]) -> Iterator[MatchSpec]:
        """``first``, then each round after it, planned once the one before is taken (the
        last sets of a round play beside the first of the next: every slot stays busy)."""
        specs = first
        while specs:
            yield from specs
            if self.stop.is_set():
                return
            specs = self.next_round()

    def _missing(self, specs: Iterable[MatchSpec]) -> Iterator[MatchSpec]:
        """The matches of ``specs`` no earlier run finished (those it did are booked)."""
        for spec in specs:
            old, was = self.resumed.pop(spec, [self.names[i] for i in spec.seats])
            if old is not None:
                self.books.kept(spec, old)
            else:
                self.books.done -= was
                yield spec

    def jobs(self, specs: Iterable[MatchSpec]) -> Iterator[MatchJob | None]:
        """The jobs of the matches of ``specs`` still to play: each group's seatings in an
        order drawn from the deal secret (the audit); ``None``: who sits next waits on the
        faults of earlier matches."""
        for item in self.limit.plan(in_play_order(self._missing(specs))):
            if item is not None:  # who sits waits on its pre-flight: left out, or not
                self._await(item[0].seats)
                if self.stop.is_set():
                    return
            yield None if item is None else self.job(*item)

    def job(self, spec: MatchSpec, benched: dict[int, str]) -> MatchJob:
        """The job that plays ``spec``, the entrants in ``benched`` benched, saying why."""
        seats = tuple(self.roster.seat(i, benched.get(i)) for i in spec.seats)
        return match_job(self.config, spec, seats, self.mode, self.folder, shared=self._shared,
                         snapshots=self.roster.digests(spec), after=self._after)

    # -- play ----------------------------------------------------------------------------------

    def play(self, *, sandbox: str, pages: Pages | None = None,
             pace: Callable[[int, int], None] | None = None) -> Outcome:
        """Plays what is missing, round by round (every round in one stream where no result
        changes the plan), and returns how it ended; the standings are written once the
        tournament ended. ``sandbox``: what the header says of it."""
        books = self.books
        books.pages = pages or NoPages()
        if not self.remote:  # a cluster's worker sends its record back, or writes it unseen
            self._after = books.pages.replay_page()
        if pace is not None:
            books.pace = pace
        total = self.config.total()
        self.reporter.started(self.config, total or 0, books.done, sandbox)
        advice = plan_advice(self.config, total)
        if advice is not None:
            self.reporter.warn(advice)
        try:
            first = self.next_round() if not self.stop.is_set() else []
            self._start_checks(first)
            self._rounds(first)
            self._await()  # an entrant in no match: its check still says if it is left out
            self._sealing(wait=True)  # and its folder still refused, if it is
        except BaseException:
            books.pages.finish()
            raise
        finally:
            self._halt.set()  # a pre-flight still under way starts no more bots
            if self._checks is not None and self._checks.worker is not None:
                self._checks.worker.join()  # its bots stopped (within a stop poll each)
            books.journal.close()
            self.rounds.close()
        if self.course.stopped is None or not self.course.complete():  # planned, to play
            books.pages.finish()
            return Outcome(total, books.done, books.played, None, left_out=self.left_out())
        outcome = self.standings()
        books.pages.finish()
        return outcome

    def _rounds(self, first: Sequence[MatchSpec]) -> None:
        """Plays ``first`` (the first round, planned), then each round after it."""
        def on_fault(job: MatchJob, fault: FaultDict, name: str) -> None:
            self.reporter.fault(job.spec, name, fault)

        def on_batch() -> None:
            self.books.journal.sync()
            self._await(())  # the pre-flight's results come so far: its count stays current

        specs: Sequence[MatchSpec] | None = first
        while not self.stop.is_set():
            specs = self.next_round() if specs is None else specs
            if not specs:
                break
            if self.course.ahead():
                jobs = self.jobs(self._later(specs))
            elif self.course.early():
                jobs = self._early(specs)
            else:
                jobs = self.jobs(specs)
            play_jobs(self.runner, jobs, self.books.saved, self.stop, on_fault, on_batch)
            specs = None
            if not self.course.complete():
                break

    def _early(self, first: Sequence[MatchSpec]) -> Iterator[MatchJob | None]:
        """The jobs of ``first``, then of each round after it, planned once the prefix of the
        schedule it is planned from is rated (:meth:`TournamentProgress.early`: the round
        before less its last sets); ``None`` meanwhile: the next jobs wait for matches to be
        saved, and the last sets of a round play beside the first of the next."""
        specs = first
        while specs:
            yield from self.jobs(specs)
            while not self.course.ready():
                if self.stop.is_set():
                    return
                yield None
            if self.stop.is_set():
                return
            specs = self.next_round()

    # -- standings -----------------------------------------------------------------------------

    def notes(self) -> dict[str, dict[str, Any]]:
        """What the standings say of each entrant beside its row: disqualified, left out, the
        fair-play audit's verdict (a flag warned of)."""
        names, limit = self.names, self.limit
        notes: dict[str, dict[str, Any]] = {
            names[i]: {"disqualified": why} for i, why in limit.disqualified.items()}
        notes |= {names[i]: {"left_out": why} for i, why in limit.left_out.items()}
        alpha = self.config.stop.alpha if self.config.stop is not None else Stop().alpha
        for name, verdict in self.audit.result(alpha=alpha).items():
            notes.setdefault(name, {})["audit"] = verdict.to_json()
            if verdict.flag:
                self.reporter.warn(verdict.describe(name))
        return notes

    def standings(self) -> Outcome:
        """Writes the standings of the tournament that ended, and says how it ended."""
        course = self.course
        assert course.stopped is not None
        standings = course.standings()
        pairs = course.pairs()
        questions = course.questions() if self.config.format.has_candidates else None
        write_standings(self.config, standings, course.matches, stopped=course.stopped,
                        pairs=pairs, questions=questions or (), notes=self.notes(),
                        left_out=self.left_out())
        self.reporter.finished(standings)
        return Outcome(course.matches, self.books.done, self.books.played, standings,
                       course.stopped, pairs, questions, self.left_out())

    def left_out(self) -> dict[str, str]:
        """The entrants left out so far, by name, and why."""
        return {self.names[i]: why for i, why in self.limit.left_out.items()}
