"""Game record v1: one JSON document per match, enough to replay and re-verify it.

A record is a plain dict shaped as ``record.md`` says (typed here with :class:`RecordDict`).
:func:`write_record` writes it atomically, gzip-compressed when the file's name ends in ``.gz``
(a tournament's ``games/<id>.json.gz``); :func:`read_record` reads and checks its format, from
plain or gzip-compressed JSON alike (told by the file's first bytes, not its name).
"""

from __future__ import annotations

import gzip
import json
import os
import re
import tempfile
import zlib
from itertools import accumulate
from pathlib import Path
from typing import Any, NotRequired, TypedDict

from referee.game.rules import Deal

FORMAT = "chinese-ten-record"
VERSION = 1


class TurnDict(TypedDict):
    """One turn: the card played and the card turned, with what each captured."""

    seat: int
    play: str
    capture: list[str]
    turn: str
    turn_capture: list[str]
    ms: NotRequired[list[float]]
    by: NotRequired[str]
    info: NotRequired[list[str]]


class HandDict(TypedDict):
    """One hand: its deal, its turns in order and its scores."""

    dealer: int
    hands: list[list[str]]
    layout: list[str]
    stock: list[str]
    turns: list[TurnDict]
    scores: list[int]
    luck: NotRequired[list[float]]
    """The luck of the stock flips by seat (:mod:`referee.records.luck`); absent in older
    records."""


class FaultDict(TypedDict):
    """A bot's fault: which seat, in which hand, what kind, and what happened."""

    seat: int
    hand: int
    fault: str
    """A :class:`referee.game.faults.Fault` value."""
    detail: str


class RecordDict(TypedDict):
    """A whole match."""

    format: str
    version: int
    id: str
    bot_id: NotRequired[str]
    tournament: str | None
    variant: str
    target: int
    players: list[str]
    luck_model: NotRequired[int]
    """The luck model of ``hands[i].luck`` (:data:`referee.records.luck.MODEL`); absent: 1."""
    started: str
    hands: list[HandDict]
    totals: list[int]
    ranks: list[int]
    faults: list[FaultDict]
    snapshots: NotRequired[list[str | None]]
    """A tournament's sealed entrants: the digest of each seat's snapshot (its code)."""


class RecordError(ValueError):
    """Raised for a file that is not a readable game record v1."""


MAX_BYTES = 64 << 20
"""The largest record read, as JSON text (a compressed file's text once decompressed: a small
file that would decompress to more is refused at this size, not inflated): a long match with
every ``info`` line a bot may write is a few MiB."""
GZIP_LEVEL = 6
"""zlib's level for compressed records: a 35 KB record in about 4.5 KB, in 2.5 ms (level 9 saves
6% more for three times the time; ``docs/scaling.md``, *Records on disk*)."""
SUFFIX = ".json.gz"
"""A tournament's record file: ``games/<id>.json.gz`` (``games/<id>.json`` before 2026-12-02)."""
SUFFIXES = (SUFFIX, ".json")
"""The names a record file has, the newer first."""
_GZIP_MAGIC = b"\x1f\x8b"
MAX_DEPTH = 32
"""The deepest nesting of arrays and objects read (a record nests 5 deep); the standard
parser recurses, and 100,000 nested brackets raised ``RecursionError``."""
MAX_DIGITS = 32
"""The longest number read, in characters (a record's numbers are points, milliseconds,
luck); past Python's 4,300 digits ``int`` raised ``ValueError`` from the parser."""
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_BRACKETS = bytes(range(256)).translate(None, b"[]{}")  # the bytes that are not brackets
_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}


def nesting_depth(data: bytes) -> int:
    """How deep the arrays and objects of JSON text ``data`` nest, counted without parsing
    (brackets inside strings skipped)."""
    brackets = _STRING.sub(b"", data).translate(None, _BRACKETS)
    return max(accumulate(_STEP[c] for c in brackets), default=0)


def _number(text: str) -> float | int:
    if len(text) > MAX_DIGITS:
        raise RecordError(f"a number {len(text)} characters long; at most {MAX_DIGITS}")
    return float(text) if any(c in text for c in ".eE") else int(text)


def _constant(name: str) -> float:
    raise RecordError(f"{name} is not a JSON number")


