"""The league's loop: :class:`League` over an output folder (:mod:`referee.league.journal`).

:meth:`League.resume` reads the journal back (the versions, then every finished match, one line
at a time: the table and the sets under way rebuilt as they were, memory bounded by the
versions, never by the matches; records a kill left without their line are journaled then).
:meth:`League.play` hands :func:`~referee.tournament.dispatch.play_jobs` an endless stream of
jobs, each duplicate set chosen by the :class:`~referee.league.matchmaker.Matchmaker` as a slot
frees up, and takes between two sets whatever the admissions thread found (new versions,
refusals, folders gone). It ends when ``stop`` is set (Ctrl-C) or at ``max_matches``.
"""

from __future__ import annotations

import shutil
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from referee.bots.limits import SandboxMode
from referee.league.config import LeagueConfig
from referee.league.journal import Journaled, LeagueFolder, match_id, orphans
from referee.league.matchmaker import Matchmaker
from referee.league.page import write_page
from referee.league.submissions import (
    Admissions,
    Admitted,
    Known,
    Note,
    Refused,
    Withdrawn,
    shown,
)
from referee.league.table import Table, set_points
from referee.league.verdicts import Verdicts
from referee.match.job import DealSecret, Done, MatchJob, MatchSpec
from referee.match.play import Entrant
from referee.records.match_id import MatchId
from referee.records.record import FaultDict
from referee.runners.local import Runner
from referee.tournament.audit import in_play_order, play_key
from referee.tournament.dispatch import play_jobs
from referee.tournament.output import Journal, JournalLine
from referee.tournament.schedule import seatings
from referee.tournament.stopping import Stop

__all__ = ["CLUSTER_WEAKER", "PAGE_S", "League"]

PAGE_S = 3.0
"""The page is written at most this often while matches finish (and at every event)."""
IDLE_S = 0.1
"""How often an idle league (fewer versions than seats) looks for news."""
NEWEST = 30
CLUSTER_WEAKER = (
    "weaker than on one machine: the versions are not sealed (each worker runs their "
    "folders as they are, a change made after a version's admission included: its snapshot "
    "is pre-flown and checked here, not played), and each bot's sandbox, uid and the drops "
    "of the kernel's caches are as each worker can (docs/cluster.md)")
"""What the league says, in its first lines and on its page, when it plays on a cluster
(a tournament's header says the same: ``referee.cli.tournament.CLUSTER_WEAKER``)."""


@dataclass
class _Set:
    """A duplicate set under way: its members' group order and its finished seatings."""

    group: tuple[str, ...]
    done: dict[int, JournalLine] = field(default_factory=dict)
    queued: bool = False


