"""A tournament's report: ``report/`` in its output folder, one fixed viewer
(:mod:`referee.web.report_page`) over data files written beside it (``docs/report.md``, "The
files"), opened from the file system or any static web server, or served
(:mod:`referee.web.serve`: ``--serve``).

While a tournament runs, :class:`Refresher` (the tournament's
:class:`~referee.tournament.run.Pages` hook) keeps it current from the journal lines the
coordinator hands it; ``ct-referee report`` (:func:`build`) rebuilds it from the folder's files.
A match shows once every seating of its duplicate set has ended (:mod:`referee.web.sets`).
Nothing in the folder is trusted to be well formed.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import yaml

from referee.protocol.escape import escape_controls
from referee.records.record import RecordDict, RecordError, read_record, write_atomic
from referee.records.replay import check_replayable
from referee.tournament.output import JournalLine, OutputFolder
from referee.tournament.ratings import RatingConfig, Standings
from referee.tournament.run import Pages
from referee.web.cluster_faults import cluster_faults
from referee.web.folder import (
    PROVISIONAL,
    ROWS_FILE,
    Summary,
    group_data,
    hand_bound,
    interval_confidence,
    page_data,
    standings_rows,
)
from referee.web.pace import PAGE_S, SHARE
from referee.web.replay_html import ASSETS as VIEWER
from referee.web.replay_html import (
    SHARED_PAGE,
    ReplayPage,
    linked_page,
    match_steps,
    replay_script,
    replay_script_of_page,
    script_json,
    shared_page,
)
from referee.web.report_page import ASSETS
from referee.web.sets import Counts, SetGate, set_size_of

REPORT = "report"
"""The report's folder inside the output folder."""
ALL_PAGES = 999
"""A tournament of at most this many matches gets every match's replay page when it ends (a page
is about 60 KB and 9 ms of CPU: 60 MB and some 10 s at this size; the matches are those the
summary holds, less than one chunk of the match list); a larger one's pages are drawn by
``--serve`` on demand."""
CHART_SERIES = 10
"""Entrants drawn in the rating chart (the top of the table)."""
CHART_POINTS = 300
"""At most this many points per line of the rating chart."""
DETAILS = 200
"""Entrants per file of details (``entrant/<k>.js``: opponents, faults)."""
BUDGET_S = 0.001
"""The report's CPU a match on the coordinator's thread and its own (a refresh waits until it
fits; see :class:`Refresher`)."""
MAX_WAIT_S = 120.0
"""A running tournament's page is at most this old (beyond the budget: a slow tournament has
the CPU to spare)."""
REPLAYS = "replays"
"""The folder of each match's data for the one replay page (``report/replays/<id>.js``,
:func:`~referee.web.replay_html.replay_script`: about a sixth of a page of its own)."""
REPLAY_SLICE_S = 0.2
"""While a tournament runs, the report's thread writes the replays of the matches saved since
for at most this long after each refresh (the rest wait for the next, and the run's end)."""
TAIL_BYTES = 600
"""The end of a fault example's stderr shown beside it."""
HEARTBEAT_S = 5.0
"""A running tournament rewrites ``report/alive.js`` (its sign of life: the time) this often,
whether or not a match finished."""
DEAD_AFTER_S = 30.0
"""A page whose run's last sign of life is older than this says the run stopped (killed, or
its machine went down) and stops reloading: six missed heartbeats."""
ALIVE = "alive.js"
"""The run's sign of life in ``report/``: ``window.CT_ALIVE = {"at": ..., "every": ...,
"dead_after": ...}`` while a run writes it; ``null`` where no run ever did."""

__all__ = ["ALIVE", "ALL_PAGES", "DEAD_AFTER_S", "HEARTBEAT_S", "REPORT", "Refresher", "Report",
           "ReportError", "build", "check_folder", "mark_stopped"]


class ReportError(ValueError):
    """A folder that is not a tournament's output folder."""


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _yaml(path: Path) -> Any:
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, yaml.YAMLError):
        return None


