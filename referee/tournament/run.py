"""Tournaments: running a schedule concurrently, resuming.

The YAML configuration lives in :mod:`referee.tournament.config` (re-exported here):
:func:`load_config` reads and checks it (``tournament.md``) before any bot starts, every mistake
a :class:`ConfigError` with one line naming the file, the key and the problem.
:func:`run` plays the schedule's missing matches through a :class:`~referee.runners.local.Runner`
(where matches run: this process, worker processes, a Dask cluster; one fresh set of bot
processes per match) under its own policy (:func:`~referee.tournament.dispatch.play_jobs`: which
match may start, the order results are saved in, what an error means). Each game record is
written where its match ran when the output folder is shared (this machine's worker processes),
and only a small result line comes back: the coordinator rates it, appends it to
``results.jsonl`` (synced once a batch, before the next batch is saved) and updates the
display, so an interrupted tournament resumes where it stopped and ends with the standings of
an uninterrupted run. The output folder's layout is :mod:`referee.tournament.output`'s.

>>> config = load_config(Path("tournaments/demo.yaml"))  # doctest: +SKIP
>>> outcome = run(config)  # doctest: +SKIP
>>> outcome.standings[0].name  # doctest: +SKIP
'mc'
"""

from __future__ import annotations

import array
import contextlib
import dataclasses
import os
import threading
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

from referee.bots.limits import SandboxMode
from referee.bots.process import BotCommandError, Launcher, bwrap_available
from referee.bots.sandbox import SandboxError, capabilities
from referee.bots.snapshot import FolderChanged, Store
from referee.match.job import DealSecret, Done, MatchJob, MatchSpec
from referee.match.play import Entrant
from referee.records.match_id import MatchId
from referee.records.record import FaultDict, RecordDict, RecordError, read_record
from referee.runners.local import CancelSignal, Runner, auto_affinity, local_runner
from referee.tournament.admission import BENCHED, FaultLimit, Preflight, preflight
from referee.tournament.audit import Audit, in_play_order
from referee.tournament.config import Config, ConfigError, load_config
from referee.tournament.course import Stopped
from referee.tournament.dispatch import TournamentError, play_jobs, stop_on_sigint
from referee.tournament.entrants import check_entrant_folders, hidden_paths, refused_entrant
from referee.tournament.formats import set_size
from referee.tournament.output import (
    MARKER,
    SECRET,
    Journal,
    OutputFolder,
    prepare_output,
    read_deal_secret,
    write_standings,
)
from referee.tournament.private import make_private, private_files
from referee.tournament.ratings import MatchResult, Standing, Standings
from referee.tournament.sealing import Seals, seal
from referee.tournament.stopping import Pair, Stop

__all__ = ["MARKER", "SECRET", "Config", "ConfigError", "Journal", "Outcome", "Reporter", "Runner",
           "TournamentError", "check_entrant_folders", "load_config", "play_jobs",
           "prepare_output", "read_deal_secret", "run", "stop_on_sigint", "write_standings"]

BIG_PLAN = 100_000
"""Matches past which the header warns and says what to use instead."""
LONG_RUN_S = 86_400.0
"""Projected time left past which the tournament warns (once), at the rate measured."""
PACE_AFTER_S = 60.0
"""How long play goes before that projection is made."""

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


class _NoPages:
    def match_done(self, line: dict[str, Any], table: Standings) -> None:
        pass

    def finish(self) -> None:
        pass


class Reporter:
    """Hooks called (from one thread) as a tournament runs; the base class ignores them all."""

    def started(self, config: Config, total: int, done: int, sandbox: str) -> None:
        """Play is about to start; ``done`` matches were kept from an earlier run."""

    def warn(self, message: str) -> None:
        """Something the user should know (no sandbox, say)."""

    def fault(self, spec: MatchSpec, name: str, fault: FaultDict) -> None:
        """A bot faulted in a running match."""

    def match_done(self, spec: MatchSpec, result: MatchResult, done: int, table: Standings) -> None:
        """A match finished and was saved; ``table`` rates the finished prefix of the schedule."""

    def finished(self, standings: list[Standing]) -> None:
        """Every match is played; the standings files are written."""


