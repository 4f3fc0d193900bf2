"""What the report server answers (:class:`Site`), without sockets: the folder's key (the first
folder of every address, ``/KEY/report/index.html``), every route it serves, and its rules: of a
duplicate set nothing (a record, a replay, a match page, a bot's log) until every seating of the
set has ended (:mod:`referee.web.sets`); while a tournament runs, the report alone. Every route
is named here (:meth:`Site.answer`): no listing, no other file, no symbolic link followed. The
sockets are :mod:`referee.web.serve`'s. Why and what each route serves: ``docs/report.md``
(*Serving the report*), ``docs/security.md`` (*What stops it*, *What remains*).
"""

from __future__ import annotations

import contextlib
import email.utils
import hmac
import json
import os
import re
import secrets
import stat
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import IO, Any
from urllib.parse import unquote, urlsplit

from referee.records.record import MAX_BYTES, RecordDict, RecordError, gunzip, loads
from referee.records.replay import check_replayable
from referee.web.replay_html import ASSETS as VIEWER
from referee.web.replay_html import (
    SHARED_PAGE,
    linked_page,
    replay_script,
    replay_script_of_page,
    shared_page,
)
from referee.web.sets import EndedSets, set_size_of

__all__ = [
    "KEY_FILE",
    "TYPES",
    "Kind",
    "Reply",
    "Site",
    "folder_key",
    "run_is_live",
]

KEY_FILE = ".report-key"
"""The folder's key (mode 0600, never served): kept across runs, so the address printed stays
good (delete the file to make a new one)."""
TYPES = {".stderr": "text/plain; charset=utf-8", ".jsonl": "text/plain; charset=utf-8",
         ".json": "application/json", ".js": "text/javascript; charset=utf-8",
         ".csv": "text/plain; charset=utf-8", ".yaml": "text/plain; charset=utf-8",
         ".html": "text/html; charset=utf-8", ".css": "text/css; charset=utf-8",
         ".png": "image/png", ".svg": "image/svg+xml"}
"""Content types by extension: logs and data shown as text in the browser, never downloaded."""
REPORT = "report"
_ID = r"r[0-9]{1,9}-g[0-9]{1,12}-s[0-9]{1,4}"
_NAME = r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,199}"
"""A file name the server may serve: no leading dot (hidden: the deal secret, the key), no
slash, nothing a shell or a browser reads otherwise."""
_ROUTES: list[tuple[str, re.Pattern[str]]] = [(name, re.compile(pattern)) for name, pattern in (
    ("page", rf"/report/(?P<name>{_NAME})"),
    ("data", r"/report/(?P<folder>matches|cross|entrant|rows)/(?P<name>[0-9]{1,9}\.js)"),
    ("game", rf"/report/games/(?P<id>{_ID})\.html"),
    ("replay", rf"/report/replays/(?P<id>{_ID})\.js"),
    ("author", rf"/report/authors/(?P<name>{_NAME}\.html)"),
    ("record", rf"/games/(?P<id>{_ID})(?P<suffix>\.json\.gz|\.json)"),
    ("log", rf"/logs/(?P<id>{_ID})/(?P<name>[0-9]{{1,2}}-{_NAME}\.stderr)"),
    ("preflight", rf"/preflight/(?P<name>{_NAME}\.stderr)"),
    ("root", r"/(?P<name>results\.jsonl|standings\.json|standings\.csv|tournament\.yaml)"),
)]
LIVE_CHECK_S = 1.0
"""How long :func:`run_is_live`'s answer is kept (it reads two of the report's files)."""


class Kind(StrEnum):
    """Whose folder is served."""

    TOURNAMENT = "tournament"
    """The report, and once the run has ended the records, logs and tables."""
    LEAGUE = "league"
    """The league's page, its lists of the matches of the sets that ended (every match's,
    each author's), and the replay of each match whose set has ended."""