def _rating(config: Any, standings: Any) -> RatingConfig:
    for source in (config, standings):
        values = source.get("rating") if isinstance(source, dict) else None
        if isinstance(values, dict):
            try:
                mu, sigma, beta, tau, draw = (float(values[k]) for k in (
                    "mu", "sigma", "beta", "tau", "draw_probability"))
                per = "match" if values.get("per") == "match" else "set"
                return RatingConfig(mu, sigma, beta, tau, draw, per)
            except (KeyError, TypeError, ValueError):
                continue
    return RatingConfig()


def check_folder(out: Path) -> None:
    """:raises ReportError: if ``out`` is not a tournament's output folder."""
    if not out.is_dir():
        raise ReportError(f"{str(out)!r} is not a folder")
    paths = OutputFolder(out)
    if not paths.marker.is_file() and not paths.config.is_file():
        raise ReportError(f"{str(out)!r} is not a tournament's output folder "
                          "(no .ct-referee.json or tournament.yaml)")


def journal_lines(out: Path) -> Iterator[dict[str, Any]]:
    """The lines of ``results.jsonl`` that parse as JSON objects (others skipped)."""
    try:
        with open(OutputFolder(out).results, "rb") as f:
            for raw in f:
                try:
                    line = json.loads(raw)
                except ValueError:
                    continue
                if isinstance(line, dict):
                    yield line
    except OSError:
        return


