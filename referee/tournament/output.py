"""The output folder of a tournament: the one place that knows its layout.

:class:`OutputFolder` names every path in it (the marker, the deal secret, the resolved
configuration, ``results.jsonl``, ``rounds.jsonl``, the standings files, ``games/``, ``logs/``,
``preflight/``, ``report/``), makes it ready for a run (:meth:`OutputFolder.prepare`: new,
resumed, or emptied with ``--fresh``), and writes the standings. :class:`Journal` is an
append-only JSON-lines file (``results.jsonl``, ``rounds.jsonl``) whose lines are synced in
batches: a line counts once :meth:`Journal.sync` returned.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import re
import shutil
import stat
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import yaml

from referee.game.faults import Fault
from referee.match.job import DealSecret
from referee.records.match_id import MatchId
from referee.records.record import SUFFIX, FaultDict, record_file, record_id, write_atomic
from referee.tournament.config import RATING_KEYS, Config, ConfigError
from referee.tournament.course import Stopped
from referee.tournament.ratings import MatchResult, Standing
from referee.tournament.stopping import Pair

__all__ = ["MARKER", "OWNED", "SECRET", "Journal", "JournalLine", "OutputFolder", "prepare_folder",
           "prepare_output", "read_deal_secret", "write_standings"]

MARKER = ".ct-referee.json"
"""The file that makes a folder a ct-referee tournament folder (and says which tournament)."""
SECRET = ".deal-secret"
"""The tournament's deal secret (hex, mode 0600): with the seed it keys every deal."""
REPORT = "report"
"""The report's folder (written by :mod:`referee.web.report`, never by the tournament)."""
PREFLIGHT = "preflight"
"""The folder of the pre-flight's stderr logs, one per entrant."""
OWNED = (MARKER, SECRET, "tournament.yaml", "results.jsonl", "rounds.jsonl", "standings.json",
         "standings.csv", "games", "logs", PREFLIGHT, REPORT)
"""Everything ``--fresh`` deletes from an output folder; nothing else is touched."""


_FAST_DUMPER: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
"""libyaml's safe dumper where PyYAML has it."""


class OutputFolder:
    """An output folder's layout: every path in it, and what reads and writes it as a whole.

    >>> OutputFolder(Path("out")).record("r1-g001-s01")
    PosixPath('out/games/r1-g001-s01.json.gz')
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.marker = root / MARKER
        self.secret = root / SECRET
        self.config = root / "tournament.yaml"
        self.results = root / "results.jsonl"
        """The journal: one line per finished match."""
        self.rounds = root / "rounds.jsonl"
        """A ladder's rounds as planned (a resume plays them the same)."""
        self.standings_json = root / "standings.json"
        self.standings_csv = root / "standings.csv"
        self.games = root / "games"
        self.logs = root / "logs"
        self.preflight = root / PREFLIGHT
        self.report = root / REPORT

    def record(self, match_id: str) -> Path:
        """Where a match's record is written (gzip-compressed JSON)."""
        return self.games / f"{match_id}{SUFFIX}"

    def saved_record(self, match_id: str) -> Path:
        """Where a match's record is read: the compressed one, or the ``.json`` an older run
        wrote."""
        return record_file(self.games, match_id)

    @staticmethod
    def record_ref(match_id: str) -> str:
        """A match's record, relative to the folder (the journal's ``record``)."""
        return f"games/{match_id}{SUFFIX}"

    def drop_superseded(self, match_id: str | None = None) -> None:
        """Removes the ``games/<id>.json`` an older ct-referee wrote where ``<id>.json.gz`` is
        there now (``match_id``: that match's; ``None``: every one in ``games/``): a match
        played again after a resume (its record written, its journal line not) writes the
        compressed record beside the old one, which holds a result that never counted."""
        if match_id is not None:  # its compressed record was just written: one call
            (self.games / f"{match_id}.json").unlink(missing_ok=True)
            return
        try:
            names = set(os.listdir(self.games))
        except OSError:
            return
        for name in names:
            if name.endswith(".json") and f"{name}.gz" in names:
                (self.games / name).unlink(missing_ok=True)

    def match_logs(self, match_id: str) -> Path:
        """The folder of a match's stderr logs."""
        return self.logs / match_id

    def records(self) -> set[str]:
        """The match ids whose record file is there (one listing of ``games/``, not one
        look-up a match)."""
        try:
            names = os.listdir(self.games)
        except OSError:
            return set()
        return {i for i in map(record_id, names) if i is not None}

    def journal(self) -> Journal:
        """``results.jsonl``."""
        return Journal(self.results)

    def rounds_log(self) -> Journal:
        """``rounds.jsonl``."""
        return Journal(self.rounds)

