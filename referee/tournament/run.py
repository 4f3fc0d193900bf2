"""Tournaments: running a schedule concurrently, the output folder, resuming.

The YAML configuration lives in :mod:`referee.tournament.config` (re-exported here):
:func:`load_config` reads and checks it (``tournament.md``) before any bot starts, every mistake
a :class:`ConfigError` with one line naming the file, the key and the problem.
:func:`run` plays the schedule's missing matches through a :class:`~referee.runners.local.Runner`
(where matches run: this process, worker processes, a Dask cluster; one fresh set of bot
processes per match) under its own policy (:func:`play_jobs`: which match may start, the order
results are saved in, what an error means), writing each game record, then its line in
``results.jsonl``, so an interrupted tournament resumes where it stopped and ends with the
standings of an uninterrupted run.

>>> config = load_config(Path("tournaments/demo.yaml"))  # doctest: +SKIP
>>> outcome = run(config)  # doctest: +SKIP
>>> outcome.standings[0].name  # doctest: +SKIP
'mc'
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import hashlib
import io
import json
import os
import secrets
import shutil
import signal
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import yaml

from referee.bots.limits import SandboxMode
from referee.bots.process import BotCommandError, Launcher, bwrap_available
from referee.bots.sandbox import SandboxError, bot_binds, capabilities, check_binds, check_readable
from referee.bots.snapshot import Store
from referee.game.faults import Fault
from referee.match.job import MatchJob, MatchSpec
from referee.match.play import Entrant, MatchAborted
from referee.records.match_id import MatchId
from referee.records.record import (
    FaultDict,
    RecordDict,
    RecordError,
    read_record,
    write_atomic,
    write_record,
)
from referee.runners.local import (
    CancelSignal,
    Failed,
    Faulted,
    Finished,
    Runner,
    RunnerError,
    local_runner,
)
from referee.tournament.admission import FaultLimit, Preflight, preflight
from referee.tournament.audit import Audit, play_order
from referee.tournament.config import RATING_KEYS, Config, ConfigError, load_config
from referee.tournament.course import Stopped
from referee.tournament.formats import set_size
from referee.tournament.private import make_private, private_files
from referee.tournament.ratings import MatchResult, Standing, Standings
from referee.tournament.sealing import Seals, seal
from referee.tournament.stopping import Pair, Stop

__all__ = ["Config", "ConfigError", "Journal", "Outcome", "Reporter", "Runner",
           "TournamentError", "load_config", "play_jobs", "prepare_output", "read_deal_secret",
           "run", "stop_on_sigint", "write_standings"]

MARKER = ".ct-referee.json"
"""The file that makes a folder a ct-referee tournament folder (and says which tournament)."""
SECRET = ".deal-secret"
"""The tournament's deal secret (hex, mode 0600): with the seed it keys every deal."""
SECRET_BYTES = 32
"""Bytes of a new deal secret (from the OS)."""
MIN_SECRET_BYTES = 16
"""Bytes a deal secret given must hold at least (128 bits)."""
REPORT = "report"
"""The report's folder (written by :mod:`referee.web.report`, never by the tournament)."""
PREFLIGHT = "preflight"
"""The folder of the pre-flight's stderr logs, one per entrant."""
OWNED = (MARKER, SECRET, "tournament.yaml", "results.jsonl", "rounds.jsonl", "standings.json",
         "standings.csv", "games", "logs", PREFLIGHT, REPORT)
"""Everything ``--fresh`` deletes from an output folder; nothing else is touched."""
"""What a match id of a tournament looks like (a journal line with another id is dropped)."""


class TournamentError(RuntimeError):
    """A tournament that cannot go on (a bot command that cannot be started at all, or where
    matches run is gone: :class:`~referee.runners.local.RunnerError`)."""


# -- running matches ---------------------------------------------------------------------------


DoneCallback = Callable[[MatchJob, RecordDict], None]
FaultCallback = Callable[[MatchJob, FaultDict, str], None]
"""Called by :func:`play_jobs` as matches end and bots fault."""