class Report:
    """The report of one output folder, kept from journal lines (:meth:`add`) and written
    (:meth:`write`) as often as wanted: each write costs about the same whatever the number of
    matches (the full chunks of the match list are written once)."""

    def __init__(self, out: Path) -> None:
        self.out, self.paths = out, OutputFolder(out)
        self.root = self.paths.report
        self.summary = Summary()
        self.config = _yaml(self.paths.config)
        self.name = str((self.config or {}).get("name") or out.name) \
            if isinstance(self.config, dict) else out.name
        self.rows: list[dict[str, Any]] = []
        self._recount = False
        """Whether the rows' counting columns are to be the sets' that ended (:meth:`snapshot`
        of a running table: counted as :meth:`write` writes)."""
        self.history: list[tuple[int, dict[str, float]]] = []
        self.pages: set[str] = set()
        self.all_pages = False
        self.examples: dict[str, dict[str, Any]] = {}
        self.pending: list[str] = []
        """The matches added whose replay data (:data:`REPLAYS`) is not written yet."""
        self.gate = SetGate(set_size_of(out, self.paths.marker))
        """The lines of sets under way, held until the set ends (:mod:`referee.web.sets`)."""
        self.counts = Counts()
        """The table's counting columns over the lines taken (the sets that ended)."""
        self._assets = False

    # -- input ------------------------------------------------------------------------------

    def add(self, line: dict[str, Any]) -> list[dict[str, Any]]:
        """One journal line, held until its duplicate set has ended (nothing of a set shows
        before: its later seatings play the same deals); returns the lines taken now (its
        set's, once it ended). A malformed or repeated line is skipped."""
        taken = self.gate.add(line)
        for one in taken:
            if self.summary.add(one):
                self.counts.add(one)
                self.pending.append(str(one["id"]))
        return taken

    def write_replays(self, budget_s: float | None = None) -> int:
        """Writes the replay data of the pending matches (:data:`REPLAYS`; one already there is
        kept), for at most ``budget_s`` seconds (``None``: all of them); returns how many are
        still pending."""
        start = time.monotonic()
        folder = self.root / REPLAYS
        folder.mkdir(parents=True, exist_ok=True)
        done = 0
        for match_id in self.pending:
            if budget_s is not None and time.monotonic() - start > budget_s:
                break
            done += 1
            path = folder / f"{match_id}.js"
            with contextlib.suppress(OSError):
                if path.stat().st_size:
                    continue
            script = _replay_of(self.out, match_id)
            if script is not None:
                with contextlib.suppress(OSError):
                    # a view (`ct-referee report` writes it again): not synced
                    write_atomic(path, script, sync=False)
        del self.pending[:done]
        return len(self.pending)

    def snapshot(self, table: Standings, *, whole: bool = False) -> bool:
        """The running table's rows, and a point of the rating chart, with nothing of a set
        under way (its totals, wins or faults would tell its later seatings about their deals):
        a table that rates whole sets (``per: set``) shows its ratings, and the counting
        columns of the sets that ended (:class:`~referee.web.sets.Counts`); one that rates
        each match only where it holds whole sets (``whole``, or a running tournament's, which
        rates the schedule's finished prefix: its sets are whole once its length is a multiple
        of the set's). ``False`` (the last rows kept) where it does not."""
        size = self.gate.size
        per_set = table.config.per == "set"
        if not whole and not per_set and (size is None or table.matches % size):
            return False
        rows = table.standings()
        self.rows = [r.to_json() for r in rows]
        self._recount = not whole
        point = (table.matches, {r.name: round(r.mu, 2) for r in rows[:3 * CHART_SERIES]})
        if self.history and self.history[-1][0] == table.matches:  # no match rated since
            self.history[-1] = point
        else:
            self.history.append(point)
        if len(self.history) > 2 * CHART_POINTS:  # thin out: every other point, the last kept
            self.history = self.history[::2] if len(self.history) % 2 else \
                self.history[1::2]
        return True

    def load_chart(self) -> bool:
        """The rating chart's points as the last ``data.js`` had them (a resumed run's, a
        rebuild's: they cannot be had again without rating every match); ``False`` if none."""
        try:
            text = (self.root / "data.js").read_text(encoding="utf-8")
            chart = json.loads(text[text.index("{"):text.rindex("}") + 1])["chart"]
            points = [(int(x), {str(n): mus[k] for n, mus in chart["series"]
                                if mus[k] is not None})
                      for k, x in enumerate(chart["xs"])]
        except (OSError, ValueError, KeyError, TypeError, IndexError):
            return False
        self.history = points
        return bool(points)

    # -- output -----------------------------------------------------------------------------

    def write(self, *, final: bool = False) -> Path:
        """Writes ``data.js``, the match list's new chunks and the new fault examples' pages
        (``final``: every page of a small tournament and the per-entrant crosstable too);
        returns the index's path."""
        self.root.mkdir(parents=True, exist_ok=True)
        if not self._assets:
            for name, text in (ASSETS | VIEWER | {SHARED_PAGE: shared_page()}).items():
                _write_if_changed(self.root / name, text)
            if not (self.root / ALIVE).exists():  # no run has said it is alive here yet
                write_atomic(self.root / ALIVE, "window.CT_ALIVE = null;\n")
            self._assets = True
        standings = _json(self.paths.standings_json)
        if not isinstance(standings, dict) or not isinstance(standings.get("standings"), list):
            standings = None
        if standings is not None:
            self.rows = [r for r in standings["standings"] if isinstance(r, dict)]
            self._recount = False
        elif self._recount:
            self.rows = [self.counts.apply(r) for r in self.rows]
        self._write_chunks()
        if final and self.summary.count <= ALL_PAGES:
            for m in self.summary.matches:
                if m[0] not in self.pages:
                    self._page(m[0])
            self.all_pages = True
        left_out = self._left_out(standings)
        config = self.config if isinstance(self.config, dict) else None
        table = standings_rows(self.rows, data_pairs(standings), left_out,
                               bound=hand_bound(config), confidence=interval_confidence(config))
        data = page_data(self.summary, name=self.name, rows=self.rows, standings=standings,
                         config=config, preflight=self._preflight(standings),
                         chart=self._chart(left_out), pages="all",
                         files=tuple(self._files(standings)), examples=self.examples,
                         table=table)
        for group in data["faults"]:  # the examples shown get their page (a bounded number)
            for ex in group["examples"]:
                if f"{ex['id']}/{ex['seat']}" not in self.examples:
                    self._example(ex)
                    ex.update(self.examples[f"{ex['id']}/{ex['seat']}"])
        data["cluster_faults"] = cluster_faults(self.out)
        data["pages"] = "all" if self.all_pages else sorted(self.pages)
        if final:
            data["details"] = self._write_details(data["names"])
        self._write_rows(table)
        data["written"] = round(time.time())
        write_atomic(self.root / "data.js", f"window.CT_REPORT = {script_json(data)};\n")
        if final and not self.all_pages:  # every match's replay, however many (the page is
            self.write_replays()            # final already); a small one's pages have it
        return self.root / "index.html"

    def _write_chunks(self) -> None:
        summary = self.summary
        if summary.count:
            (self.root / "matches").mkdir(exist_ok=True)
        while (full := summary.take_chunk()) is not None:
            k, rows = full
            write_atomic(self.root / "matches" / f"{k}.js",
                         f"ctMatches({k}, {script_json(rows)});\n")
        if summary.matches:
            k = summary.chunked
            write_atomic(self.root / "matches" / f"{k}.js",
                         f"ctMatches({k}, {script_json(summary.matches)});\n")

    def _write_details(self, names: list[str]) -> dict[str, Any]:
        """Each entrant's results against every opponent and its fault groups, in files of
        :data:`DETAILS` entrants (``entrant/<k>.js``: ``ctEntrant(k, {name: {"against": [...],
        "faults": [...]}})``), in the order of ``names``."""
        (self.root / "entrant").mkdir(exist_ok=True)
        groups = self.summary.groups_by_name()
        for k in range(math.ceil(len(names) / DETAILS)):
            shard = {n: {"against": self.summary.opponents(n),
                         "faults": [group_data(g, self.examples) for g in groups.get(n, ())]}
                     for n in names[k * DETAILS:(k + 1) * DETAILS]}
            write_atomic(self.root / "entrant" / f"{k}.js",
                         f"ctEntrant({k}, {script_json(shard)});\n")
        return {"size": DETAILS}

    def _write_rows(self, rows: list[list[Any]]) -> None:
        if len(rows) <= ROWS_FILE:
            return
        (self.root / "rows").mkdir(exist_ok=True)
        for k in range(math.ceil(len(rows) / ROWS_FILE)):
            part = rows[k * ROWS_FILE:(k + 1) * ROWS_FILE]
            write_atomic(self.root / "rows" / f"{k}.js", f"ctRows({k}, {script_json(part)});\n")

    def paged(self, line: dict[str, Any]) -> None:
        """Counts the replay page of ``line``'s match as made where its page file is (written
        where the match ran: :class:`ReplayPage`)."""
        match_id = str(line.get("id"))
        if (self.root / "games" / f"{match_id}.html").is_file():
            self.pages.add(match_id)

    def _page(self, match_id: str) -> dict[str, Any] | None:
        """Writes the match's replay page once; returns its record (``None``: unreadable)."""
        try:
            record = read_record(self.paths.saved_record(match_id))
            check_replayable(record, strict=True)
            if match_id not in self.pages:
                page = _own_page(record)
                (self.root / "games").mkdir(exist_ok=True)
                write_atomic(self.root / "games" / f"{match_id}.html", page)
                self.pages.add(match_id)
        except (RecordError, OSError, ValueError, KeyError, TypeError, IndexError):
            return None
        return dict(record)

    def _example(self, ex: dict[str, Any]) -> None:
        """A fault example's page (at the step of the fault), stderr path and its end."""
        key = f"{ex['id']}/{ex['seat']}"
        if key in self.examples:
            return
        extra: dict[str, Any] = {}
        record = self._page(ex["id"])
        if record is not None:
            try:
                steps = match_steps(record, compact=True)  # type: ignore[arg-type]
                step = next((s for s in steps if s.get("fault") and s.get("seat") == ex["seat"]),
                            None)
                if step is not None:
                    extra["hand"], extra["turn"] = step["hand"], step["turn"]
            except (ValueError, KeyError, TypeError, IndexError):
                pass
        try:
            if "/" in str(ex["name"]) or str(ex["name"]).startswith("."):
                raise ValueError("not a file name")
            log = Path("logs") / ex["id"] / f"{ex['seat']}-{ex['name']}.stderr"
            with open(self.out / log, "rb") as f:
                f.seek(0, os.SEEK_END)
                size = f.tell()
                f.seek(max(0, size - TAIL_BYTES))
                tail = f.read().decode("utf-8", "replace")
            extra["log"] = log.as_posix()
            if tail.strip():  # the bot's bytes: control characters escaped, as on a terminal
                extra["tail"] = ("…" if size > TAIL_BYTES else "") + "\n".join(
                    escape_controls(line) for line in tail.rstrip().splitlines())
        except (OSError, KeyError, TypeError, ValueError):
            pass
        self.examples[key] = extra

    def _preflight(self, standings: dict[str, Any] | None) -> dict[str, str]:
        """The pre-flight stderr of each entrant left out or with a startup fault."""
        names = set(self._left_out(standings)) | {
            g.name for g in self.summary.faults.values() if g.kind == "startup"}
        return {n: f"preflight/{n}.stderr" for n in sorted(map(str, names))
                if (self.paths.preflight / f"{n}.stderr").is_file()}

    def _left_out(self, standings: dict[str, Any] | None) -> dict[str, str]:
        """The entrants left out by the pre-flight, and why (the standings', else the
        journal's: known from the first match of each)."""
        said = (standings or {}).get("left_out")
        return dict(self.summary.left_out) | ({str(k): str(v) for k, v in said.items()}
                                              if isinstance(said, dict) else {})

    def _chart(self, left_out: dict[str, str]) -> dict[str, Any] | None:
        if len(self.history) < 2:
            return None
        names = [n for n in (str(r.get("name")) for r in self.rows)
                 if n not in left_out][:CHART_SERIES]  # who played
        xs = [x for x, _ in self.history]
        return {"xs": xs, "series": [[n, [mus.get(n) for _, mus in self.history]]
                                     for n in names]}

    def _files(self, standings: dict[str, Any] | None) -> list[str]:
        files = []
        if standings is not None:
            files += ["standings.json", "standings.csv"]
        if self.summary.count:
            files.append("results.jsonl")
        return files