def fingerprint(identity: dict[str, Any]) -> str:
    """A short hash of a tournament's identity (:meth:`Config.identity`)."""
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def read_deal_secret(path: Path) -> DealSecret:
    """The deal secret in ``path``: hex digits (at least 32), surrounding blanks ignored.

    :raises ConfigError: for a file that cannot be read or holds no such secret.
    """
    try:
        text = path.read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError) as err:
        why = getattr(err, "strerror", None) or "not hex digits"
        raise ConfigError(f"deal secret {str(path)!r}: cannot read: {why}") from None
    try:
        return DealSecret.from_hex(text)
    except ValueError:
        raise ConfigError(f"deal secret {str(path)!r}: expected at least 32 hex digits "
                          f"(128 bits), as in the {SECRET} file of a tournament folder") from None


SET_ASIDE = ".fresh-"
"""The prefix of the hidden folder ``--fresh`` moves the last run's files into (one rename
each), deleted by a thread while the new run plays (:func:`_sweep`)."""

_ASIDE_NAME = re.compile(r"\.fresh-[0-9a-f]{16}")


def _is_aside(path: Path) -> bool:
    """Whether ``path`` is a folder :func:`_set_aside` made: its name, a real folder of this
    user's, mode 0700 (an organiser's own ``.fresh-notes`` is none)."""
    if not _ASIDE_NAME.fullmatch(path.name):
        return False
    try:
        st = path.lstat()
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid() and \
        stat.S_IMODE(st.st_mode) == 0o700


def _set_aside(out: Path, owned: Sequence[str]) -> None:
    """``--fresh``: every ``owned`` entry of ``out`` (:data:`OWNED`, a tournament's) moved
    into a hidden folder of its own (mode 0700, its name unguessable), at once whatever the
    last run's size (the deletion of 10,000 matches' files took 7 s here): a symlink moves as
    itself, never followed. The deal secret and the marker go last: a set-aside cut short
    (a rename refused, Ctrl-C) leaves a folder that is still the run's, which ``--fresh``
    takes up again."""
    aside = out / f"{SET_ASIDE}{os.urandom(8).hex()}"
    last = [name for name in (SECRET, MARKER) if name in owned]
    for name in [*(n for n in owned if n not in last), *last]:
        path = out / name
        if path.is_symlink() or path.exists():
            if not aside.exists():
                aside.mkdir(mode=0o700)
                aside.chmod(0o700)  # whatever the umask
            os.rename(path, aside / name)


def _sweep(out: Path) -> None:
    """Deletes the folders :func:`_set_aside` made in ``out`` (this run's, and any an earlier run
    cut short left) from a daemon thread: the command never waits for it at its exit, and a
    deletion cut short is finished by the next run in that folder."""
    aside = [p for p in out.iterdir() if _is_aside(p)]
    if not aside:
        return

    def delete() -> None:
        for path in aside:
            shutil.rmtree(path, ignore_errors=True)

    threading.Thread(target=delete, name="fresh-sweep", daemon=True).start()


def prepare_output(config: Config, *, fresh: bool = False,
                   deal_secret: DealSecret | bytes | None = None) -> DealSecret:
    """Makes ``config.output`` ready (:func:`prepare_folder`: a ladder's folder may have grown
    since), writes the resolved configuration there, and returns its deal secret."""
    secret = prepare_folder(config.output, config.identity(), fresh=fresh,
                            deal_secret=deal_secret, may_grow=config.format.grows)
    write_atomic(OutputFolder(config.output).config,
                 yaml.dump(config.resolved(), Dumper=_FAST_DUMPER, sort_keys=False,
                           allow_unicode=True))
    return secret