def play_jobs(runner: Runner, jobs: Iterable[MatchJob], on_done: DoneCallback,
              stop: CancelSignal, on_fault: FaultCallback | None = None) -> None:
    """The tournament's policy over where matches run: plays ``jobs`` through ``runner``,
    keeping :meth:`~referee.runners.local.Runner.slots` of them submitted but never two with the
    same :attr:`~referee.tournament.schedule.MatchSpec.deals_key` at once (they play the same
    deals: their
    bots could learn the deals from each other's games as they are played), and calls
    ``on_done`` with each finished match's record, in schedule order within what finished
    together, and ``on_fault`` as bots fault, from the calling thread. Once ``stop`` is set
    no new job starts and the runner is cancelled: abandoned matches are not reported.

    :raises TournamentError: if a bot command cannot be started, or where matches run is gone
        (after cancelling the rest; every match that finished all the same is reported first).
    """
    todo: Iterator[MatchJob] = iter(jobs)
    waiting: list[MatchJob] = []  # taken from ``jobs`` while their deals were in play
    busy: set[tuple[int, int]] = set()  # the deals_key of every submitted job
    running: dict[str, MatchJob] = {}
    error: BaseException | None = None
    cancelled = False

    def next_job() -> MatchJob | None:
        for i, job in enumerate(waiting):
            if job.spec.deals_key not in busy:
                return waiting.pop(i)
        for job in todo:
            if job.spec.deals_key not in busy:
                return job
            waiting.append(job)
        return None

    def top_up() -> None:
        while not cancelled and len(running) < runner.slots():
            job = next_job()
            if job is None:
                return
            busy.add(job.spec.deals_key)
            running[job.spec.id] = job
            runner.submit(job)

    try:
        top_up()
        while running:
            if stop.is_set() and not cancelled:
                cancelled = True
                runner.cancel()
            finished: list[Finished | Failed] = []
            for event in runner.wait(0.25):
                if isinstance(event, Faulted):
                    if on_fault is not None and event.job.spec.id in running:
                        on_fault(event.job, event.fault, event.name)
                elif running.pop(event.job.spec.id, None) is not None:
                    finished.append(event)
            finished.sort(key=lambda event: event.job.spec.index)
            busy.difference_update(event.job.spec.deals_key for event in finished)
            top_up()  # the next matches start before the finished ones are saved
            for event in finished:
                if isinstance(event, Finished):
                    on_done(event.job, event.record)  # every finished match is kept
                elif not isinstance(event.error, MatchAborted):
                    error = error or event.error
                    if not cancelled:
                        cancelled = True
                        runner.cancel()
    except BaseException:
        if not cancelled:
            runner.cancel()
        raise
    if isinstance(error, BotCommandError | RunnerError):
        raise TournamentError(str(error)) from None
    if error is not None:
        raise error


@contextlib.contextmanager
def stop_on_sigint(stop: threading.Event) -> Iterator[None]:
    """While inside, Ctrl-C sets ``stop`` instead of raising :class:`KeyboardInterrupt`:
    matches end cleanly at their next turn (within one answer's time limit), or within
    :data:`referee.bots.bot.STOP_POLL_S` while their bots are starting, and the journal is never cut
    mid-line. Does nothing outside the main thread."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: object) -> None:
        stop.set()

    old = signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)


# -- output folder -----------------------------------------------------------------------------


def fingerprint(identity: dict[str, Any]) -> str:
    """A short hash of a tournament's identity (:meth:`Config.identity`)."""
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def read_deal_secret(path: Path) -> bytes:
    """The deal secret in ``path``: hex digits (at least 32), surrounding blanks ignored.

    :raises ConfigError: for a file that cannot be read or holds no such secret.
    """
    try:
        text = path.read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError) as err:
        why = getattr(err, "strerror", None) or "not hex digits"
        raise ConfigError(f"deal secret {str(path)!r}: cannot read: {why}") from None
    try:
        key = bytes.fromhex(text.strip())
    except ValueError:
        key = b""
    if len(key) < MIN_SECRET_BYTES:
        raise ConfigError(f"deal secret {str(path)!r}: expected at least 32 hex digits "
                          f"(128 bits), as in the {SECRET} file of a tournament folder")
    return key


