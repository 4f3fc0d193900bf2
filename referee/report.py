"""A tournament's report: ``report/index.html`` in its output folder, opened from the file system
or any static web server.

The page shows the standings (verdicts, faults), a crosstable of points per hand over the shared
duplicate sets, an SVG chart of each entrant's rating over the matches, each entrant's faults
with links to the stderr logs, and every match linked to its replay page
(``report/games/<id>.html``). The replay pages load one shared viewer (``report/viewer.js``,
``report/viewer.css``), so a tournament of thousands of matches stays light.

The report reads only the output folder's files (``.ct-referee.json``, ``tournament.yaml``,
``standings.json``, ``results.jsonl``, ``games/``, ``logs/``, ``preflight/``).
:func:`read_folder` and the writers are the shell; :mod:`referee.report_page` draws the page
from a :class:`Folder` without I/O.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from referee.ratings import RatingConfig
from referee.record import RecordDict, RecordError, read_record, write_atomic
from referee.replay import check_replayable
from referee.replay_html import ASSETS, linked_page

REPORT = "report"
"""The report's folder inside the output folder."""

_SET_ID = re.compile(r"^(r\d+-g\d+)-s\d+$")


class ReportError(ValueError):
    """A folder that is not a tournament's output folder."""


@dataclass(frozen=True)
class Match:
    """One finished match, as the report needs it (a ``results.jsonl`` line)."""

    id: str
    players: tuple[str, ...]
    totals: tuple[int, ...]
    ranks: tuple[int, ...]
    hands: int
    faults: tuple[dict[str, Any], ...]
    set: str
    """The duplicate set: the matches dealt the same cards (a group's seatings in one round)."""
    order: tuple[int, str]
    """Where it sits in the schedule (matches are rated in this order)."""

    @classmethod
    def from_json(cls, line: dict[str, Any], position: int) -> Match:
        """From a ``results.jsonl`` line.

        :raises KeyError, TypeError, ValueError: if a field is missing or malformed.
        """
        match_id = str(line["id"])
        players = tuple(str(p) for p in line["players"])
        totals = tuple(int(t) for t in line["totals"])
        ranks = tuple(int(r) for r in line["ranks"])
        if not len(players) == len(totals) == len(ranks):
            raise ValueError("players, totals and ranks differ in length")
        faults = tuple(dict(f) for f in line.get("faults") or ())
        found = _SET_ID.match(match_id)
        default_set = found.group(1) if found else match_id
        index = line.get("index")
        order = (index, match_id) if isinstance(index, int) else (-1, match_id)
        return cls(match_id, players, totals, ranks, int(line.get("hands", 0)), faults,
                   str(line.get("set", default_set)), order)


@dataclass
class Folder:
    """Everything the report shows, read from an output folder."""

    name: str
    entrants: list[str]
    rating: RatingConfig
    matches: list[Match]
    """Finished matches, in schedule order."""
    standings: dict[str, Any] | None = None
    """``standings.json``, once written (the final table)."""
    logs: dict[str, dict[int, str]] = field(default_factory=dict)
    """Per match id, per seat: the stderr log's path relative to the output folder."""
    pages: set[str] = field(default_factory=set)
    """Match ids whose replay page exists (the others link to their record)."""
    preflight: dict[str, str] = field(default_factory=dict)
    """Per entrant, its pre-flight stderr log, relative to the output folder."""


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
                return RatingConfig(**{k: float(values[k]) for k in (
                    "mu", "sigma", "beta", "tau", "draw_probability")})
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
    from referee.report_page import index_html

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