def data_pairs(standings: dict[str, Any] | None) -> list[dict[str, Any]]:
    """``standings.json``'s pairs (none before it is written)."""
    pairs = (standings or {}).get("pairs")
    return [p for p in pairs if isinstance(p, dict)] if isinstance(pairs, list) else []


def _write_if_changed(path: Path, text: str) -> None:
    try:
        if path.read_text(encoding="utf-8") == text:
            return
    except OSError:
        pass
    write_atomic(path, text)


def build(out: Path, *, final: bool = True) -> Path:
    """Rebuilds the report from the folder's files (``ct-referee report``): the journal, the
    standings (rated here from the journal while there are none yet), the chart (the last
    ``data.js``'s once the standings are final, else rated here). Returns the index's path.

    :raises ReportError: if ``out`` is not a tournament's output folder.
    """
    check_folder(out)
    report = Report(out)
    names = [str(e["name"]) for e in (report.config or {}).get("entrants") or ()
             if isinstance(e, dict) and "name" in e] if isinstance(report.config, dict) else []
    lines = [taken for line in journal_lines(out) for taken in report.add(line)]
    known = set(names)
    names += [n for n in report.summary.names if n not in known]
    standings = _json(OutputFolder(out).standings_json)
    if isinstance(standings, dict) and report.load_chart():
        return report.write(final=final)  # the final table and its chart: nothing to rate
    table = Standings(names, _rating(report.config, standings))
    step = max(1, math.ceil(report.summary.count / CHART_POINTS))
    rated = 0
    for line in lines:
        try:
            table.add(JournalLine.parse(line).result)
        except ValueError:
            continue
        rated += 1
        if rated % step == 0:
            report.snapshot(table, whole=True)
    report.snapshot(table, whole=True)  # only the lines of sets that ended
    return report.write(final=final)


