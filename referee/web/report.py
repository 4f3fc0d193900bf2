"""A tournament's report: ``report/index.html`` in its output folder, opened from the file system
or any static web server.

The page shows the standings (verdicts, faults), a crosstable of points per hand over the shared
duplicate sets, an SVG chart of each entrant's rating over the matches, each entrant's faults
with links to the stderr logs, and every match linked to its replay page
(``report/games/<id>.html``). The replay pages load one shared viewer (``report/viewer.js``,
``report/viewer.css``), so a tournament of thousands of matches stays light.

The report reads only the output folder's files (``.ct-referee.json``, ``tournament.yaml``,
``standings.json``, ``results.jsonl``, ``games/``, ``logs/``, ``preflight/``).
:func:`read_folder` and the writers are the shell; :mod:`referee.web.report_page` draws the page
from a :class:`Folder` without I/O.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import yaml

from referee.records.record import RecordDict, RecordError, read_record, write_atomic
from referee.records.replay import check_replayable
from referee.tournament.ratings import RatingConfig
from referee.web.folder import Folder, Match
from referee.web.replay_html import ASSETS, linked_page
from referee.web.report_page import index_html

REPORT = "report"
"""The report's folder inside the output folder."""

class ReportError(ValueError):
    """A folder that is not a tournament's output folder."""


def read_folder(out: Path) -> Folder:
    """Reads an output folder (nothing in it is trusted to be well formed).

    :raises ReportError: if ``out`` is not a tournament's output folder.
    """
    if not out.is_dir():
        raise ReportError(f"{str(out)!r} is not a folder")
    identity = _json(out / ".ct-referee.json")
    config = _yaml(out / "tournament.yaml")
    if not isinstance(identity, dict) and not isinstance(config, dict):
        raise ReportError(f"{str(out)!r} is not a tournament's output folder "
                          "(no .ct-referee.json or tournament.yaml)")
    ident = identity.get("identity", {}) if isinstance(identity, dict) else {}
    source = ident if isinstance(ident, dict) and ident else config
    if not isinstance(source, dict):
        source = {}
    name = str(source.get("name") or out.name)
    entrants = [str(e["name"]) for e in source.get("entrants") or ()
                if isinstance(e, dict) and "name" in e]
    standings = _json(out / "standings.json")
    if not isinstance(standings, dict) or not isinstance(standings.get("standings"), list):
        standings = None
    rating = _rating(config, standings)
    matches: list[Match] = []
    seen: set[str] = set()
    try:
        lines = (out / "results.jsonl").read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        lines = []
    for position, text in enumerate(lines):
        try:
            match = Match.from_json(json.loads(text), position)
        except (ValueError, KeyError, TypeError, AttributeError):
            continue
        if match.id not in seen:
            seen.add(match.id)
            matches.append(match)
    matches.sort(key=lambda m: m.order)
    for match in matches:
        entrants.extend(p for p in match.players if p not in entrants)
    folder = Folder(name, entrants, rating, matches, standings)
    for name in entrants:
        if (out / "preflight" / f"{name}.stderr").is_file():
            folder.preflight[name] = f"preflight/{name}.stderr"
    for match in matches:
        folder.logs[match.id] = _logs(out, match)
        if (out / REPORT / "games" / f"{match.id}.html").is_file():
            folder.pages.add(match.id)
    return folder


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


def _rating(config: Any, standings: dict[str, Any] | None) -> RatingConfig:
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


def _logs(out: Path, match: Match) -> dict[int, str]:
    folder = out / "logs" / match.id
    found: dict[int, str] = {}
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return found
    for name in names:
        seat, _, rest = name.partition("-")
        if seat.isdigit() and rest.endswith(".stderr") and (folder / name).is_file():
            found.setdefault(int(seat), f"logs/{match.id}/{name}")
    return found


# -- writing -----------------------------------------------------------------------------------


def write_assets(out: Path) -> None:
    """Writes the shared viewer files when they are missing or differ."""
    root = out / REPORT
    (root / "games").mkdir(parents=True, exist_ok=True)
    for name, text in ASSETS.items():
        path = root / name
        try:
            if path.read_text(encoding="utf-8") == text:
                continue
        except OSError:
            pass
        write_atomic(path, text)


def write_match_page(out: Path, match_id: str, *, record: RecordDict | None = None) -> bool:
    """Writes ``report/games/<id>.html`` from the match's record (``record``: as the referee
    just made it, else read from its file and verified); ``False`` if the record cannot be
    read or does not verify (the report then links to the record itself)."""
    try:
        if record is None:
            record = read_record(out / "games" / f"{match_id}.json")
            check_replayable(record, strict=True)
        page = linked_page(record, assets="../", back="../index.html")
    except (RecordError, OSError, ValueError, KeyError, TypeError, IndexError):
        return False
    write_atomic(out / REPORT / "games" / f"{match_id}.html", page)
    return True


def write_index(out: Path) -> Path:
    """Reads the folder and writes ``report/index.html``; returns its path."""

    folder = read_folder(out)
    path = out / REPORT / "index.html"
    (out / REPORT).mkdir(parents=True, exist_ok=True)
    write_atomic(path, index_html(folder))
    return path


def build(out: Path) -> Path:
    """Rebuilds the whole report (``ct-referee report``): the viewer, every match's page, the
    index. Returns the index's path.

    :raises ReportError: if ``out`` is not a tournament's output folder.
    """
    folder = read_folder(out)
    write_assets(out)
    for match in folder.matches:
        write_match_page(out, match.id)
    return write_index(out)


class Refresher:
    """Keeps a running tournament's report current, from a thread of its own so that no match
    waits for it: each finished match gets its replay page, and the index is rewritten at most
    every ``interval`` seconds (more seldom when it takes long: a tournament of thousands of
    matches does not spend its time redrawing the page), and at :meth:`finish`."""

    def __init__(self, out: Path, *, interval: float = 2.0) -> None:
        self.out = out
        self.interval = interval
        self._next = float("-inf")
        self._ready = False
        self._pool: ThreadPoolExecutor | None = ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="report")

    def match_done(self, match_id: str, record: RecordDict | None = None) -> None:
        """Queues the match's page (from ``record``, as the referee just wrote it, else read
        from its file) and the index if it is due."""
        if self._pool is not None:
            self._pool.submit(self._quietly, self._page, match_id, record)

    def finish(self) -> None:
        """Writes the queued pages, then the index, and stops the thread."""
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.submit(self._quietly, self._index).result()
            pool.shutdown()

    def _quietly(self, job: Callable[..., None], *args: Any) -> None:
        try:  # the report is a view: the results are what count, and they are saved
            if not self._ready:
                write_assets(self.out)
                self._ready = True
            job(*args)
        except (OSError, ValueError, KeyError, TypeError, IndexError):
            pass

    def _page(self, match_id: str, record: RecordDict | None) -> None:
        write_match_page(self.out, match_id, record=record)
        if time.monotonic() >= self._next:
            self._index()

    def _index(self) -> None:
        start = time.monotonic()
        write_index(self.out)
        took = time.monotonic() - start
        self._next = time.monotonic() + max(self.interval, 10 * took)  # <= 10 % of a core
