"""The league's loop: :class:`League` over an output folder (:mod:`referee.league.journal`), in
parts as a tournament's session is: the :class:`~referee.league.book.Book` (every finished
match booked: the table, the verdicts, the audit), the
:class:`~referee.league.versions.Versions` (who plays, from what, the refusals), the
:class:`~referee.league.planner.Planner` (which matches next, within the budget) and the
:class:`~referee.league.live.LivePage` (the page and the standings files).

:meth:`League.resume` reads the journals back (the versions, then every finished match, one line
at a time, as a tournament's resume reads them: a line counts once its record is there; a record
without its line is played again). :meth:`League.play` hands
:func:`~referee.tournament.dispatch.play_jobs` an endless stream of jobs and takes, between two
sets, whatever the admissions found. It ends when ``stop`` is set (Ctrl-C) or at
``max_matches``. What happens is said through the tournament's
:class:`~referee.tournament.session.Reporter`: ``note`` (a line a minute at least while it
plays), ``warn``, ``fault``.
"""

from __future__ import annotations

import shutil
import threading
import time
from collections import deque
from typing import Any

from referee.bots.limits import SandboxMode
from referee.league.book import Book
from referee.league.config import LeagueConfig
from referee.league.journal import LeagueFolder, match_id
from referee.league.live import LivePage
from referee.league.matchmaker import Matchmaker
from referee.league.planner import Planner
from referee.league.submissions import Admissions
from referee.league.versions import Versions
from referee.match.job import DealSecret, Done, MatchJob
from referee.records.match_id import MatchId
from referee.records.record import FaultDict
from referee.runners.local import Runner
from referee.tournament.dispatch import play_jobs
from referee.tournament.output import JournalLine
from referee.tournament.session import Reporter
from referee.tournament.startup import CLUSTER_WEAKER

__all__ = ["LEAGUE_CLUSTER", "PROGRESS_S", "League"]

PROGRESS_S = 60.0
"""While it plays, the league says how it goes at least this often."""
LEAGUE_CLUSTER = (
    f"{CLUSTER_WEAKER}; a version's snapshot is pre-flown and checked here, and then it plays "
    f"on the workers from its folder as it is, a change made after its admission included")
"""What a league on a cluster says, in its first lines and on its page."""