def prepare_output(config: Config, *, fresh: bool = False,
                   deal_secret: bytes | None = None) -> bytes:
    """Makes ``config.output`` ready: new, resumed (same tournament), or emptied (``fresh``),
    and returns its deal secret: the one in the folder (:data:`SECRET`), else ``deal_secret``,
    else a new one from the OS, written there (mode 0600) for resuming.

    :raises ConfigError: for a folder of another tournament (without ``fresh``), a folder
        that is not a ct-referee tournament folder and is not empty, a ``deal_secret`` other
        than the folder's, or a folder with results but no deal secret.
    """
    out = config.output
    marker = out / MARKER
    if out.exists() and not out.is_dir():
        raise ConfigError(f"output {str(out)!r} is a file, not a folder")
    if marker.is_file():
        try:
            theirs = json.loads(marker.read_text(encoding="utf-8"))["identity"]
        except (OSError, ValueError, KeyError, TypeError):
            theirs = None
        mine = config.identity()
        if fresh:
            for name in OWNED:
                path = out / name
                if path.is_dir() and not path.is_symlink():
                    shutil.rmtree(path)
                else:
                    path.unlink(missing_ok=True)
        elif theirs != mine and not grows(theirs, mine):
            raise ConfigError(f"output {str(out)!r} holds another tournament "
                              f"({_difference(theirs, mine)}); add --fresh to start over there, "
                              f"or choose another --output")
    elif out.is_dir() and any(out.iterdir()):
        raise ConfigError(f"output {str(out)!r} is not empty and is not a ct-referee tournament "
                          f"folder; choose another --output")
    if deal_secret is not None and len(deal_secret) < MIN_SECRET_BYTES:
        raise ConfigError(f"a deal secret needs at least {MIN_SECRET_BYTES} bytes, "
                          f"not {len(deal_secret)}")
    secret_path = out / SECRET
    if secret_path.is_file():
        secret = read_deal_secret(secret_path)
        if deal_secret is not None and deal_secret != secret:
            raise ConfigError(f"output {str(out)!r} was dealt with another deal secret than the "
                              f"one given; add --fresh to start over there with it")
    elif (out / "results.jsonl").is_file() and (out / "results.jsonl").stat().st_size:
        raise ConfigError(f"output {str(out)!r} has results but no {SECRET} (an older "
                          f"ct-referee dealt them); add --fresh to start over there")
    else:
        secret = secrets.token_bytes(SECRET_BYTES) if deal_secret is None else deal_secret
    (out / "games").mkdir(parents=True, exist_ok=True)
    (out / "logs").mkdir(exist_ok=True)
    if not marker.is_file() or (marker.is_file() and not fresh and theirs != mine):
        identity = config.identity()  # new, or a ladder grown since
        write_atomic(marker, json.dumps({"format": "ct-referee-tournament", "version": 1,
                                          "fingerprint": fingerprint(identity),
                                          "identity": identity}, indent=2) + "\n")
    if not secret_path.is_file():  # after the marker: a folder cut short here still resumes
        write_atomic(secret_path, secret.hex() + "\n", mode=0o600)
    write_atomic(out / "tournament.yaml",
                  yaml.safe_dump(config.resolved(), sort_keys=False, allow_unicode=True))
    for folder in (out, out / "games"):  # left by a write_atomic cut short (SIGKILL)
        for tmp in folder.glob(".*.tmp"):
            if tmp.is_file():
                tmp.unlink(missing_ok=True)
    return secret


def grows(theirs: object, mine: dict[str, Any]) -> bool:
    """Whether ``mine`` continues the ladder ``theirs``: the same but for entrants added at the
    end and other caps (``rounds``, ``max_matches``)."""
    if not isinstance(theirs, dict) or mine.get("format") != "ladder":
        return False
    free = ("entrants", "rounds", "max_matches")
    same = {k: v for k, v in theirs.items() if k not in free} == \
        {k: v for k, v in mine.items() if k not in free}
    old, new = theirs.get("entrants"), mine["entrants"]
    return same and isinstance(old, list) and new[:len(old)] == old


