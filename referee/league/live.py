"""The league's page and standings kept current (:class:`LivePage`): the coordinator hands
over what they show when a write is due (:class:`~referee.web.pace.Throttle`: every few seconds
at most, a twentieth of the time at most); a thread of its own draws and writes them atomically:
``report/index.html`` and ``report/league.json`` (the page and its data), the replays of the
sets finished since (``report/replays/<id>.js`` for the tournament report's one replay page,
``report/replay.html``, written once), their rows appended to the lists of every match
(``report/matches.html``, ``report/authors/<name>.html``), and ``standings.json`` and
``standings.csv`` in the league's folder. Each file is a view: a full disk stops no league.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from referee.league.journal import LeagueFolder
from referee.league.page import list_head, match_row, render
from referee.records.record import RecordError, read_record, write_atomic
from referee.records.replay import check_replayable
from referee.web.pace import Throttle
from referee.web.replay_html import ASSETS, SHARED_PAGE, replay_script, shared_page

__all__ = ["REPLAYS", "REPLAY_SLICE_S", "LivePage", "standings_csv", "write_page"]

REPLAYS = "replays"
"""The folder of each match's data for the one replay page (``report/replays/<id>.js``)."""
MATCHES = "matches.html"
"""The list of every finished match, in ``report/``."""
AUTHORS = "authors"
"""The folder of each author's list of its matches, in ``report/``."""
REPLAY_SLICE_S = 0.2
"""While the league plays, each write spends at most this long on replays (the rest wait)."""
COLUMNS = ("rank", "name", "author", "version", "mu", "sigma", "score", "sets", "matches",
           "wins", "points_per_hand", "faults", "active", "why", "p_above_next",
           "verdict_next", "diff_next", "low_next", "high_next", "sets_next")
"""``standings.csv``'s columns: the versions playing ranked, then those retired."""


def write_page(folder: Path, data: dict[str, Any]) -> None:
    """Writes ``index.html`` and ``league.json`` into ``folder`` (made if missing)."""
    folder.mkdir(parents=True, exist_ok=True)
    data = dict(data, updated=time.strftime("%Y-%m-%d %H:%M:%S"))
    write_atomic(folder / "league.json", json.dumps(data, separators=(",", ":")), sync=False)
    write_atomic(folder / "index.html",  # a name no UTF-8 can say, written as an escape
                 render(data).encode("utf-8", "backslashreplace"), sync=False)


def standings_csv(rows: list[dict[str, Any]]) -> str:
    """The page's rows as ``standings.csv`` (:data:`COLUMNS`)."""
    buf = io.StringIO()
    out = csv.writer(buf, lineterminator="\n")
    out.writerow(COLUMNS)
    rank = 0
    for row in rows:
        rank += bool(row["active"])
        pair = row.get("next") or {}
        cells = {**row, "rank": rank if row["active"] else "",
                 **{f"{k}_next": pair.get(k) for k in ("verdict", "diff", "low", "high",
                                                       "sets")}}
        out.writerow(["" if cells.get(c) is None else cells[c] for c in COLUMNS])
    return buf.getvalue()


def _standings_json(data: dict[str, Any]) -> str:
    rows = data.get("rows", [])
    doc = {"league": data.get("name"), "playing": bool(data.get("live")),
           "matches": data.get("matches", 0), "sets": data.get("sets", 0),
           "updated": time.strftime("%Y-%m-%d %H:%M:%S"),
           "standings": [{k: v for k, v in r.items() if k != "history"}
                         for r in rows if r["active"]],
           "retired": [{k: v for k, v in r.items() if k != "history"}
                       for r in rows if not r["active"]]}
    return json.dumps(doc, indent=1) + "\n"