class Refresher(Pages):
    """Keeps a running tournament's report current (the tournament's
    :class:`~referee.tournament.run.Pages` hook).

    On the coordinator's thread, :meth:`match_done` appends the journal line to a list and, when
    a refresh is due, snapshots the running table; a thread of its own then adds the lines to
    the aggregates and writes the data files (:class:`Report`). A refresh is due every
    ``interval`` seconds at most, and only once it costs at most :data:`BUDGET_S` per match
    waiting (what the last snapshot and write took, divided by the matches since), or
    :data:`MAX_WAIT_S` went by; and the interval grows to 20 times that cost. So the report
    costs the coordinator about :data:`BUDGET_S` of CPU a match at most, however many entrants,
    and at most a twentieth of its time. Lines still waiting when no match ends for a while (a
    duplicate set shows once its last seating ends: the next match may take minutes) are written
    by the heartbeat's thread, every :data:`HEARTBEAT_S`, with the table as last seen."""

    def __init__(self, out: Path, *, interval: float = PAGE_S) -> None:
        self.out = out
        self.interval = interval
        self.report = Report(out)
        self._lines: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        """Guards the lines waiting and whether the report's thread is busy (the coordinator's
        thread and the heartbeat's both hand lines over)."""
        self._next = time.monotonic()  # the first match shows at once
        self._last = self._next
        self._cost = 0.0
        self._took = 0.0
        self._ended = threading.Event()
        self._beat()  # before any write of the page, which makes a null one where there is none
        self._heart = threading.Thread(target=self._beating, name="report-heartbeat",
                                       daemon=True)
        self._heart.start()
        self._pool: ThreadPoolExecutor | None = ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="report")
        self._busy = True  # until the journal is read
        self._table: Standings | None = None
        self._paged = False
        self._pool.submit(self._load)

    def _beat(self) -> None:
        """Writes the run's sign of life (:data:`ALIVE`): a page whose run was killed (SIGKILL,
        a machine gone) sees it age and says so, instead of "live" for ever."""
        beat = {"at": round(time.time(), 1), "every": HEARTBEAT_S, "dead_after": DEAD_AFTER_S}
        with contextlib.suppress(OSError):  # a view: a full disk stops no tournament
            write_atomic(self.report.root / ALIVE, f"window.CT_ALIVE = {json.dumps(beat)};\n",
                         sync=False)  # rewritten every few seconds: a crash may lose it

    def _beating(self) -> None:
        """:meth:`_beat` every :data:`HEARTBEAT_S` until the run ends (:meth:`finish`)."""
        while not self._ended.wait(HEARTBEAT_S):
            self._beat()
            self._flush()

    def _flush(self) -> None:
        """Hands the lines waiting to the report's thread, where a refresh is due and no match
        ended since (the table is not snapshotted here: it is the coordinator's)."""
        with self._lock:
            now = time.monotonic()
            if not self._lines or self._busy or self._pool is None or now < self._next:
                return
            lines, self._lines = self._lines, []
            self._busy = True
            self._next = now + self.interval
            pool = self._pool
        with contextlib.suppress(RuntimeError):  # shut down meanwhile: finish writes them
            pool.submit(self._quietly, lines, False)

    def replay_page(self) -> ReplayPage:
        """Each match's replay page, written by whoever plays it (see :class:`ReplayPage`):
        the report counts those of this run's matches as made (the final write makes the
        rest)."""
        self._paged = True
        return ReplayPage(self.report.root)

    def match_done(self, line: dict[str, Any], table: Standings) -> None:
        with self._lock:
            self._lines.append(line)
            self._table = table
            now = time.monotonic()
            if now < self._next or self._busy or self._pool is None:
                return
            if len(self._lines) * BUDGET_S < self._cost and now < self._last + MAX_WAIT_S:
                return
            lines, self._lines = self._lines, []
            self._busy = True
            pool = self._pool
        start = time.thread_time()
        with contextlib.suppress(ValueError, KeyError, TypeError):
            self.report.snapshot(table)
        self._cost = self._took + time.thread_time() - start
        self._last = now
        self._next = now + max(self.interval, SHARE * self._cost)
        pool.submit(self._quietly, lines, False)

    def _load(self) -> None:
        """A resumed run's matches: the journal as it is at the start (on the report's thread;
        a line read here and handed over by :meth:`match_done` too counts once)."""
        self.report.load_chart()
        self._quietly(list(journal_lines(self.out)), False, True)

    def finish(self) -> None:
        self._ended.set()
        self._heart.join()
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.submit(int).result()  # the write under way, if any, is over
            lines, self._lines = self._lines, []
            with contextlib.suppress(ValueError, KeyError, TypeError):
                if self._table is not None:
                    self.report.snapshot(self._table)
            pool.submit(self._quietly, lines, True).result()
            pool.shutdown()

    def _quietly(self, lines: list[dict[str, Any]], final: bool, loaded: bool = False) -> None:
        """Adds ``lines`` and writes (``loaded``: the journal as it was at the start: a
        resumed run's matches; repeats of them are skipped, the rest needs no check)."""
        start = time.thread_time()
        replays = False
        try:  # the report is a view: the results are what count, and they are saved
            for line in lines:
                for taken in self.report.add(line):
                    if not loaded and self._paged:
                        self.report.paged(taken)
            if loaded:
                self.report.summary.remember = False
                if not lines:
                    return
            self.report.write(final=final)
            replays = not final
        except (OSError, ValueError, KeyError, TypeError, IndexError):
            pass
        finally:
            self._took = time.thread_time() - start
            if replays:  # the replays of the matches saved since, a slice of time at most
                with contextlib.suppress(OSError):
                    self.report.write_replays(REPLAY_SLICE_S)
            with self._lock:
                self._busy = False