def _difference(theirs: object, mine: dict[str, Any]) -> str:
    if not isinstance(theirs, dict):
        return "its marker file is unreadable"
    for key, value in mine.items():
        if theirs.get(key) != value:
            if key == "entrants":
                return "the entrants differ"
            return f"{key} is {theirs.get(key)!r} there, {value!r} here"
    return "its configuration differs"


class Journal:
    """``results.jsonl``: one JSON line per finished match, appended, flushed and synced."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file: io.BufferedWriter | None = None

    def load(self, accept: Callable[[dict[str, Any]], bool]) -> list[dict[str, Any]]:
        """The complete lines that parse and that ``accept`` takes. If any line is dropped
        (a half-written last line above all), the file is rewritten with the kept ones."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return []
        pieces = data.split(b"\n")
        kept: list[dict[str, Any]] = []
        dropped = pieces[-1] != b""  # text after the last newline: a torn append
        for piece in pieces[:-1]:
            try:
                line = json.loads(piece)
            except ValueError:
                line = None
            if isinstance(line, dict) and accept(line):
                kept.append(line)
            else:
                dropped = True
        if dropped:
            write_atomic(self.path, "".join(_dumps_line(line) for line in kept))
        return kept

    def append(self, line: dict[str, Any]) -> None:
        """Appends one line and makes it durable before returning."""
        if self._file is None:
            self._file = open(self.path, "ab")  # noqa: SIM115 - closed by close()
        self._file.write(_dumps_line(line).encode())
        self._file.flush()
        os.fsync(self._file.fileno())

    def close(self) -> None:
        """Closes the file (appending opens it again)."""
        if self._file is not None:
            self._file.close()
            self._file = None


def _dumps_line(line: dict[str, Any]) -> str:
    return json.dumps(line, separators=(",", ":")) + "\n"


def write_standings(config: Config, rows: Sequence[Standing], matches: int, *,
                    stopped: Stopped = Stopped.COMPLETE, pairs: Sequence[Pair] = (),
                    questions: Sequence[Pair] = (),
                    notes: dict[str, dict[str, Any]] | None = None,
                    left_out: dict[str, str] | None = None) -> None:
    """Writes ``standings.json`` and ``standings.csv`` in the output folder; ``questions``
    (a gauntlet's candidates against the others) go into the JSON when given, ``notes`` add
    keys to an entrant's row (``disqualified``, ``left_out``), ``left_out`` lists the entrants
    the pre-flight left out, and why."""
    notes = notes or {}
    doc: dict[str, Any] = {
        "tournament": config.name, "matches": matches, "stopped": stopped.value,
        "rating": {k: getattr(config.rating, k) for k in RATING_KEYS},
        "standings": [row.to_json() | notes.get(row.name, {}) for row in rows],
        "pairs": [p.to_json() for p in pairs]}
    if questions:
        doc["questions"] = [p.to_json() for p in questions]
    if left_out:
        doc["left_out"] = left_out
    verdicts = {p.upper: p for p in pairs}
    write_atomic(config.output / "standings.json", json.dumps(doc, indent=2) + "\n")
    kinds = sorted({k for row in rows for k in row.faults}, key=Fault.order)
    buf = io.StringIO()
    out = csv.writer(buf, lineterminator="\n")
    out.writerow(["rank", "name", "mu", "sigma", "score", "matches", "wins", "mean_rank",
                  "points_per_hand", *(f"faults_{k}" for k in kinds), "p_above_next",
                  "verdict_next", "diff_next", "low_next", "high_next", "sets_next"])
    for row in rows:
        data = row.to_json()
        pair = verdicts.get(row.name)
        tail = ["", "", "", "", ""]
        if pair is not None:
            p = pair.to_json()
            tail = ["" if p[k] is None else p[k] for k in ("verdict", "diff", "low", "high",
                                                           "sets")]
        out.writerow([data[k] if data[k] is not None else "" for k in (
            "rank", "name", "mu", "sigma", "score", "matches", "wins", "mean_rank",
            "points_per_hand")] + [row.faults.get(k, 0) for k in kinds]
            + ["" if data["p_above_next"] is None else data["p_above_next"]] + tail)
    write_atomic(config.output / "standings.csv", buf.getvalue())