@dataclass(frozen=True)
class Outcome:
    """How a call to :func:`run` ended."""

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
    questions: list[Pair] | None = None
    """A gauntlet's verdicts: each candidate against each of the others (else ``None``)."""
    """The verdict on each adjacent pair of the final order."""

    @property
    def finished(self) -> bool:
        """Whether the tournament ended (every match it needs is played)."""
        return self.stopped is not None


@dataclass(frozen=True)
class _Kept:
    """A finished match read back from the journal (its hand scores packed: a resume may hold
    a million of these)."""

    result: MatchResult
    scores: array.array[int]
    luck: list[list[float]] | None = None

    @classmethod
    def of(cls, result: MatchResult, hands: list[list[int]],
           luck: list[list[float]] | None = None) -> _Kept:
        return cls(result, array.array("i", [x for hand in hands for x in hand]), luck)

    @property
    def hands(self) -> list[list[int]]:
        n = len(self.result.players)
        return [list(self.scores[i:i + n]) for i in range(0, len(self.scores), n)]


def _hand_scores(record: RecordDict | dict[str, Any]) -> list[list[int]]:
    return [[int(x) for x in hand["scores"]] for hand in record.get("hands", ())]


def _hand_luck(record: RecordDict | dict[str, Any]) -> list[list[float]] | None:
    """Every hand's luck by seat (``None`` when a hand has none: an older record)."""
    hands = record.get("hands", ())
    if not all("luck" in hand for hand in hands):
        return None
    return [[float(x) for x in hand["luck"]] for hand in hands]


_Num = TypeVar("_Num", int, float)


def _line_hands(line: dict[str, Any], key: str, players: int,
                kind: type[_Num]) -> list[list[_Num]] | None:
    """A per-hand, per-seat table a journal line carries (``scores``, ``luck``), if well formed:
    one row a hand, one number a seat."""
    table = line.get(key)
    if not isinstance(table, list) or len(table) != line.get("hands"):
        return None
    try:
        hands = [[kind(x) for x in hand] for hand in table]
    except (TypeError, ValueError):
        return None
    return hands if all(len(h) == players for h in hands) else None


def _line_scores(line: dict[str, Any], players: int) -> list[list[int]] | None:
    """The hand scores a journal line carries (``scores``), if well formed."""
    return _line_hands(line, "scores", players, int)


def _line_luck(line: dict[str, Any], players: int) -> list[list[float]] | None:
    """The luck of the stock flips a journal line carries (``luck``), if well formed."""
    return _line_hands(line, "luck", players, float)


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
    at = [f"{total / rate / 3600:,.0f} h at {rate} matches/s" for rate in (40, 500)]
    more = f"; to play fewer, use {', '.join(instead)}" if instead else ""
    return (f"this plan has {total:,} matches: about {at[0]} (instant bots, one machine), "
            f"{at[1]} (a large cluster){more}")


def sealed_hidden(config: Config, seals: Seals) -> dict[str, tuple[Path, ...]]:
    """What each sealed entrant's sandbox must show empty: the output folder, the
    configuration and other entrants' folders where they lie inside its runtimes (its own
    folder's snapshot leaves them out already). From sorted real paths, as
    :func:`~referee.tournament.entrants.check_entrant_folders`.

    :raises ConfigError: for an entrant inside the output folder or the configuration.
    """
    names = seals.names
    folders = [seals.folder(n) for n in names]
    with refused_entrant(config, names):
        found = hidden_paths([seals.binds(n) for n in names],
                             protected=(config.output, config.path),
                             owned=[(f,) for f in folders])
    return {name: tuple(p for p in paths if not p.is_relative_to(folder))
            for name, folder, paths in zip(names, folders, found, strict=True)}


def _subuid_check() -> tuple[bool, str]:
    """Whether bots can run as the organiser's subordinate uids here, and the ids or why not
    (with the fix)."""
    check = next((c for c in capabilities().checks if c.name == "subuid"), None)
    if check is None:
        return False, "no subordinate uid check"
    return check.ok, check.detail if check.ok else f"{check.detail}: {check.enable}"


def check_bot_uids(config: Config) -> None:
    """Refuse to sandbox bots as the organiser's own uid (a referee not running as root and
    without subordinate uids, :mod:`referee.bots.subids`), unless the configuration accepts
    it (``bot_uids: shared``).

    :raises ConfigError: saying why and the fix.
    """
    uid = os.geteuid()
    if uid == 0 or config.bot_uids == "shared":
        return
    ok, detail = _subuid_check()
    if not ok:
        raise ConfigError(
            f"{config.path}: the referee runs as uid {uid}, not root, and cannot give each bot "
            f"a subordinate uid ({detail}); without one every bot would run as uid {uid}, read "
            f"what that uid may read outside its sandbox's view and share its process and "
            f"pipe limits with the other bots; run the referee as root, give it subordinate "
            f"uids, or accept a shared uid with bot_uids: shared")