def load_json(data: bytes, *, source: str = "record", limit: int = MAX_BYTES) -> Any:
    """JSON ``data`` (at most ``limit`` bytes, :data:`MAX_BYTES` unless told), nesting at most
    :data:`MAX_DEPTH` deep and with numbers of at most :data:`MAX_DIGITS` characters, parsed.

    :raises RecordError: naming ``source`` and what is wrong, in one line.
    """
    if len(data) > limit:
        raise RecordError(f"{source}: too large ({len(data) >> 20} MiB; "
                          f"{'a record is ' if limit == MAX_BYTES else ''}at most "
                          f"{limit >> 20} MiB)")
    depth = nesting_depth(data)
    if depth > MAX_DEPTH:
        raise RecordError(f"{source}: not a game record (nested {depth} deep; a record "
                          f"nests at most {MAX_DEPTH})")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise RecordError(f"{source}: not a game record (not UTF-8 text)") from None
    try:
        return json.loads(text, parse_int=_number, parse_float=_number,
                          parse_constant=_constant)
    except RecordError as err:
        raise RecordError(f"{source}: not a game record ({err})") from None
    except json.JSONDecodeError as err:
        raise RecordError(f"{source}: not JSON ({err})") from None
    except (RecursionError, ValueError) as err:  # the checks above should leave none
        raise RecordError(f"{source}: not a game record ({type(err).__name__})") from None


def gunzip(data: bytes, *, source: str = "record") -> bytes:
    """The bytes gzip ``data`` (one member or several) decompresses to, never more than
    :data:`MAX_BYTES` and a byte made: a file of a few KiB can inflate to gigabytes.

    :raises RecordError: naming ``source``, for more than :data:`MAX_BYTES` of text or bytes
        that are not whole gzip.
    """
    out: list[bytes] = []
    room = MAX_BYTES + 1
    rest = data
    try:
        while rest:
            unzip = zlib.decompressobj(wbits=31)  # 31: a gzip header and trailer
            piece = unzip.decompress(rest, room)
            out.append(piece)
            room -= len(piece)
            if room <= 0 or unzip.unconsumed_tail:
                raise RecordError(f"{source}: too large (it decompresses to more than "
                                  f"{MAX_BYTES >> 20} MiB; a record is at most "
                                  f"{MAX_BYTES >> 20} MiB)")
            if not unzip.eof:
                raise RecordError(f"{source}: not a game record (compressed, and cut short)")
            rest = unzip.unused_data
    except zlib.error as err:
        raise RecordError(f"{source}: not a game record (compressed, and damaged: {err})"
                          ) from None
    return b"".join(out)


def read_json(path: Path) -> Any:
    """The JSON of file ``path``, plain or gzip-compressed, read as :func:`load_json` bounds it
    (never more than :data:`MAX_BYTES` and a byte read, nor decompressed: :func:`gunzip`).

    :raises RecordError: for a file that cannot be read or is not such JSON, in one line.
    """
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_BYTES + 1)
    except IsADirectoryError:
        raise RecordError(f"{path}: is a folder, not a record file (replay --verify reads "
                          f"folders)") from None
    except OSError as err:
        raise RecordError(f"{path}: cannot read: {(err.strerror or str(err)).lower()}") from None
    if len(data) > MAX_BYTES:
        raise RecordError(f"{path}: too large (over {MAX_BYTES >> 20} MiB; a record is at "
                          f"most {MAX_BYTES >> 20} MiB)")
    if data[:2] == _GZIP_MAGIC:
        data = gunzip(data, source=str(path))
    return load_json(data, source=str(path))


def record_file(games: Path, match_id: str) -> Path:
    """The record file of match ``match_id`` in folder ``games``: ``<id>.json.gz``, or the
    ``<id>.json`` of an older run where only that one is there (one or two look-ups)."""
    new = games / f"{match_id}{SUFFIX}"
    if not new.exists():
        old = games / f"{match_id}.json"
        if old.exists():
            return old
    return new


def record_id(name: str) -> str | None:
    """The match id of a record file's name (``r1-g001-s01.json.gz`` or ``r1-g001-s01.json``),
    ``None`` for another name."""
    for suffix in SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[:-len(suffix)]
    return None


def deal_to_json(deal: Deal, dealer: int) -> HandDict:
    """A hand entry holding the deal, with no turns yet."""
    return {
        "dealer": dealer,
        "hands": [[str(c) for c in h] for h in deal.hands],
        "layout": [str(c) for c in deal.layout],
        "stock": [str(c) for c in deal.stock],
        "turns": [],
        "scores": [],
    }