class LivePage:
    """The league's page, its replays and standings, written on a thread of their own."""

    def __init__(self, folder: LeagueFolder) -> None:
        self.folder = folder
        self.throttle = Throttle()
        self.pending: list[str] = []
        """Matches whose replay is not written yet."""
        self._pool: ThreadPoolExecutor | None = ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="league-page")
        self._busy = False
        self._took = 0.0
        self._assets = False

    def due(self) -> bool:
        """Whether the page is due a write (none under way, and its time has come)."""
        return not self._busy and self._pool is not None and self.throttle.due()

    def hand(self, data: dict[str, Any], ended: list[dict[str, Any]], *, cost: float,
             final: bool = False) -> None:
        """The page's ``data`` (``cost``: what making it took the coordinator) and the
        matches whose set finished since (their replays): written on the page's thread
        (``final``: every replay, waited for)."""
        pool = self._pool
        if pool is None:
            return
        self.throttle.took(cost + self._took)
        self._busy = True
        job = pool.submit(self._write, data, ended, final)
        if final:
            job.result()

    def close(self, data: dict[str, Any], ended: list[dict[str, Any]]) -> None:
        """The last write (every replay due), then the thread ends."""
        pool = self._pool
        if pool is None:
            return
        pool.submit(int).result()  # the write under way, if any, is over
        self.hand(data, ended, cost=0.0, final=True)
        self._pool = None
        pool.shutdown()

    def _write(self, data: dict[str, Any], ended: list[dict[str, Any]], final: bool) -> None:
        start = time.thread_time()
        try:
            with contextlib.suppress(OSError, ValueError, TypeError, KeyError):
                write_page(self.folder.report, data)
                rows = data.get("rows", [])
                write_atomic(self.folder.standings_json, _standings_json(data), sync=False)
                write_atomic(self.folder.standings_csv, standings_csv(rows), sync=False)
            with contextlib.suppress(OSError):
                self._lists(str(data.get("name", "")), ended)
            self.pending += [m["id"] for m in ended]
            with contextlib.suppress(OSError):
                self._replays(None if final else REPLAY_SLICE_S)
        finally:
            self._took = time.thread_time() - start
            self._busy = False

    def _lists(self, league: str, ended: list[dict[str, Any]]) -> None:
        """Appends the matches of the sets finished since to the list of every match
        (``report/matches.html``) and to each of their authors' (``report/authors/<name>.html``):
        a row a match, the files never read back nor written whole again."""
        if not ended:
            return
        report = self.folder.report
        (report / AUTHORS).mkdir(parents=True, exist_ok=True)
        rows: dict[Path, list[str]] = {}
        for m in ended:
            rows.setdefault(report / MATCHES, []).append(match_row(m))
            for author in m.get("authors", ()):
                rows.setdefault(report / AUTHORS / f"{author}.html", []).append(
                    match_row(m, "../"))
        for path, lines in rows.items():
            head = "" if path.exists() else \
                list_head(league, "every" if path.name == MATCHES else path.stem,
                          "" if path.name == MATCHES else "../")
            with open(path, "a", encoding="utf-8", errors="backslashreplace") as f:
                f.write(head + "\n".join(lines) + "\n")

    def _replays(self, budget_s: float | None) -> None:
        """Writes the replays due, for at most ``budget_s`` (``None``: every one)."""
        report = self.folder.report
        if not self._assets:
            report.mkdir(parents=True, exist_ok=True)
            for name, text in (ASSETS | {SHARED_PAGE: shared_page("league page")}).items():
                write_atomic(report / name, text, sync=False)
            self._assets = True
        folder = report / REPLAYS
        folder.mkdir(exist_ok=True)
        start = time.monotonic()
        done = 0
        for match_id in self.pending:
            if budget_s is not None and time.monotonic() - start > budget_s:
                break
            done += 1
            try:
                record = read_record(self.folder.saved_record(match_id))
                check_replayable(record, strict=True)
                write_atomic(folder / f"{match_id}.js", replay_script(record), sync=False)
            except (RecordError, OSError, ValueError, KeyError, TypeError, IndexError):
                continue  # no replay of a record that does not replay: its link says so
        del self.pending[:done]