@dataclass
class Reply:
    """One answer: its status, headers and body (bytes, or an open file sent and closed)."""

    status: int
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes = b""
    file: IO[bytes] | None = None
    length: int = 0

    @classmethod
    def text(cls, status: int, words: str, *extra: tuple[str, str]) -> Reply:
        """A short page saying ``words`` (plain text: nothing in it is markup)."""
        body = f"{status}: {words}\n".encode()
        return cls(status, [("Content-Type", "text/plain; charset=utf-8"), *extra], body)

    @classmethod
    def data(cls, body: bytes, kind: str, *extra: tuple[str, str]) -> Reply:
        return cls(200, [("Content-Type", kind), *extra], body)

    def size(self) -> int:
        return self.length if self.file is not None else len(self.body)

    def close(self) -> None:
        if self.file is not None:
            self.file.close()


UNKNOWN = "nothing is served here"
UNAUTHORIZED = ("this report server answers only its organiser: open the address ct-referee "
                "printed when it started serving (its first folder is the key)")
UNDER_WAY = ("its duplicate set is still being played: nothing of a set is served until every "
             "one of its seatings has ended")
LIVE_ONLY = ("while the run goes the report alone is served (the records, logs and tables once "
             "it has ended)")


def folder_key(out: Path) -> str:
    """The key of the output folder ``out`` (:data:`KEY_FILE`): the one there, where it is
    this user's own file that no one else may read, else a new one written there."""
    path = out / KEY_FILE
    with contextlib.suppress(OSError, UnicodeDecodeError):
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as f:
            info = os.fstat(f.fileno())
            text = f.read(200).decode().strip()
        if stat.S_ISREG(info.st_mode) and info.st_uid == os.geteuid() and \
                not info.st_mode & 0o077 and re.fullmatch(r"[A-Za-z0-9_-]{32,100}", text):
            return text
    key = secrets.token_urlsafe(32)
    tmp = out / f".{KEY_FILE}.{secrets.token_hex(4)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(key + "\n")
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return key


def _moved(where: str) -> Reply:
    return Reply(302, [("Location", where), ("Content-Length", "0")])