def mark_stopped(out: Path, *, why: str, done: int | None, total: int | None,
                 resume: str) -> bool:
    """Says on the report's last ``data.js`` that the run stopped before its end (``why``: the
    words, ``interrupted`` for Ctrl-C), how far it got and the command that resumes it: the
    page then says so instead of "provisional", and stops reloading itself. A resumed run's
    first write makes it live again. ``False`` where there is no such page (none yet, or a
    final one)."""
    path = out / REPORT / "data.js"
    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text[text.index("{"):text.rindex("}") + 1])
    except (OSError, ValueError):
        return False
    if not isinstance(data, dict) or data.get("final"):
        return False
    data["halted"] = {"why": why, "done": done, "total": total, "resume": resume,
                      "at": round(time.time())}
    if isinstance(data.get("headline"), str):
        data["headline"] = data["headline"].replace(
            PROVISIONAL, f" (provisional: the run was {why} before its end)")
    write_atomic(path, f"window.CT_REPORT = {script_json(data)};\n")
    return True


def _drawn(out: Path, match_id: str, draw: Callable[[RecordDict], str]) -> str | None:
    """``draw`` of the match's saved record, checked under the rules (``None``: it cannot be
    replayed)."""
    try:
        record = read_record(OutputFolder(out).saved_record(match_id))
        check_replayable(record, strict=True)
        return draw(record)
    except (RecordError, OSError, ValueError, KeyError, TypeError, IndexError):
        return None


def _own_page(record: RecordDict) -> str:
    """A match's page of its own in the report (``games/<id>.html``)."""
    return linked_page(record, assets="../", back="../index.html")


def _replay_of(out: Path, match_id: str) -> str | None:
    """A match's data for the one replay page (``replays/<id>.js``): from its page of its own
    where there is one (``games/<id>.html``: the worker that played the match wrote it, with
    the same data; no second replay under the rules), else from its record (``None``: it
    cannot be replayed). A page older than the record (an earlier attempt's, left where the
    last attempt's page could not be written) is not the match that counted: the record then."""
    folder = OutputFolder(out)
    try:
        recorded = folder.saved_record(match_id).stat().st_mtime_ns
    except OSError:
        recorded = 0
    with contextlib.suppress(OSError, UnicodeDecodeError):
        path = folder.report / "games" / f"{match_id}.html"
        if path.stat().st_mtime_ns >= recorded:
            script = replay_script_of_page(path.read_text("utf-8"), match_id)
            if script is not None:
                return script
    return _drawn(out, match_id, replay_script)