# -- the tournament ----------------------------------------------------------------------------


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
    """A finished match read back from the journal and its record."""

    result: MatchResult
    hands: list[list[int]]


def _hand_scores(record: RecordDict | dict[str, Any]) -> list[list[int]]:
    return [[int(x) for x in hand["scores"]] for hand in record.get("hands", ())]


def check_entrant_folders(config: Config) -> dict[str, tuple[Path, ...]]:
    """What each entrant's sandbox must show empty: the output folder, the configuration file
    and the other entrants' folders, where they lie inside the folders it is shown (symlinks and
    ``..`` resolved). Refuses, before play, an entrant that lives inside the output folder or
    the configuration.

    :return: the hidden paths by entrant name.
    :raises ConfigError: naming the entrant and the path.
    """
    binds = []
    for e in config.entrants:
        try:
            binds.append(bot_binds(e.argv, e.workdir))
            if os.geteuid() == 0:  # bots run as users of their own
                check_readable(binds[-1])
        except SandboxError as err:
            raise ConfigError(f"{config.path}: entrant {e.name!r}: {err}") from None
    hidden: dict[str, tuple[Path, ...]] = {}
    for i, (e, b) in enumerate(zip(config.entrants, binds, strict=True)):
        others = [f for j, o in enumerate(binds) if j != i for f in o.bot]
        try:
            hidden[e.name] = check_binds(b, protected=(config.output, config.path),
                                         others=others)
        except SandboxError as err:
            raise ConfigError(f"{config.path}: entrant {e.name!r}: {err}") from None
    return hidden


def sealed_hidden(config: Config, seals: Seals) -> dict[str, tuple[Path, ...]]:
    """What each sealed entrant's sandbox must show empty: the output folder, the
    configuration and other entrants' folders where they lie inside its runtimes (its own
    folder's snapshot leaves them out already).

    :raises ConfigError: for an entrant inside the output folder or the configuration.
    """
    folders = {n: s.snapshot.folder for n, s in seals.by_name.items()}
    hidden: dict[str, tuple[Path, ...]] = {}
    for name, sealed in seals.by_name.items():
        others = [f for n, f in folders.items() if n != name]
        try:
            paths = check_binds(sealed.binds, protected=(config.output, config.path),
                                others=others)
        except SandboxError as err:
            raise ConfigError(f"{config.path}: entrant {name!r}: {err}") from None
        hidden[name] = tuple(p for p in paths if not p.is_relative_to(folders[name]))
    return hidden


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