def prepare_folder(out: Path, mine: dict[str, Any], *, kind: str = "tournament",
                   marker: str = MARKER, owned: Sequence[str] = OWNED, fresh: bool = False,
                   deal_secret: DealSecret | bytes | None = None,
                   may_grow: bool = False) -> DealSecret:
    """Makes ``out`` ready for a run of a ``kind`` (a tournament, a league) whose identity is
    ``mine``: new, resumed (the same identity in its ``marker`` file, or, ``may_grow``, one
    it :func:`grows` from), or emptied (``fresh``: the files in ``owned``, nothing else), and
    returns its deal secret: the one in the folder (:data:`SECRET`), else ``deal_secret``,
    else a new one from the OS, written there (mode 0600) for resuming.

    :raises ConfigError: for a folder of another ``kind`` (without ``fresh``), a folder that
        is not a ct-referee ``kind`` folder and is not empty, a ``deal_secret`` other than the
        folder's, or a folder with results but no deal secret.
    """
    paths = OutputFolder(out)
    marker_path = out / marker
    if out.exists() and not out.is_dir():
        raise ConfigError(f"output {str(out)!r} is a file, not a folder")
    theirs: object = None
    if marker_path.is_file():
        try:
            theirs = json.loads(marker_path.read_text(encoding="utf-8"))["identity"]
        except (OSError, ValueError, KeyError, TypeError):
            theirs = None
        if fresh:
            try:
                _set_aside(out, owned)
            except OSError as err:
                raise ConfigError(f"output {str(out)!r}: cannot set the last run's files "
                                  f"aside ({err.strerror or err}); it is as it was but for "
                                  f"what moved into {SET_ASIDE}*, which the next run "
                                  f"deletes") from None
        elif theirs != mine and not (may_grow and grows(theirs, mine)):
            raise ConfigError(f"output {str(out)!r} holds another {kind} "
                              f"({_difference(theirs, mine)}); add --fresh to start over there, "
                              f"or choose another --output")
    elif out.is_dir() and any(not _is_aside(p) for p in out.iterdir()):
        raise ConfigError(f"output {str(out)!r} is not empty and is not a ct-referee {kind} "
                          f"folder; choose another --output")
    try:
        asked = None if deal_secret is None else DealSecret.of(deal_secret)
    except ValueError as err:
        raise ConfigError(str(err)) from None
    secret_path = paths.secret
    if secret_path.is_file():
        secret = read_deal_secret(secret_path)
        if asked is not None and asked != secret:
            raise ConfigError(f"output {str(out)!r} was dealt with another deal secret than the "
                              f"one given; add --fresh to start over there with it")
    elif paths.results.is_file() and paths.results.stat().st_size:
        raise ConfigError(f"output {str(out)!r} has results but no {SECRET} (an older "
                          f"ct-referee dealt them, or it was lost: they cannot be dealt again); "
                          f"add --fresh to start over there")
    else:
        secret = DealSecret.new() if asked is None else asked
    paths.games.mkdir(parents=True, exist_ok=True)
    paths.logs.mkdir(exist_ok=True)
    _sweep(out)
    if not marker_path.is_file() or (not fresh and theirs != mine):
        # new, or a ladder grown since
        write_atomic(marker_path, json.dumps({"format": f"ct-referee-{kind}", "version": 1,
                                              "fingerprint": fingerprint(mine),
                                              "identity": mine}, indent=2) + "\n")
    if not secret_path.is_file():  # after the marker: a folder cut short here still resumes
        write_atomic(secret_path, secret.hex() + "\n", mode=0o600)
    for folder in (out, paths.games):  # left by a write_atomic cut short (SIGKILL), or by a
        # cluster worker's attempt at a match that another worker finished first
        for tmp in folder.glob(".*.tmp"):
            if tmp.is_file():
                tmp.unlink(missing_ok=True)
    return secret


def grows(theirs: object, mine: dict[str, Any]) -> bool:
    """Whether ``mine`` continues ``theirs`` (of a format that :attr:`~referee.tournament.formats.
    Format.grows`): the same but for entrants added at the end and other caps (``rounds``,
    ``max_matches``)."""
    if not isinstance(theirs, dict):
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


_Num = TypeVar("_Num", int, float)