def uid_isolation(config: Config) -> str:
    """What the header says about the bots' uids."""
    if os.geteuid() == 0:
        return "each bot a uid of its own"
    ok, detail = _subuid_check()
    if ok:
        return f"each bot a subordinate uid of its own: {detail}"
    return f"every bot as uid {os.geteuid()} (bot_uids: shared)"


def _affinity(config: Config) -> bool:
    """The configuration's ``affinity``, ``auto`` resolved: pinned where the matches take every
    CPU, as many on each, and sharing a CPU is fair (bots not on move at the least CPU weight:
    a sandbox with a cpu controller; or no sandbox, whose bots are trusted anyway)."""
    if config.affinity is not None:
        return config.affinity
    return auto_affinity(config.concurrency, fair=config.sandbox is SandboxMode.NONE
                         or capabilities().cgroup_ok("cpu"))


def run(config: Config, *, fresh: bool = False, deal_secret: DealSecret | bytes | None = None,
        reporter: Reporter | None = None, runner: Runner | None = None,
        stop: CancelSignal | None = None,
        pages: Callable[[Path], Pages] | None = None) -> Outcome:
    """Plays what is missing of the tournament, round by round (each round planned from the
    results of the rounds before it, see :mod:`referee.tournament.formats`), and, once it ends,
    writes the standings.
    Finished matches are found by match id in the journal, so a resumed run plans the same
    rounds and plays only what is missing. The deals are keyed by the output folder's
    secret (``deal_secret`` for a new folder, else a new one: see :func:`prepare_output`).

    Matches run through ``runner`` (default: :func:`~referee.runners.local.local_runner` of the
    configuration's concurrency: this process for 1, worker processes for more), which is
    closed before returning. ``stop`` ends the run early (Ctrl-C): no new match starts and the
    running ones are abandoned. ``pages`` makes, from the output folder, what keeps pages
    current as matches are saved (the CLI passes :class:`referee.web.report.Refresher`): its
    ``match_done`` gets each match's journal line (its ``record`` names the record's file, which
    stays where the match wrote it).

    :raises ConfigError: if the output folder cannot be used (see :func:`prepare_output`), no
        sandbox works here (unless the configuration says ``sandbox: none``; on a cluster each
        worker checks its own), or an entrant lives inside the output folder or the
        configuration, or in a folder its bots' users cannot read (:func:`check_entrant_folders`).
    :raises TournamentError: if a bot command cannot be started, where matches run is gone,
        or an entrant's snapshot cannot be made while its folder is as it was (a full
        disk); a folder changed since the start leaves its entrant out instead.
    """
    reporter = reporter or Reporter()
    stop = stop or threading.Event()
    with contextlib.ExitStack() as stack:
        where = stack.enter_context(contextlib.closing(runner or local_runner(
            config.concurrency, affinity=_affinity(config))))
        remote = where.remote  # bots spawned on other machines
        hidden: dict[str, tuple[Path, ...]] = {}
        if config.sandbox is not SandboxMode.NONE:  # auto or bwrap: never a silent fall-back
            if not remote and not bwrap_available():
                raise ConfigError(f"{config.path}: sandbox: no working sandbox here "
                                  f"({capabilities().summary()}): see ct-referee sandbox, or "
                                  f"set sandbox: none")
            if remote:  # each worker checks its own; no snapshot travels (yet)
                hidden = check_entrant_folders(config)
            if not remote and not all(capabilities().cgroup_ok(c)
                                      for c in ("memory", "pids", "cpu")):
                reporter.warn(f"sandbox without every cgroup: {capabilities().summary()} "
                              f"(see ct-referee sandbox)")
        stack.enter_context(private_files())  # records and logs 0600 while playing
        where.start()  # worker processes start while the rest is prepared
        seals = None
        if config.sandbox is not SandboxMode.NONE and not remote:
            check_bot_uids(config)
            store = stack.enter_context(Store())
            seals = seal(config, store, reporter.warn)
            hidden = sealed_hidden(config, seals)
        return _run(config, fresh=fresh, deal_secret=deal_secret, reporter=reporter,
                    runner=where, stop=stop, hidden=hidden, remote=remote, pages=pages,
                    seals=seals)