def deal_from_json(entry: HandDict | dict[str, Any]) -> Deal:
    """The deal of a hand entry, checked to be exactly one deck.

    :raises referee.game.rules.DealError: if it is not.
    :raises referee.game.cards.CardError: for a string that is not a card.
    """
    return Deal.from_cards(entry["hands"], entry["layout"], entry["stock"])


def dumps(record: RecordDict) -> str:
    """The record as JSON text (one turn per line, so records diff and grep well)."""
    hands = []
    for h in record["hands"]:
        turns = ",\n".join("        " + json.dumps(t) for t in h["turns"])
        head = {k: v for k, v in h.items() if k not in ("turns", "scores", "luck")}
        body = json.dumps(head)[:-1]
        luck = f', "luck": {json.dumps(h["luck"])}' if "luck" in h else ""
        hands.append(f'    {body}, "turns": [\n{turns}\n      ], '
                     f'"scores": {json.dumps(h["scores"])}{luck}}}')
    top = [f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in record.items() if k != "hands"]
    return "{\n" + ",\n".join(top) + ',\n  "hands": [\n' + ",\n".join(hands) + "\n  ]\n}\n"


def write_record(record: RecordDict, path: Path) -> None:
    """Writes ``record`` to ``path`` atomically (see :func:`write_atomic`): gzip-compressed
    (:data:`GZIP_LEVEL`, no time stamp: the same record, the same bytes) when ``path``'s name
    ends in ``.gz`` (or is a cluster worker's temporary name for one, ``.<name>.gz.<hex>.tmp``,
    renamed by the coordinator), else as JSON text."""
    text = dumps(record)
    name = path.name
    if name.endswith(".gz") or (name.endswith(".tmp") and ".gz." in name):
        write_atomic(path, compress(text))
    else:
        write_atomic(path, text)


def compress(text: str) -> bytes:
    """A record's JSON text as a compressed record file's bytes (gzip, :data:`GZIP_LEVEL`)."""
    return gzip.compress(text.encode("utf-8"), GZIP_LEVEL, mtime=0)


def current_umask() -> int:
    """The process umask, read without changing it (``/proc``; ``022`` where unreadable)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    return 0o022


def write_atomic(path: Path, text: str | bytes, *, mode: int | None = None,
                 sync: bool = True) -> None:
    """Writes ``text`` (or bytes) to ``path`` through a temporary file in the same folder,
    synced, then renamed over ``path``: a reader never sees half a file, even after a crash.
    The file gets permissions ``mode`` (default: ``0666`` less the umask, like any new file).
    ``sync=False``: not synced (a reader still sees the old or the new file, never half of
    one, but a crash of the machine may lose it): for a view rewritten often, such as the
    report's heartbeat."""
    if mode is None:
        mode = 0o666 & ~current_umask()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        try:
            os.fchmod(fd, mode)  # mkstemp makes it private
        except BaseException:
            os.close(fd)  # not yet owned by a file object
            raise
        data = text.encode("utf-8") if isinstance(text, str) else text
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            if sync:
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_record(path: Path) -> RecordDict:
    """Reads a record, plain or gzip-compressed JSON, and checks its format and version (not its
    content: see verification).

    :raises RecordError: for a missing file, text that is not JSON (or JSON too large, too
        deep or with too long a number: :func:`load_json`; compressed bytes that are damaged
        or would decompress to more than :data:`MAX_BYTES`), or another format or version.
    """
    return _checked(read_json(path), str(path))


def loads(text: str, *, source: str = "record") -> RecordDict:
    """Parses record JSON text and checks its format and version.

    :raises RecordError: as :func:`read_record`.
    """
    return _checked(load_json(text.encode("utf-8", "surrogatepass"), source=source), source)


def _checked(data: Any, source: str) -> RecordDict:
    if not isinstance(data, dict):
        raise RecordError(f"{source}: not a game record (a JSON {type(data).__name__})")
    if "format" not in data:
        raise RecordError(f"{source}: not a game record (it has no \"format\": {FORMAT!r})")
    if data["format"] != FORMAT:
        raise RecordError(f"{source}: not a game record (its format is {data['format']!r}, "
                          f"not {FORMAT!r})")
    if data.get("version") != VERSION:
        raise RecordError(f"{source}: unsupported version {data.get('version')!r}, "
                          f"this referee reads version {VERSION}")
    return data  # type: ignore[return-value]