def run(config: Config, *, fresh: bool = False, deal_secret: bytes | None = None,
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
    current as matches are saved (the CLI passes :class:`referee.web.report.Refresher`).

    :raises ConfigError: if the output folder cannot be used (see :func:`prepare_output`), no
        sandbox works here (unless the configuration says ``sandbox: none``; on a cluster each
        worker checks its own), or an entrant lives inside the output folder or the
        configuration, or in a folder its bots' users cannot read (:func:`check_entrant_folders`).
    :raises TournamentError: if a bot command cannot be started, or where matches run is gone.
    """
    reporter = reporter or Reporter()
    stop = stop or threading.Event()
    remote = bool(getattr(runner, "remote", False))  # bots spawned on other machines
    hidden: dict[str, tuple[Path, ...]] = {}
    if config.sandbox is not SandboxMode.NONE:  # auto or bwrap: never a silent fall-back
        if not remote and not bwrap_available():
            raise ConfigError(f"{config.path}: sandbox: no working sandbox here "
                              f"({capabilities().summary()}): see ct-referee sandbox, or set "
                              f"sandbox: none")
        if remote:  # each worker checks its own; no snapshot travels (yet)
            hidden = check_entrant_folders(config)
        if not remote and not all(capabilities().cgroup_ok(c)
                                  for c in ("memory", "pids", "cpu")):
            reporter.warn(f"sandbox without every cgroup: {capabilities().summary()} "
                          f"(see ct-referee sandbox)")
    with contextlib.ExitStack() as stack:
        stack.enter_context(private_files())  # records and logs 0600 while playing
        seals = None
        if config.sandbox is not SandboxMode.NONE and not remote:
            check_bot_uids(config)
            store = stack.enter_context(Store())
            seals = seal(config, store, reporter.warn)
            hidden = sealed_hidden(config, seals)
        where = stack.enter_context(contextlib.closing(runner or
                                                       local_runner(config.concurrency)))
        return _run(config, fresh=fresh, deal_secret=deal_secret, reporter=reporter,
                    runner=where, stop=stop, hidden=hidden, remote=remote, pages=pages,
                    seals=seals)


def _run(config: Config, *, fresh: bool, deal_secret: bytes | None, reporter: Reporter,
         runner: Runner, stop: CancelSignal, hidden: dict[str, tuple[Path, ...]],
         remote: bool, pages: Callable[[Path], Pages] | None, seals: Seals | None) -> Outcome:
    secret = prepare_output(config, fresh=fresh, deal_secret=deal_secret)
    make_private(config.output)
    course = config.course(secret=secret)
    out = config.output
    names = [e.name for e in config.entrants]
    kept: dict[str, _Kept] = {}
    kept_faults: dict[str, list[Any]] = {}  # of the matches kept from earlier runs

    def accept(line: dict[str, Any]) -> bool:
        match_id = line.get("id")
        if not isinstance(match_id, str) or not MatchId.is_one(match_id):
            return False
        try:
            result = MatchResult.from_json(line)
            record = read_record(out / "games" / f"{match_id}.json")
            hands = _hand_scores(record)
        except (KeyError, TypeError, ValueError, RecordError):
            return False
        ok = (record.get("id") == match_id
              and list(record.get("totals", ())) == list(result.totals)
              and all(len(h) == len(result.players) for h in hands))
        if ok:
            kept[match_id] = _Kept(result, hands)  # a later line for the same id wins
            kept_faults[match_id] = line.get("faults") or []
            for name, digest in zip(record.get("players", ()), record.get("snapshots") or (),
                                    strict=False):
                if seals is not None and name in seals.by_name and \
                        digest != seals.by_name[name].snapshot.digest:
                    changed[name] = changed.get(name, 0) + 1
        return ok

    changed: dict[str, int] = {}  # kept matches each entrant played with other code
    journal = Journal(out / "results.jsonl")
    journal.load(accept)
    for name, count in changed.items():
        reporter.warn(f"entrant {name!r}: its folder changed since {count} kept match(es) were "
                      f"played (their records name another snapshot digest): they stay as "
                      f"played; --fresh plays everything again with the code as it is now")
    planned: dict[int, list[tuple[int, tuple[int, ...]]]] = {}

    def accept_round(line: dict[str, Any]) -> bool:
        try:
            r = int(line["round"])
            groups = [(int(g), tuple(names.index(str(n)) for n in members))
                      for g, members in line["groups"]]
        except (KeyError, TypeError, ValueError):
            return False
        planned[r] = groups
        return True

    rounds_log = Journal(out / "rounds.jsonl")
    rounds_log.load(accept_round)
    # A tournament's ``auto`` requires a sandbox: a worker without one refuses (bwrap).
    mode = config.sandbox.strict()
    if remote:  # the machine that spawns the bots checks it
        sandbox = f"{mode} (resolved on each worker)"
    else:
        sandbox = f"bwrap ({capabilities().summary()})" if mode is SandboxMode.BWRAP else "none"
    if seals is not None:
        sandbox += f"; {uid_isolation(config)}; {seals.summary}"
    entrants = [dataclasses.replace(e.entrant(), hidden=hidden.get(e.name, ()),
                                    sealed=seals.by_name[e.name] if seals else None)
                for e in config.entrants]
    digests = [seals.by_name[n].snapshot.digest if seals else None for n in names]
    played = done = 0
    limit = FaultLimit(names, config.max_faults)
    audit = Audit(names, bound=config.variant.hand_total,
                  per_set=set_size(config.players, config.seatings))
    if not remote:  # the bots start on the workers, not here
        limit.left_out.update(_preflight(config, entrants, mode, reporter, stop))
    refresher = pages(out) if pages is not None else _NoPages()

    def job(spec: MatchSpec) -> MatchJob:
        return MatchJob(spec, tuple(limit.entrant(i, entrants[i]) for i in spec.seats),
                        config.variant, config.target, config.limits, mode, config.name,
                        logs_dir=out / "logs" / spec.id, hidden=(out,))

    def on_done(job: MatchJob, record: RecordDict) -> None:
        nonlocal done, played
        spec = job.spec
        path = out / "games" / f"{spec.id}.json"
        if seals is not None:
            record["snapshots"] = [digests[i] for i in spec.seats]
        write_record(record, path)
        line = {"id": spec.id, "players": record["players"], "totals": record["totals"],
                "ranks": record["ranks"], "faults": record["faults"],
                "hands": len(record["hands"]), "record": f"games/{spec.id}.json"}
        journal.append(line)
        result = MatchResult.from_json(line)
        course.add(spec, result, _hand_scores(record))
        audit.add(spec, _hand_scores(record))
        done += 1
        played += 1
        reporter.match_done(spec, result, done, course.table)
        for i in limit.count(spec.id, spec.seats, record["faults"]):
            reporter.warn(f"{names[i]} is disqualified {limit.disqualified[i]}: the referee's "
                          f"fallback plays its seat in the matches still to start")
        refresher.match_done(line, course.table)

    def on_fault(job: MatchJob, fault: FaultDict, name: str) -> None:
        reporter.fault(job.spec, name, fault)

    done = len(kept)  # counted as played already; a line that turns out not to fit is not
    reporter.started(config, config.total() or 0, done, sandbox)
    try:
        while not stop.is_set():
            specs = course.next_round(planned.get(course.round + 1))
            if not specs:
                break
            if config.format == "ladder" and course.round not in planned:
                # as planned now: a resume plays it the same, even with entrants added since
                groups = {s.group: [names[i] for i in sorted(s.seats)] for s in specs}
                rounds_log.append({"round": course.round, "groups": list(groups.items())})
            missing = []
            for spec in specs:
                old = kept.pop(spec.id, None)
                if old is not None and list(old.result.players) == [names[i] for i in spec.seats]:
                    course.add(spec, old.result, old.hands)
                    audit.add(spec, old.hands)
                    limit.count(spec.id, spec.seats, kept_faults.get(spec.id, []))
                else:
                    done -= old is not None
                    missing.append(spec)
            if missing:
                # each group's seatings in an order drawn from the deal secret (the audit)
                play_jobs(runner, (job(spec) for spec in play_order(missing)), on_done, stop,
                          on_fault)
            if not course.complete():
                break
    except BaseException:
        refresher.finish()
        raise
    finally:
        journal.close()
        rounds_log.close()
    if course.stopped is None:
        refresher.finish()
        return Outcome(config.total(), done, played, None)
    standings = course.standings()
    pairs = course.pairs()
    questions = course.questions() if config.format == "gauntlet" else None
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


def _preflight(config: Config, entrants: Sequence[Entrant], sandbox: SandboxMode,
               reporter: Reporter, stop: CancelSignal) -> dict[int, str]:
    """Starts each entrant once (``preflight`` not ``off``), reports each that did not start,
    and returns those to leave out (``leave-out``), with why."""
    if config.preflight is Preflight.OFF:
        return {}
    wanted = list(range(len(entrants)))
    try:
        launcher = Launcher.resolve(sandbox, config.limits)
        flights = preflight([entrants[i] for i in wanted], limits=config.limits,
                            launcher=launcher, logs_dir=config.output / PREFLIGHT,
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