def _run(config: Config, *, fresh: bool, deal_secret: DealSecret | bytes | None,
         reporter: Reporter,
         runner: Runner, stop: CancelSignal, hidden: dict[str, tuple[Path, ...]],
         remote: bool, pages: Callable[[Path], Pages] | None, seals: Seals | None) -> Outcome:
    secret = prepare_output(config, fresh=fresh, deal_secret=deal_secret)
    make_private(config.output)
    course = config.course(secret=secret)
    folder = OutputFolder(config.output)
    names = [e.name for e in config.entrants]
    kept: dict[str, _Kept] = {}
    kept_faults: dict[str, list[Any]] = {}  # of the matches kept from earlier runs
    records = folder.records()  # one listing: the cheap check of a journal line

    def accept(line: dict[str, Any]) -> bool:
        match_id = line.get("id")
        if not isinstance(match_id, str) or not MatchId.is_one(match_id):
            return False
        try:
            result = MatchResult.from_json(line)
        except (KeyError, TypeError, ValueError):
            return False
        hands = _line_scores(line, len(result.players))
        luck = _line_luck(line, len(result.players))
        snapshots = line.get("snapshots")
        if hands is not None:  # trusted: its record was written (synced) before the line
            ok = match_id in records
        else:  # a line of an older ct-referee: its record says the hand scores
            try:
                record = read_record(folder.record(match_id))
                hands = _hand_scores(record)
                luck = _hand_luck(record)
            except (KeyError, TypeError, ValueError, RecordError):
                return False
            ok = (record.get("id") == match_id
                  and list(record.get("totals", ())) == list(result.totals)
                  and all(len(h) == len(result.players) for h in hands))
            snapshots = record.get("snapshots")
        if ok:
            kept[match_id] = _Kept.of(result, hands, luck)  # a later line for the same id wins
            faults = line.get("faults")
            if faults:
                kept_faults[match_id] = faults
            else:
                kept_faults.pop(match_id, None)
            if seals is not None:  # its snapshot, once taken, says if the code changed since
                for name, digest in zip(result.players, snapshots or (), strict=False):
                    seals.kept(name, digest)
        return ok

    journal = folder.journal()
    journal.load(accept, collect=False)
    records.clear()
    if seals is not None:
        seals.kept_loaded()
    planned: dict[int, list[tuple[int, tuple[int, ...]]]] = {}
    index = {name: i for i, name in enumerate(names)}

    def accept_round(line: dict[str, Any]) -> bool:
        try:
            r = int(line["round"])
            groups = [(int(g), tuple(index[str(n)] for n in members))
                      for g, members in line["groups"]]
        except (KeyError, TypeError, ValueError):
            return False
        planned[r] = groups
        return True

    rounds_log = folder.rounds_log()
    rounds_log.load(accept_round, collect=False)
    # A tournament's ``auto`` requires a sandbox: a worker without one refuses (bwrap).
    mode = config.sandbox.strict()
    runner.sandboxed = mode is not SandboxMode.NONE
    if remote:  # the machine that spawns the bots checks it
        sandbox = f"{mode} (resolved on each worker)"
    else:
        sandbox = f"bwrap ({capabilities().summary()})" if mode is SandboxMode.BWRAP else "none"
    if seals is not None:
        sandbox += f"; {uid_isolation(config)}; {seals.summary}"
    sandbox = f"{sandbox}; {runner.isolation}"
    entrants = [dataclasses.replace(e.entrant(), hidden=hidden.get(e.name, ()))
                for e in config.entrants]
    played = done = 0
    limit = FaultLimit(names, config.max_faults)
    audit = Audit(names, bound=config.variant.hand_total,
                  per_set=set_size(config.players, config.seatings))

    def seat(i: int, detail: str | None) -> Entrant:
        """Who sits for entrant ``i`` in a match planned now (``detail``: benched, why, from
        :meth:`FaultLimit.plan`): a sealed entrant's snapshot is taken the first time (a folder
        changed since the start is left out from then on, saying why)."""
        if detail is None and i in limit.left_out:  # left out since its set was planned
            detail = BENCHED[1] + limit.left_out[i]
        if seals is not None and detail is None and entrants[i].sealed is None:
            try:
                entrants[i] = dataclasses.replace(entrants[i], sealed=seals.sealed(names[i]))
            except FolderChanged as err:
                limit.leave_out(i, str(err))
                course.leave_out([i])
                reporter.warn(f"entrant {names[i]!r}: {err}: it is left out (no process in "
                              f"its matches, which it loses by fault)")
                detail = BENCHED[1] + limit.left_out[i]
            except SandboxError as err:  # not the entrant's doing: stop, resume later
                raise TournamentError(f"entrant {names[i]!r}: {err}") from None
        return limit.entrant(entrants[i], detail)

    if not remote:  # the bots start on the workers, not here
        if config.preflight is not Preflight.OFF:  # every bot starts: every snapshot now
            for i in range(len(entrants)):
                seat(i, None)
        for i, why in _preflight(config, entrants, mode, reporter, stop,
                                 skip=limit.left_out).items():
            limit.leave_out(i, why)
        course.leave_out(limit.left_out)  # last at once; stop waits on no question of theirs
    refresher = pages(config.output) if pages is not None else _NoPages()
    total = config.total()
    pace = _Pace(reporter, total)
    # a worker that reads this folder's own secret in the same place shares the folder (the
    # secret travels with every match anyway: it deals the cards)
    shared = (folder.secret, folder.secret.read_text(encoding="ascii")) if remote else None

    def job(spec: MatchSpec, benched: dict[int, str]) -> MatchJob:
        seats = tuple(seat(i, benched.get(i)) for i in spec.seats)
        return MatchJob(spec, seats,
                        config.variant, config.target, config.limits, mode, config.name,
                        logs_dir=folder.match_logs(spec.id), hidden=(config.output,),
                        record_path=folder.record(spec.id), shared=shared,
                        snapshots=tuple(seals.digest(names[i]) for i in spec.seats)
                        if seals is not None else None)

    def on_done(job: MatchJob, finished: Done) -> None:
        nonlocal done, played
        spec = job.spec
        line = dict(finished.line, record=folder.record_ref(spec.id))
        journal.append(line, sync=False)  # synced with its batch (on_batch)
        result = MatchResult.from_json(line)
        luck = _line_luck(line, len(result.players))
        course.add(spec, result, line["scores"], luck)
        audit.add(spec, line["scores"], luck)
        done += 1
        played += 1
        reporter.match_done(spec, result, done, course.table)
        for i in limit.finished(spec, line["faults"]):
            reporter.warn(f"{names[i]} is disqualified {limit.disqualified[i]}: the referee's "
                          f"fallback plays its seat from its next set on")
        refresher.match_done(line, course.table)
        pace.tick(done, played)

    def on_fault(job: MatchJob, fault: FaultDict, name: str) -> None:
        reporter.fault(job.spec, name, fault)

    done = len(kept)  # counted as played already; a line that turns out not to fit is not
    reporter.started(config, total or 0, done, sandbox)
    advice = plan_advice(config, total)
    if advice is not None:
        reporter.warn(advice)
    def next_round() -> Sequence[MatchSpec]:
        """The next round's matches, planned now (``[]``: none is left)."""
        specs = course.next_round(planned.get(course.round + 1))
        if specs and config.format.seeded_by_results and course.round not in planned:
            # as planned now: a resume plays it the same, even with entrants added since
            groups = {s.group: [names[i] for i in sorted(s.seats)] for s in specs}
            rounds_log.append({"round": course.round, "groups": list(groups.items())})
        limit.add_round(specs)
        return specs

    def later(first: Sequence[MatchSpec]) -> Iterator[MatchSpec]:
        """``first``, then each round after it, planned once the one before is taken (the
        last sets of a round play beside the first of the next: every slot stays busy)."""
        specs = first
        while specs:
            yield from specs
            if stop.is_set():
                return
            specs = next_round()

    try:
        while not stop.is_set():
            specs = next_round()
            if not specs:
                break

            def missing(specs: Iterable[MatchSpec]) -> Iterator[MatchSpec]:
                nonlocal done
                for spec in specs:
                    old = kept.pop(spec.id, None)
                    if old is not None and \
                            list(old.result.players) == [names[i] for i in spec.seats]:
                        hands = old.hands
                        course.add(spec, old.result, hands, old.luck)
                        audit.add(spec, hands, old.luck)
                        limit.finished(spec, kept_faults.pop(spec.id, []))
                    else:
                        done -= old is not None
                        yield spec

            def jobs(specs: Iterable[MatchSpec]) -> Iterator[MatchJob | None]:
                # each group's seatings in an order drawn from the deal secret (the audit);
                # None: who sits next waits on the faults of earlier matches
                for item in limit.plan(in_play_order(missing(specs))):
                    yield None if item is None else job(*item)

            # where no result changes the plan, every round in one stream
            play_jobs(runner, jobs(later(specs) if course.ahead() else specs), on_done, stop,
                      on_fault, journal.sync)
            if not course.complete():
                break
    except BaseException:
        refresher.finish()
        raise
    finally:
        journal.close()
        rounds_log.close()
    if course.stopped is None or not course.complete():  # matches planned still to play
        refresher.finish()
        return Outcome(total, done, played, None)
    standings = course.standings()
    pairs = course.pairs()
    questions = course.questions() if config.format.has_candidates else None
    notes: dict[str, dict[str, Any]] = {
        names[i]: {"disqualified": why} for i, why in limit.disqualified.items()}
    notes |= {names[i]: {"left_out": why} for i, why in limit.left_out.items()}
    alpha = config.stop.alpha if config.stop is not None else Stop().alpha
    for name, verdict in audit.result(alpha=alpha).items():
        notes.setdefault(name, {})["audit"] = verdict.to_json()
        if verdict.flag:
            reporter.warn(verdict.describe(name))
    write_standings(config, standings, course.matches, stopped=course.stopped, pairs=pairs,
                    questions=questions or (), notes=notes,
                    left_out={names[i]: why for i, why in limit.left_out.items()})
    reporter.finished(standings)
    refresher.finish()
    return Outcome(course.matches, done, played, standings, course.stopped, pairs, questions)