@dataclass(frozen=True)
class JournalLine:
    """One line of ``results.jsonl``, parsed once (:meth:`parse`): a finished match as the
    coordinator saved it.

    >>> line = JournalLine.parse({"id": "r1-g001-s01", "players": ["a", "b"], "totals": [3, 1],
    ...     "ranks": [1, 2], "hands": 1, "faults": [], "scores": [[3, 1]]})
    >>> line.result.totals, line.scores, line.luck
    ((3, 1), [[3, 1]], None)
    """

    id: str
    """The match id (:class:`~referee.records.match_id.MatchId`'s form)."""
    result: MatchResult
    """Players by seat, totals, ranks, the number of hands, faults by seat and kind."""
    faults: list[FaultDict]
    """The faults as the line holds them (seat, fault, hand, detail)."""
    scores: list[list[int]] | None
    """Every hand's points by seat; ``None`` where missing or malformed (a line of an older
    ct-referee: its record says them)."""
    luck: list[list[float]] | None
    """Every hand's luck of the stock flips by seat, where the line has it well formed."""
    snapshots: list[object] | None
    """Each seat's snapshot digest (a sealed entrant's), where the line has them."""
    raw: dict[str, Any] = field(compare=False, repr=False)
    """The line as read or written, handed on unchanged (to the report's pages)."""

    @classmethod
    def parse(cls, line: object) -> JournalLine:
        """The journal line ``line`` (a decoded JSON value).

        :raises ValueError: for a line that is not a finished match's (no match id, players,
            totals and ranks of one length); malformed optional tables read as ``None``.
        """
        if not isinstance(line, dict):
            raise ValueError(f"a journal line is an object, not {type(line).__name__}")
        match_id = line.get("id")
        if not MatchId.is_one(match_id):
            raise ValueError(f"not a match id: {match_id!r}")
        try:
            result = MatchResult.from_json(line)
        except (KeyError, TypeError, ValueError) as err:
            raise ValueError(f"match {match_id}: malformed result: {err}") from None
        n = len(result.players)
        snapshots = line.get("snapshots")
        return cls(str(match_id), result, list(line.get("faults") or ()),
                   _hands_table(line, "scores", n, int), _hands_table(line, "luck", n, float),
                   snapshots if isinstance(snapshots, list) else None, line)


def _hands_table(line: dict[str, Any], key: str, players: int,
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


class Journal:
    """``results.jsonl``: one JSON line per finished match, appended, flushed and synced."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file: io.BufferedWriter | None = None
        self._unsynced = False

    def load(self, accept: Callable[[dict[str, Any]], bool], *,
             collect: bool = True) -> list[dict[str, Any]]:
        """The complete lines that parse and that ``accept`` takes (``collect=False``: only
        ``accept`` sees them, none is kept: a journal of a million lines is read one line at a
        time). If any line is dropped (a half-written last line above all), the file is
        rewritten with the kept ones, as they were written."""
        kept: list[dict[str, Any]] = []
        dropped: set[int] = set()
        try:
            f = open(self.path, "rb")  # noqa: SIM115 - closed below
        except FileNotFoundError:
            return []
        with f:
            for number, raw in enumerate(f):
                if not raw.endswith(b"\n"):  # text after the last newline: a torn append
                    dropped.add(number)
                    break
                try:
                    line = json.loads(raw)
                except ValueError:
                    line = None
                if isinstance(line, dict) and accept(line):
                    if collect:
                        kept.append(line)
                else:
                    dropped.add(number)
        if dropped:
            with open(self.path, "rb") as f:
                text = b"".join(raw for number, raw in enumerate(f)
                                if number not in dropped and raw.endswith(b"\n"))
            write_atomic(self.path, text.decode("utf-8", errors="replace"))
        return kept

    def append(self, line: dict[str, Any], *, sync: bool = True) -> None:
        """Appends one line (written to the file at once); durable before returning with
        ``sync``, else at the next :meth:`sync` (lines appended in a batch, synced once)."""
        if self._file is None:
            self._file = open(self.path, "ab")  # noqa: SIM115 - closed by close()
        self._file.write(_dumps_line(line).encode())
        self._file.flush()
        self._unsynced = True
        if sync:
            self.sync()

    def sync(self) -> None:
        """Makes every line appended so far durable (one ``fsync``)."""
        if self._file is not None and self._unsynced:
            os.fsync(self._file.fileno())
            self._unsynced = False

    def close(self) -> None:
        """Syncs and closes the file (appending opens it again)."""
        if self._file is not None:
            self.sync()
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
    paths = OutputFolder(config.output)
    write_atomic(paths.standings_json, json.dumps(doc, indent=2) + "\n")
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
    write_atomic(paths.standings_csv, buf.getvalue())