class League:
    """One run of a league over its output folder. ``reporter``: the organiser's terminal
    (the tournament's hooks); ``admissions``: the watcher (made by the caller, started by
    :meth:`play`)."""

    def __init__(self, config: LeagueConfig, secret: DealSecret, *, runner: Runner,
                 stop: threading.Event, mode: SandboxMode,
                 reporter: Reporter | None = None, weaker: tuple[str, ...] = ()) -> None:
        self.config, self.runner, self.stop, self.mode = config, runner, stop, mode
        self.reporter = reporter or Reporter()
        self.weaker = weaker
        """The bot limits weaker here than a cgroup's, and the fix (a run on this machine's:
        :attr:`referee.tournament.startup.Machine.weaker`); in the first lines and on the
        page."""
        self.folder = LeagueFolder(config.output)
        self.results = self.folder.journal()
        self.events = self.folder.event_log()
        self.remote = bool(getattr(runner, "remote", False))
        """Matches run on a cluster's workers, from the versions' folders as they are."""
        self.log: deque[str] = deque(maxlen=40)
        self.book = Book(config, secret, say=self.say)
        self.mm = Matchmaker(players=config.players, placement=config.placement,
                             beta=config.rating.beta)
        self.versions = Versions(self.book, self.mm, self.events, placement=config.placement,
                                 say=self.say)
        self.planner = Planner(config, self.book, self.versions, self.mm, folder=self.folder,
                               mode=mode, remote=self.remote, stop=stop, say=self.say)
        self.page_writer = LivePage(self.folder)
        self.admissions: Admissions | None = None
        self.played = 0
        """Matches played by this run."""
        self._pruned = 0
        """Sets up to this one had their logs pruned (``keep_logs``)."""
        self._newest = 0
        self._said = (time.monotonic(), 0)

    @property
    def done(self) -> int:
        """Matches finished (all runs)."""
        return self.book.done

    # -- the journals --------------------------------------------------------------------------

    def resume(self) -> None:
        """Reads what earlier runs wrote: the versions, then every finished match whose
        record is there (the tournament's rule: a line without its record is dropped, a record
        without its line played again)."""
        self.events.load(self.versions.event, collect=False)
        records = self.folder.records()

        def match(data: dict[str, Any]) -> bool:
            try:
                line = JournalLine.parse(data)
            except ValueError:
                return False
            if line.id not in records or not all(p in self.book.table.rows
                                                  for p in line.result.players):
                return False
            self.planner.rated(self.book.book(line))
            return True

        self.results.load(match, collect=False)
        self.book.take_ended()  # their replays were written by the runs that played them
        self._newest = self._pruned = max(0, self.book.next_group - 1 - self.config.keep_logs)

    # -- what the organiser reads ---------------------------------------------------------------

    def say(self, line: str) -> None:
        """A line for the organiser: the terminal, the page's log."""
        self.log.appendleft(f"{time.strftime('%H:%M:%S')} {line}")
        self.reporter.note(line)

    def _progress(self) -> None:
        """How it goes, at least every :data:`PROGRESS_S` while matches are played."""
        now = time.monotonic()
        at, played = self._said
        if now - at < PROGRESS_S:
            return
        self._said = (now, self.played)
        if self.played == played:
            return
        ranked = self.book.table.ranked()
        lead = f"; first: {ranked[0].name} (mu-3σ {ranked[0].score:.2f})" if ranked else ""
        self.reporter.note(f"{self.done:,} matches ({self.played - played:,} in the last "
                           f"{now - at:.0f} s), {len(ranked)} versions playing{lead}")

    def news(self) -> bool:
        """Takes what the admissions found since; whether anything changed."""
        if self.admissions is None:
            return False
        if self.admissions.error is not None:
            raise self.admissions.error
        return self.versions.news(self.admissions.events())

    # -- play ----------------------------------------------------------------------------------

    def _between(self) -> None:
        self.news()
        self.page()
        self._progress()

    def play(self, admissions: Admissions | None) -> None:
        """Plays until ``stop`` or the cap; the page and the journals are closed at the end."""
        self.admissions = admissions
        if admissions is not None:
            admissions.start()
        try:
            play_jobs(self.runner, self.planner.jobs(self._between), self.saved, self.stop,
                      self._fault, self.results.sync)
        finally:
            if admissions is not None:
                admissions.close()
            self.results.close()
            self.events.close()
            self.page_writer.close(self.page_data(live=False), self.book.take_ended())

    def _fault(self, job: MatchJob, fault: FaultDict, name: str) -> None:
        self.reporter.fault(job.spec, name, fault)

    def saved(self, job: MatchJob, finished: Done) -> None:
        """A match finished: its line journaled (synced with its batch), booked."""
        line = JournalLine.parse(dict(finished.line, record=self.folder.record_ref(job.spec.id),
                                      at=round(time.time(), 3)))
        self.results.append(line.raw, sync=False)
        self.planner.finished(job.spec.id)
        self.played += 1
        self.planner.rated(self.book.book(line))
        group = MatchId.parse(line.id).group
        if self.config.keep_logs and group not in self.book.sets:  # its set is complete
            self._prune(group)
        self.page()

    def _prune(self, group: int) -> None:
        """Set ``group`` is complete: the bots' logs of every complete set ``keep_logs`` sets
        older than the newest complete one go (one that completes late goes at once)."""
        keep = self.config.keep_logs
        self._newest = max(self._newest, group)
        if group <= self._pruned:
            self._drop_logs(group)
        while self._pruned < self._newest - keep:
            self._pruned += 1
            if self._pruned not in self.book.sets:  # one under way goes when it completes
                self._drop_logs(self._pruned)

    def _drop_logs(self, group: int) -> None:
        for k in range(1, len(self.book.order) + 1):
            shutil.rmtree(self.folder.match_logs(match_id(group, k)), ignore_errors=True)

    # -- the page ------------------------------------------------------------------------------

    def page_data(self, *, live: bool = True) -> dict[str, Any]:
        """What the page shows."""
        book, versions = self.book, self.versions
        ranked = book.table.ranked()
        first = versions.first
        rows = [dict(r.to_json(), first_s=first.get(r.name), audit=book.audit(r.name),
                     p_above_next=round(book.table.p_above(r.name, ranked[i + 1].name), 3)
                     if i + 1 < len(ranked) else None,
                     next=book.pair(r.name, ranked[i + 1].name)
                     if i + 1 < len(ranked) else None) for i, r in enumerate(ranked)]
        rows += [dict(r.to_json(), first_s=first.get(r.name), audit=book.audit(r.name))
                 for r in book.table.retired()]
        return {"name": self.config.name, "live": live, "matches": book.table.matches,
                "sets": book.table.sets, "rows": rows, "newest": list(book.newest),
                "own": {a: list(items) for a, items in book.own.items()},
                "refused": dict(versions.refused), "log": list(self.log),
                "confidence": book.stop_rule.confidence,
                "cluster": LEAGUE_CLUSTER if self.remote else None,
                "limits": list(self.weaker),
                "resting": self.planner.resting, "flags": book.flags(),
                "hand_points": self.config.variant.hand_total}

    def page(self) -> None:
        """Hands the page its data when a write is due (see :class:`LivePage`)."""
        if not self.page_writer.due():
            return
        start = time.thread_time()
        data = self.page_data()
        self.page_writer.hand(data, self.book.take_ended(), cost=time.thread_time() - start)