class _Pace:
    """Warns once, after :data:`PACE_AFTER_S` of play, when the rate measured says the
    matches left take more than :data:`LONG_RUN_S`."""

    def __init__(self, reporter: Reporter, total: int | None) -> None:
        self.reporter, self.total = reporter, total
        self.t0 = time.monotonic()
        self.told = total is None

    def tick(self, done: int, played: int) -> None:
        if self.told or self.total is None:
            return
        elapsed = time.monotonic() - self.t0
        if elapsed < PACE_AFTER_S:
            return
        self.told = True
        rate = played / elapsed
        left = (self.total - done) / rate if rate else float("inf")
        if left > LONG_RUN_S:
            self.reporter.warn(
                f"at {rate:.1f} matches/s the {self.total - done:,} matches left take about "
                f"{left / 86_400:.1f} days; Ctrl-C keeps what is played, and the same command "
                f"with a smaller plan (--max-matches, a ladder, players: 2, seatings: rotate) "
                f"goes on")

def _preflight(config: Config, entrants: Sequence[Entrant], sandbox: SandboxMode,
               reporter: Reporter, stop: CancelSignal,
               skip: Collection[int] = ()) -> dict[int, str]:
    """Starts each entrant once (``preflight`` not ``off``; not those in ``skip``, left out
    already), reports each that did not start, and returns those to leave out
    (``leave-out``), with why."""
    if config.preflight is Preflight.OFF:
        return {}
    wanted = [i for i in range(len(entrants)) if i not in skip]
    try:
        launcher = Launcher.resolve(sandbox, config.limits)
        flights = preflight([entrants[i] for i in wanted], limits=config.limits,
                            launcher=launcher, logs_dir=OutputFolder(config.output).preflight,
                            hidden=(config.output,), stop=stop)
    except BotCommandError as err:
        raise TournamentError(str(err)) from None
    failed: dict[int, str] = {}
    for i, flight in zip(wanted, flights, strict=True):
        if not flight.ok:
            failed[i] = f"did not start in the pre-flight: {flight.fault}: {flight.detail}"
            then = ("it is left out: no process in its matches, which it loses by fault "
                    "(preflight: keep starts it in each match all the same)"
                    if config.preflight is Preflight.LEAVE_OUT else
                    "it plays all the same and loses by fault (preflight: keep)")
            reporter.warn(f"{flight.report()}\n  {then}")
    return failed if config.preflight is Preflight.LEAVE_OUT else {}