class League:
    """One run of a league over its output folder. ``say``: a line for the organiser (the
    terminal); ``admissions``: the watcher (made by the caller, started by :meth:`play`)."""

    def __init__(self, config: LeagueConfig, secret: DealSecret, *, runner: Runner,
                 stop: threading.Event, mode: SandboxMode,
                 say: Callable[[str], None] = lambda line: None) -> None:
        self.config, self.secret, self.runner, self.stop, self.mode = \
            config, secret, runner, stop, mode
        self.say = say
        self.weaker: tuple[str, ...] = ()
        """The bot limits weaker here than a cgroup's, and the fix (set by
        :func:`referee.league.run.run_league`: :meth:`referee.bots.sandbox.Capabilities.weaker`);
        on the page."""
        self.folder = LeagueFolder(config.output)
        self.results = self.folder.journal()
        self.events: Journal = self.folder.event_log()
        self.table = Table(config.rating)
        self.stop_rule = Stop()
        self.verdicts = Verdicts(self.stop_rule)
        """The pairs' verdicts and the fair-play audit (bounded: :mod:`referee.league.verdicts`)."""
        self.flagged: set[str] = set()
        self.mm = Matchmaker(players=config.players, placement=config.placement,
                             beta=config.rating.beta)
        self.order = seatings(tuple(range(config.players)), config.seatings)
        """Each seating of a set, as positions in its group."""
        self.playable: dict[str, Entrant] = {}
        self.digest: dict[str, str] = {}
        self.current: dict[str, str] = {}
        """Each author's version that plays (by name)."""
        self.known: dict[str, Known] = {}
        self.versions: dict[str, int] = {}
        self.number: dict[str, int] = {}
        self.names: list[str] = []
        """Each version's number (a seat's entrant index in a match's spec), in order."""
        self.sets: dict[int, _Set] = {}
        self.next_group = 1
        self.done = 0
        self.played = 0
        self.running = 0
        self.first: dict[str, float] = {}
        """Seconds from a version's folder first seen to its first match handed out."""
        self.seen: dict[str, float] = {}
        self.newest: deque[dict[str, Any]] = deque(maxlen=NEWEST)
        self.refused: dict[str, str] = {}
        self.log: deque[str] = deque(maxlen=40)
        self._page_at = 0.0
        self._page_every = PAGE_S
        self._newest = 0
        self._pruned = 0
        """Sets up to this one had their logs pruned (``keep_logs``)."""
        self.admissions: Admissions | None = None
        self.remote = bool(getattr(runner, "remote", False))
        """Matches run on a cluster's workers, from the versions' folders as they are."""

    # -- the journal ---------------------------------------------------------------------------

    def resume(self) -> None:
        """Reads what earlier runs wrote: the versions and every finished match."""
        self.events.load(self._event, collect=False)
        journaled = Journaled()

        def match(data: dict[str, Any]) -> bool:
            try:
                line = JournalLine.parse(data)
            except ValueError:
                return False
            if line.scores is None or not all(p in self.table.rows
                                              for p in line.result.players):
                return False
            mid = MatchId.parse(line.id)
            journaled.add(mid.group, mid.seating)
            self._book(line)
            return True

        self.results.load(match, collect=False)
        partial = {group: set(s.done) for group, s in self.sets.items()}
        for data in orphans(self.folder, journaled, partial):  # a kill between the two
            if match(data):
                self.results.append(data)
                self.say(f"kept match {data['id']}: its record was written before the "
                         f"referee stopped, its line is now too")
        self.done = self.table.matches
        self._newest = self._pruned = max(0, self.next_group - 1 - self.config.keep_logs)

    def _event(self, data: dict[str, Any]) -> bool:
        kind, name, author = data.get("event"), data.get("name"), data.get("author")
        if kind == "admitted" and isinstance(name, str) and isinstance(author, str):
            version, digest = data.get("version"), data.get("digest")
            if not isinstance(version, int) or not isinstance(digest, str):
                return False
            self._join(name, author, version)
            at = data.get("at")
            self.known[author] = Known(name, version, digest,
                                       float(at) if isinstance(at, int | float) else 0.0)
            self.versions[author] = max(version, self.versions.get(author, 0))
            self.refused.pop(author, None)
        elif kind == "retired" and isinstance(name, str):
            self._table_retire(name, str(data.get("why", "")))
            if isinstance(author, str) and self.current.get(author) == name:
                del self.current[author]
            if isinstance(author, str) and self.known.get(author, None) is not None \
                    and self.known[author].name == name:
                del self.known[author]
        elif kind == "refused" and isinstance(author, str):  # as an older run wrote it, shown
            self.refused[shown(author)] = str(data.get("reason", ""))
        elif kind == "first" and isinstance(name, str):
            self.first[name] = float(data.get("seconds", 0.0))
        else:
            return False
        return True

    def _join(self, name: str, author: str, version: int) -> None:
        old = self.current.get(author)
        if old is not None and old != name:
            self._table_retire(old, f"replaced by {name}")
        self.current[author] = name
        self.table.join(name, author=author, version=version)
        if name not in self.number:
            self.number[name] = len(self.names)
            self.names.append(name)

    def _table_retire(self, name: str, why: str) -> None:
        """``name`` plays no more: its row stays, its pairs' evidence goes."""
        self.table.retire(name, why)
        if name in self.number:
            self.verdicts.drop(self.number[name])

    def _book(self, line: JournalLine) -> None:
        """Counts one finished match, and rates its set once every seating is in."""
        self.table.count(line.result)
        mid = MatchId.parse(line.id)
        self.next_group = max(self.next_group, mid.group + 1)
        players = line.result.players
        s = self.sets.get(mid.group)
        if s is None:
            group: list[str] = [""] * len(players)
            for j, position in enumerate(self.order[(mid.seating - 1) % len(self.order)]):
                group[position] = players[j]
            s = self.sets[mid.group] = _Set(tuple(group))
        s.done[mid.seating] = line
        self.newest.appendleft({"id": line.id, "players": list(players),
                                "totals": list(line.result.totals),
                                "faults": len(line.faults)})
        if len(s.done) < len(self.order):
            return
        del self.sets[mid.group]
        lines = list(s.done.values())
        points = set_points([ln.result.players for ln in lines],
                            [ln.scores or [] for ln in lines], [ln.luck for ln in lines])
        faulted = {ln.result.players[seat] for ln in lines for seat, _ in ln.result.faults}
        self.table.rate_set(points, faulted)
        self._judge(mid.group, s, lines)
        for name in points:
            row = self.table.rows.get(name)
            if row is not None:
                self.mm.update(name, row.rating.mu, row.rating.sigma)

    def _judge(self, group: int, s: _Set, lines: list[JournalLine]) -> None:
        """Feeds a finished set to the audit, and to the tests of its pairs of versions that
        play (a retired version's pairs are forgotten: on a restart, which reads the versions'
        events before the matches, as live)."""
        rows = self.table.rows
        if not all(n in self.number for n in s.group):
            return
        seats = [tuple(self.number[p] for p in ln.result.players) for ln in lines]
        keys = [play_key(self.spec(group, s.group, k)) for k in s.done]
        playing = {self.number[n] for n in s.group if n in rows and rows[n].active}
        self.verdicts.add_set(seats, [ln.scores or [] for ln in lines],
                              [ln.luck for ln in lines], keys, pairs_of=playing)
        for name in s.group:
            if name in self.flagged:
                continue
            verdict = self.verdicts.audit(self.number[name])
            if verdict.flag:
                self.flagged.add(name)
                self._say(verdict.describe(name))

    # -- news from the admissions --------------------------------------------------------------

    def news(self) -> bool:
        """Takes what the admissions found since; whether anything changed."""
        if self.admissions is None:
            return False
        if self.admissions.error is not None:
            raise self.admissions.error
        changed = False
        for event in self.admissions.events():
            changed = True
            if isinstance(event, Admitted):
                self._admitted(event)
            elif isinstance(event, Refused):
                self.refused[event.author] = event.reason
                self.events.append({"event": "refused", "author": event.author,
                                    "reason": event.reason, "at": time.time()})
                self._say(f"refused {event.author}: {event.reason}")
            elif isinstance(event, Note):
                self._say(event.text)
            elif isinstance(event, Withdrawn):
                name = self.current.pop(event.author, None)
                if name is not None:
                    self._retire(name, event.author, "its folder was removed")
        return changed

    def _admitted(self, event: Admitted) -> None:
        name, author = event.name, event.author
        if event.new:
            old = self.current.get(author)
            self.events.append({"event": "admitted", "name": name, "author": author,
                                "version": event.version, "digest": event.digest,
                                "command": list(event.argv), "seen": event.seen,
                                "at": time.time()})
            self._join(name, author, event.version)
            self.refused.pop(author, None)
            if old is not None and old != name:
                self.mm.remove(old)
                self.playable.pop(old, None)
                self._say(f"admitted {name} ({event.digest[:15]}): {old} retires")
            else:
                self._say(f"admitted {name} ({event.digest[:15]})")
        elif name not in self.table.rows or not self.table.rows[name].active:
            return
        self.playable[name] = event.entrant
        self.digest[name] = event.digest
        self.seen[name] = event.seen
        row = self.table.rows[name]
        self.mm.add(name, row.rating.mu, row.rating.sigma,
                    placement=self.config.placement - row.sets)

    def _retire(self, name: str, author: str, why: str) -> None:
        self.events.append({"event": "retired", "name": name, "author": author, "why": why,
                            "at": time.time()})
        self._table_retire(name, why)
        self.mm.remove(name)
        self.playable.pop(name, None)
        self._say(f"{name} retires: {why}")

    def _say(self, line: str) -> None:
        self.log.appendleft(f"{time.strftime('%H:%M:%S')} {line}")
        self.say(line)
        self.page()

    # -- planning ------------------------------------------------------------------------------

    def jobs(self) -> Iterator[MatchJob | None]:
        """Every set's jobs, chosen as slots free up, until ``stop`` or the cap; ``None``
        while nothing can be chosen but matches are running (a finished one asks again)."""
        while True:
            self.news()
            self.page()  # news waiting for its page (throttled)
            if self.stop.is_set() or self._capped():
                return
            specs = self._unfinished() or self._next_set()
            if specs:
                for spec in in_play_order(specs):
                    self.running += 1
                    yield self.job(spec)
            elif self.running:
                yield None
            else:
                self.stop.wait(IDLE_S)

    def _capped(self) -> bool:
        cap = self.config.max_matches
        return cap is not None and self.done + self.running >= cap

    def _unfinished(self) -> list[MatchSpec]:
        """The missing seatings of a set an earlier run left under way, where its members
        play now."""
        for group, s in self.sets.items():
            if not s.queued and all(n in self.playable for n in s.group):
                s.queued = True
                return [self.spec(group, s.group, k) for k in range(1, len(self.order) + 1)
                        if k not in s.done]
        return []

    def _next_set(self) -> list[MatchSpec]:
        chosen = self.mm.next_set()
        if chosen is None:
            return []
        group = self.next_group
        self.next_group += 1
        self.sets[group] = _Set(chosen, queued=True)
        for name in chosen:
            if name not in self.first and name in self.seen:
                self.first[name] = time.time() - self.seen[name]
                self.events.append({"event": "first", "name": name,
                                    "seconds": round(self.first[name], 3), "at": time.time()})
        return [self.spec(group, chosen, k) for k in range(1, len(self.order) + 1)]

    def spec(self, group: int, members: tuple[str, ...], seating: int) -> MatchSpec:
        """Seating ``seating`` of set ``group`` of ``members`` (in group order)."""
        seats = tuple(members[p] for p in self.order[seating - 1])
        return MatchSpec(match_id(group, seating), group * len(self.order) + seating, 1, group,
                         seating, tuple(self.number[n] for n in seats),
                         f"{self.config.name}:1:{group}", self.secret.key)

    def job(self, spec: MatchSpec) -> MatchJob:
        """The job that plays ``spec``."""
        seats = tuple(self.names[i] for i in spec.seats)
        c = self.config
        return MatchJob(spec, tuple(self.playable[n] for n in seats), c.variant, c.target,
                        c.limits, self.mode, c.name, logs_dir=self.folder.match_logs(spec.id),
                        hidden=(c.output,), record_path=self.folder.record(spec.id),
                        snapshots=None if self.remote
                        else tuple(self.digest.get(n) for n in seats))

    # -- play ----------------------------------------------------------------------------------

    def play(self, admissions: Admissions | None) -> None:
        """Plays until ``stop`` or the cap; the page and the journals are closed at the end."""
        self.admissions = admissions
        if admissions is not None:
            admissions.start()
        try:
            play_jobs(self.runner, self.jobs(), self.saved, self.stop, self._fault,
                      self.results.sync)
        finally:
            if admissions is not None:
                admissions.close()
            self.results.close()
            self.events.close()
            self.page(force=True, live=False)

    def _fault(self, job: MatchJob, fault: FaultDict, name: str) -> None:
        pass  # in the match's record and line; the page counts them

    def saved(self, job: MatchJob, finished: Done) -> None:
        """A match finished: its line journaled (synced with its batch), booked."""
        line = JournalLine.parse(dict(finished.line, record=self.folder.record_ref(job.spec.id)))
        self.results.append(line.raw, sync=False)
        self.running -= 1
        self.done += 1
        self.played += 1
        self._book(line)
        group = MatchId.parse(line.id).group
        if self.config.keep_logs and group not in self.sets:  # its set is complete
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
            if self._pruned not in self.sets:  # one under way goes when it completes
                self._drop_logs(self._pruned)

    def _drop_logs(self, group: int) -> None:
        for k in range(1, len(self.order) + 1):
            shutil.rmtree(self.folder.match_logs(match_id(group, k)), ignore_errors=True)

    # -- the page ------------------------------------------------------------------------------

    def page_data(self, *, live: bool = True) -> dict[str, Any]:
        """What the page shows."""
        ranked = self.table.ranked()
        rows = [dict(r.to_json(), first_s=self.first.get(r.name), audit=self._audit(r.name),
                     p_above_next=round(self.table.p_above(r.name, ranked[i + 1].name), 3)
                     if i + 1 < len(ranked) else None,
                     next=self.page_verdict(r.name, ranked[i + 1].name)
                     if i + 1 < len(ranked) else None) for i, r in enumerate(ranked)]
        rows += [dict(r.to_json(), first_s=self.first.get(r.name), audit=self._audit(r.name))
                 for r in self.table.retired()]
        return {"name": self.config.name, "live": live, "matches": self.table.matches,
                "sets": self.table.sets, "rows": rows, "newest": list(self.newest),
                "refused": dict(self.refused), "log": list(self.log),
                "confidence": self.stop_rule.confidence,
                "cluster": CLUSTER_WEAKER if self.remote else None,
                "limits": list(self.weaker),
                "flags": [self.verdicts.audit(self.number[n]).describe(n)
                          for n in sorted(self.flagged, key=self.number.__getitem__)],
                "hand_points": self.config.variant.hand_total}

    def page_verdict(self, upper: str, lower: str) -> dict[str, Any] | None:
        """The verdict on ``upper`` over ``lower`` as the page's data (``None``: unknown)."""
        if upper not in self.number or lower not in self.number:
            return None
        return self.verdicts.pair(self.number[upper], self.number[lower], self.names).to_json()

    def _audit(self, name: str) -> dict[str, Any] | None:
        if name not in self.number:
            return None
        return self.verdicts.audit(self.number[name]).to_json()

    def page(self, *, force: bool = False, live: bool = True) -> None:
        """Writes the page, at most every :data:`PAGE_S` unless ``force``, and never taking
        more than a twentieth of the coordinator's time (a page of 1,000 versions takes a
        second or two on a loaded machine: it is then written every half minute)."""
        now = time.monotonic()
        if not force and now - self._page_at < self._page_every:
            return
        write_page(self.folder.report, self.page_data(live=live))
        self._page_at = time.monotonic()
        self._page_every = max(PAGE_S, 20 * (self._page_at - now))