def _open(out: Path, parts: list[str]) -> IO[bytes] | None:
    """The regular file ``out/parts...`` opened for reading, reached without following any
    symbolic link below ``out`` (``None``: not there, not a regular file, or through a link)."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(out, flags | os.O_DIRECTORY)
    except OSError:
        return None
    try:
        for part in parts[:-1]:
            inner = os.open(part, flags | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = inner
        inner = os.open(parts[-1], flags | os.O_NONBLOCK, dir_fd=fd)  # a FIFO: not waited on
    except OSError:
        os.close(fd)
        return None
    os.close(fd)
    if not stat.S_ISREG(os.fstat(inner).st_mode):
        os.close(inner)
        return None
    os.set_blocking(inner, True)
    return os.fdopen(inner, "rb")


def _read(out: Path, parts: list[str], limit: int = MAX_BYTES) -> tuple[bytes, int] | None:
    """The bytes of ``out/parts...`` (at most ``limit`` and one) and its mtime in ns, as
    :func:`_open` reaches it."""
    f = _open(out, parts)
    if f is None:
        return None
    with f:
        try:
            return f.read(limit + 1), os.fstat(f.fileno()).st_mtime_ns
        except OSError:
            return None


def run_is_live(out: Path) -> bool:
    """Whether a tournament plays in ``out`` now, as its report says: its sign of life
    (``report/alive.js``) younger than the time after which the page says the run stopped, and
    its ``data.js`` neither final nor marked stopped. A sign of life that cannot be read counts
    as live (the stricter rules); none at all (no run wrote one) as not."""
    data = _read(out, [REPORT, "data.js"], 1 << 26)
    if data is not None:
        doc = _object(data[0])
        if isinstance(doc, dict) and (doc.get("final") or doc.get("halted")):
            return False
    alive = _read(out, [REPORT, "alive.js"], 4096)
    if alive is None:
        return False
    text = alive[0].decode("utf-8", "replace")
    if text.strip().endswith("= null;"):
        return False
    beat = _object(alive[0])
    try:
        at, dead_after = float(beat["at"]), float(beat["dead_after"])
    except (TypeError, KeyError, ValueError):
        return True
    return time.time() - at <= dead_after


def _object(script: bytes) -> Any:
    """The JSON object a ``window.X = {...};`` script holds (``None``: none)."""
    try:
        text = script.decode("utf-8")
        return json.loads(text[text.index("{"):text.rindex("}") + 1])
    except (UnicodeDecodeError, ValueError):
        return None


class Site:
    """What the server answers, without sockets: :meth:`answer` to a request's target and
    headers. ``key``: the key a request must hold (``None``: every request is the organiser's,
    as over the unix socket); ``marker``: the folder's marker file (its identity gives the
    size of a set); ``live``: whether a run plays there now (a tournament's)."""

    def __init__(self, out: Path, kind: Kind, *, key: str | None, marker: Path | None,
                 live: Callable[[], bool]) -> None:
        self.out, self.kind, self.key, self._live = out, kind, key, live
        self.sets = EndedSets(out / "results.jsonl", set_size_of(out, marker))
        self._live_at = (float("-inf"), True)

    def live(self) -> bool:
        """:attr:`_live`'s answer, kept :data:`LIVE_CHECK_S`."""
        at, answer = self._live_at
        now = time.monotonic()
        if now - at > LIVE_CHECK_S:
            answer = self._live()
            self._live_at = (now, answer)
        return answer

    # -- routes ------------------------------------------------------------------------------

    def answer(self, target: str, headers: Mapping[str, str]) -> Reply:
        """The reply to a GET (or HEAD) of ``target`` (the request line's), before any file
        is looked at: refused without the key (the address's first folder, ``/KEY/...``, or
        a script's ``Authorization: Bearer KEY``)."""
        if not target.startswith("/"):
            return Reply.text(400, "a path is asked for, beginning with /")
        raw = urlsplit(target).path
        prefix = ""
        if self.key is not None:
            first, slash, rest = raw[1:].partition("/")
            auth = headers.get("Authorization", "")
            if hmac.compare_digest(first.encode(), self.key.encode()):
                prefix, raw = f"/{first}", f"/{rest}"
                if not slash:  # /KEY: its folder, whose links are relative to it
                    return _moved(f"{prefix}/{REPORT}/index.html")
            elif not (auth[:7].lower() == "bearer " and
                      hmac.compare_digest(auth[7:].strip().encode(), self.key.encode())):
                return Reply.text(401, UNAUTHORIZED, ("WWW-Authenticate", 'Bearer realm="ct"'))
        try:
            path = unquote(raw, errors="strict")
        except UnicodeDecodeError:
            return Reply.text(404, UNKNOWN)
        if path in ("/", f"/{REPORT}", f"/{REPORT}/"):
            return _moved(f"{prefix}/{REPORT}/index.html")
        for name, pattern in _ROUTES:
            found = pattern.fullmatch(path)
            if found is not None:
                route: Callable[[re.Match[str], Mapping[str, str]], Reply] = getattr(
                    self, f"_route_{name}")
                return route(found, headers)
        return Reply.text(404, UNKNOWN)

    def _route_page(self, found: re.Match[str], headers: Mapping[str, str]) -> Reply:
        """A file right in ``report/`` (the page, its data and script); the replay viewer's
        files from the package where the folder has none (a league's)."""
        name = found["name"]
        if self.kind is Kind.TOURNAMENT and name in ("data.js", "alive.js"):
            return self._script(name)
        reply = self._file([REPORT, name], headers)
        if reply.status == 404 and name in VIEWER:
            return Reply.data(VIEWER[name].encode(), _type(name))
        if reply.status == 404 and name == SHARED_PAGE:
            back = "league page" if self.kind is Kind.LEAGUE else "tournament report"
            return Reply.data(shared_page(back).encode(), _type(name))
        return reply

    def _script(self, name: str) -> Reply:
        """``data.js`` saying every page is drawn here; ``alive.js`` with this machine's clock
        (a browser's may be another machine's)."""
        read = _read(self.out, [REPORT, name], 1 << 28)
        if read is None:
            return Reply.text(404, UNKNOWN)
        extra = ('window.CT_REPORT && (window.CT_REPORT.pages = "all");\n' if name == "data.js"
                 else f"window.CT_ALIVE && (window.CT_ALIVE.now = {time.time():.1f});\n")
        return Reply.data(read[0] + extra.encode(), TYPES[".js"])

    def _route_data(self, found: re.Match[str], headers: Mapping[str, str]) -> Reply:
        if self.kind is not Kind.TOURNAMENT:
            return Reply.text(404, UNKNOWN)
        return self._file([REPORT, found["folder"], found["name"]], headers)

    def _route_author(self, found: re.Match[str], headers: Mapping[str, str]) -> Reply:
        """A league's list of an author's matches (``report/authors/<name>.html``: only those
        of sets that ended, appended as they end)."""
        if self.kind is not Kind.LEAGUE:
            return Reply.text(404, UNKNOWN)
        return self._file([REPORT, "authors", found["name"]], headers)

    def _route_game(self, found: re.Match[str], headers: Mapping[str, str]) -> Reply:
        """A match's replay page: its file where the worker that played it wrote one, else
        drawn from its record."""
        match_id = found["id"]
        reply = self._ended_file(match_id, [REPORT, "games", f"{match_id}.html"], headers)
        if reply is not None:
            return reply
        record = self._record(match_id)
        if record is None:
            return Reply.text(404, f"{match_id}: no record that replays under the rules")
        page = linked_page(record, assets="../", back="../index.html")
        return Reply.data(self._league_words(page).encode(), TYPES[".html"])

    def _route_replay(self, found: re.Match[str], headers: Mapping[str, str]) -> Reply:
        """A match's data for the one replay page (``replay.html#id=<id>``): its file, else
        from its page (the same data), else from its record."""
        match_id = found["id"]
        reply = self._ended_file(match_id, [REPORT, "replays", f"{match_id}.js"], headers)
        if reply is not None:
            return reply
        recorded = self._record_bytes(match_id)
        page = _read(self.out, [REPORT, "games", f"{match_id}.html"])
        if page is not None and (recorded is None or page[1] >= recorded[1]):
            with contextlib.suppress(UnicodeDecodeError):
                script = replay_script_of_page(page[0].decode("utf-8"), match_id)
                if script is not None:
                    return Reply.data(script.encode(), TYPES[".js"])
        record = self._record(match_id)
        if record is None:
            return Reply.text(404, f"{match_id}: no record that replays under the rules")
        return Reply.data(replay_script(record).encode(), TYPES[".js"])

    def _ended_file(self, match_id: str, parts: list[str],
                    headers: Mapping[str, str]) -> Reply | None:
        """A match's own file (a 403 while its set is under way), or ``None`` where the worker
        that played it wrote none (the caller draws it from the record)."""
        if not self.sets.ended(match_id):
            return Reply.text(403, f"{match_id}: {UNDER_WAY}")
        reply = self._file(parts, headers)
        return None if reply.status == 404 else reply

    def _record(self, match_id: str) -> RecordDict | None:
        """The match's record, checked under the rules (``None``: none that replays)."""
        read = self._record_bytes(match_id)
        if read is None:
            return None
        try:
            data = read[0]
            if data[:2] == b"\x1f\x8b":
                data = gunzip(data, source=match_id)
            record = loads(data.decode("utf-8"), source=match_id)
            check_replayable(record, strict=True)
        except (RecordError, UnicodeDecodeError, ValueError, KeyError, TypeError, IndexError):
            return None
        return record

    def _record_bytes(self, match_id: str) -> tuple[bytes, int] | None:
        for suffix in (".json.gz", ".json"):
            read = _read(self.out, ["games", f"{match_id}{suffix}"])
            if read is not None:
                return read if len(read[0]) <= MAX_BYTES else None
        return None

    def _after_the_run(self, match_id: str | None = None) -> Reply | None:
        """The refusal of a file outside ``report/``: a league's never, a tournament's while
        its run goes, a match's while its set is under way (``None``: served)."""
        if self.kind is not Kind.TOURNAMENT:
            return Reply.text(404, UNKNOWN)
        if match_id is not None and not self.sets.ended(match_id):
            return Reply.text(403, f"{match_id}: {UNDER_WAY}")
        if self.live():
            return Reply.text(403, LIVE_ONLY)
        return None

    def _route_record(self, found: re.Match[str], headers: Mapping[str, str]) -> Reply:
        refused = self._after_the_run(found["id"])
        if refused is not None:
            return refused
        reply = self._file(["games", found["id"] + found["suffix"]], headers)
        if reply.status == 200 and found["suffix"] == ".json.gz":  # shown, not downloaded
            reply.headers = [("Content-Type", TYPES[".json"]), ("Content-Encoding", "gzip"),
                             *[(k, v) for k, v in reply.headers if k != "Content-Type"]]
        return reply

    def _route_log(self, found: re.Match[str], headers: Mapping[str, str]) -> Reply:
        refused = self._after_the_run(found["id"])
        return refused or self._file(["logs", found["id"], found["name"]], headers)

    def _route_preflight(self, found: re.Match[str], headers: Mapping[str, str]) -> Reply:
        refused = self._after_the_run()
        return refused or self._file(["preflight", found["name"]], headers)

    def _route_root(self, found: re.Match[str], headers: Mapping[str, str]) -> Reply:
        refused = self._after_the_run()
        if refused is not None:
            return refused
        if found["name"] == "results.jsonl":
            return self._journal()
        return self._file([found["name"]], headers)

    def _journal(self) -> Reply:
        """``results.jsonl``, the lines of the sets that ended alone (a run stopped midway is
        resumed with the same deals)."""
        read = _read(self.out, ["results.jsonl"], 1 << 34)
        if read is None:
            return Reply.text(404, UNKNOWN)
        kept = []
        for raw in read[0].split(b"\n")[:-1]:  # a last line without its newline is torn
            with contextlib.suppress(ValueError, AttributeError):
                if self.sets.ended(json.loads(raw).get("id")):
                    kept.append(raw + b"\n")
        return Reply.data(b"".join(kept), TYPES[".jsonl"])

    def _file(self, parts: list[str], headers: Mapping[str, str]) -> Reply:
        """A file of the folder as it is (see :func:`_open`), a 304 where the browser's copy
        is as new."""
        f = _open(self.out, parts)
        if f is None:
            return Reply.text(404, UNKNOWN)
        info = os.fstat(f.fileno())
        modified = email.utils.formatdate(info.st_mtime, usegmt=True)
        since = headers.get("If-Modified-Since")
        if since:
            with contextlib.suppress(TypeError, ValueError, IndexError, OverflowError):
                when = email.utils.parsedate_to_datetime(since)
                if int(info.st_mtime) <= when.timestamp():
                    f.close()
                    return Reply(304, [("Last-Modified", modified)])
        return Reply(200, [("Content-Type", _type(parts[-1])), ("Last-Modified", modified)],
                     file=f, length=info.st_size)

    def _league_words(self, page: str) -> str:
        """A replay page's way back, named for a league's page."""
        if self.kind is Kind.LEAGUE:
            return page.replace("&#8592; tournament report</a>", "&#8592; league page</a>")
        return page


def _type(name: str) -> str:
    for suffix, kind in TYPES.items():
        if name.endswith(suffix):
            return kind
    return "application/octet-stream"
