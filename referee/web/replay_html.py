"""A recorded match as one self-contained HTML page: the table as a picture, step by step.

:func:`match_steps` replays the record with the rules engine (:mod:`referee.records.positions`) and
takes a snapshot after the deal and after every turn (hands, table, stock, captured piles,
points); :func:`replay_html` embeds them as JSON in the page, whose script only draws step *i*.
No network, no external files: the page's style and script (``assets/replay.css``,
``assets/replay.js``, package data) are copied into it.
"""

from __future__ import annotations

import base64
import gzip
import html
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any

from referee.game.rules import Hand
from referee.records.positions import Dealt, Scored, positions
from referee.records.record import RecordDict, write_atomic


@cache
def asset(name: str) -> str:
    """The text of ``referee/web/assets/<name>`` (package data): a style or script of a page."""
    return (files("referee.web") / "assets" / name).read_text(encoding="utf-8")


def _cards(cards: Any) -> list[str]:
    return [str(c) for c in cards]


def match_steps(record: RecordDict, *, compact: bool = False) -> list[dict[str, Any]]:
    """One snapshot per step: each hand once dealt (``turn`` 0), then after each of its turns.
    ``compact`` leaves out what the page's script derives (see :func:`compact_steps`).

    .. warning:: The record must verify (:func:`referee.records.replay.check_replayable`).
    """
    first_fallback: dict[int, tuple[int, int]] = {}
    faults = {f["seat"]: f for f in record["faults"]}
    steps: list[dict[str, Any]] = []
    for pos in positions(record):
        if isinstance(pos, Scored):
            steps[-1]["scores"] = pos.scores
            continue
        if isinstance(pos, Dealt):
            step = _snap(pos.number, 0, pos.hand, pos.totals)
            step["take"] = [[e.seat, _cards(e.captured)] for e in pos.hand.events]
            steps.append(step)
            totals = pos.totals
            continue
        k, t, turn, seat = pos.number, pos.turn, pos.record, pos.seat
        options = _cards(pos.at_pick.pick_options) if pos.at_pick is not None else []
        play, turned = pos.play, pos.turned
        step = _snap(k, t, pos.after, totals, cards=not compact)
        step.update(seat=seat, by=turn.get("by", "bot"),
                    play=[str(play.card), _cards(play.captured)],
                    turned=[str(turned.card), _cards(turned.captured), options])
        if turn.get("by") == "fallback" and seat not in first_fallback and seat in faults:
            first_fallback[seat] = (k, t)
            f = faults[seat]
            step["fault"] = f"{f['fault']}: {f['detail']}"
        if turn.get("ms"):
            step["ms"] = turn["ms"]
        if turn.get("info"):
            step["info"] = turn["info"]
        steps.append(step)
    return steps


def _snap(k: int, t: int, hand: Hand, before: list[int], *, cards: bool = True
          ) -> dict[str, Any]:
    """The position of ``hand`` after turn ``t`` of hand ``k``; ``before``: the totals before
    the hand. Without ``cards``, no seat's cards nor piles."""
    points = hand.scores()
    step: dict[str, Any] = {
        "hand": k, "turn": t, "dealer": hand.dealer, "to_move": hand.to_move,
        "table": _cards(hand.table), "stock": len(hand.stock),
        "points": points, "totals": [a + b for a, b in zip(before, points, strict=True)],
    }
    if cards:
        step["hands"] = [_cards(h) for h in hand.hands]
        step["piles"] = [_cards(p) for p in hand.captured]
    return step


def page_data(record: RecordDict) -> dict[str, Any]:
    """Everything the page shows: the match and its steps, compact (:func:`compact_steps`)."""
    return {
        "id": record["id"], "tournament": record.get("tournament"),
        "variant": record["variant"], "target": record["target"],
        "players": record["players"], "hands": len(record["hands"]),
        "totals": record["totals"], "ranks": record["ranks"], "faults": record["faults"],
        "steps": match_steps(record, compact=True),
    }


def compact_steps(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The steps without what the page's script derives from the step before: after a hand's
    first step, each seat's cards (``hands``: the mover's played card removed) and captured
    piles (``piles``: the played, then the turned card with what each took). About half the
    size of a match's data; the script restores them as it loads."""
    return [s if s["turn"] == 0 else {k: v for k, v in s.items() if k not in ("hands", "piles")}
            for s in steps]


def replay_html(record: RecordDict, *, seat: int | None = None, hand: int | None = None) -> str:
    """The page, as text. ``seat`` is shown from the start (else every seat); ``hand`` is where
    it opens (else hand 1)."""
    data = page_data(record)
    data["view"] = "all" if seat is None else seat
    data["start"] = next((i for i, s in enumerate(data["steps"]) if s["hand"] == hand), 0)
    return _fill(_PAGE, head=html_head(_title(record), f"<style>{_CSS}</style>"), js=_JS,
                 data=script_json(data), result=html.escape(result_text(record)))


def _fill(page: str, **parts: str) -> str:
    """``page`` with each ``{name}`` of ``parts`` replaced in one pass: text put in (a bot's
    name, its comments) is never read again for a placeholder."""
    return re.sub(r"\{(" + "|".join(parts) + r")\}", lambda m: parts[m.group(1)], page)


def result_text(record: Mapping[str, Any]) -> str:
    """The match's result in one line, best first: ``Result: greedy wins with 1012 points ·
    random 640 · evil 380, lost by a fault (illegal)``; shared firsts ``a and b share first
    with 500 points``. Plain text (escaped where it is put in a page)."""
    players, totals, ranks = record["players"], record["totals"], record["ranks"]
    faulted = {f["seat"]: f["fault"] for f in record["faults"]}
    order = sorted(range(len(players)), key=lambda s: (ranks[s], -totals[s], s))
    first = [s for s in order if ranks[s] == 1]

    def fault(s: int) -> str:
        return f", lost by a fault ({faulted[s]})" if s in faulted else ""

    if len(first) == 1:
        s = first[0]
        head = f"{players[s]} wins with {totals[s]} points{fault(s)}"
    else:
        head = (" and ".join(players[s] for s in first)
                + f" share first with {totals[first[0]]} points")
    rest = [f"{players[s]} {totals[s]}{fault(s)}" for s in order if s not in first]
    return "Result: " + " · ".join([head, *rest])


def _title(record: RecordDict) -> str:
    return f"Chinese Ten · {record['id']} · {' vs '.join(record['players'])}"


_SCRIPT_SAFE = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026",
                              "\u2028": "\\u2028", "\u2029": "\\u2029"})


def script_json(data: Any) -> str:
    """``data`` as JSON that is safe inside a ``<script>`` element: no ``<``, ``>`` or ``&``
    (so bot text can neither end the element nor open a comment in it) and no U+2028/U+2029,
    all written as ``\\u`` escapes that JSON reads back as the same text."""
    return json.dumps(data, separators=(",", ":")).translate(_SCRIPT_SAFE)


def html_head(title: str, style: str) -> str:
    """The start of every page of ct-referee's (the replay, the report), up to ``</head>``:
    ``title`` is escaped here, ``style`` is markup (a ``<style>`` or ``<link>`` element)."""
    return ('<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>{html.escape(title)}</title>\n{style}\n</head>")


_PAGE = """{head}
<body>
<header>
  <div class="title"><h1 id="title"></h1><div id="sub" class="sub"></div>
    <div id="result" class="result">{result}</div></div>
  <nav>
    <button id="prev-hand" title="previous hand (&#8593; / PgUp)">&#9664;&#9664;</button>
    <button id="prev" title="previous turn (&#8592;)">&#9664;</button>
    <div id="where" class="where"></div>
    <button id="next" title="next turn (&#8594;)">&#9654;</button>
    <button id="next-hand" title="next hand (&#8595; / PgDn)">&#9654;&#9654;</button>
    <button id="play" title="play the turns one after another (space)"
      aria-pressed="false">&#9654; play</button>
    <label>speed <select id="speed">
      <option value="2000">slow</option><option value="1000" selected>normal</option>
      <option value="500">fast</option><option value="200">very fast</option></select></label>
    <label>seat <select id="view"></select></label>
  </nav>
</header>
<main>
  <section id="felt" class="felt"></section>
  <aside>
    <div class="panel"><h2>Scores</h2><table id="board"></table></div>
    <div class="panel grow"><h2 id="log-title">Turns</h2><ol id="log"></ol></div>
  </aside>
</main>
<footer>&#8592; &#8594; turn &#183; &#8593; &#8595; hand &#183; Home / End &#183;
space: play / pause &#183; generated by ct-referee</footer>
<script type="application/json" id="ct-data">{data}</script>
<script>{js}</script>
</body>
</html>
"""

_CSS = asset("replay.css")

_JS = asset("replay.js")


# -- pages that share one viewer (a tournament's report) -----------------------------------------

ASSETS = {"viewer.css": _CSS, "viewer.js": _JS}
"""The viewer's style and script, as files that every linked page loads (:func:`linked_page`)."""


@dataclass(frozen=True)
class ReplayPage:
    """Writes a tournament match's replay page, as the report links it (``games/<id>.html``
    in ``folder``, the report's folder: :func:`linked_page` with the report's viewer), from the
    record in hand: a tournament's worker calls it once the match's record is written
    (:attr:`referee.match.job.MatchJob.after`), so the pages are made where and while the
    matches are played, not one after another once the last ended. Plain data: it travels
    to a worker process."""

    folder: Path

    def __call__(self, record: RecordDict) -> None:
        match_id = str(record["id"])
        if not _PAGE_NAME.fullmatch(match_id):
            raise ValueError(f"not a match id: {match_id!r}")
        games = self.folder / "games"
        games.mkdir(parents=True, exist_ok=True)
        write_atomic(games / f"{match_id}.html",
                     linked_page(record, assets="../", back="../index.html"))


_PAGE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")


def linked_page(record: RecordDict, *, assets: str, back: str | None = None) -> str:
    """The page of :func:`replay_html` without its style and script: it loads ``viewer.css`` and
    ``viewer.js`` (:data:`ASSETS`) from the folder ``assets`` (a relative URL ending in ``/``),
    so thousands of matches share one copy of the viewer. ``back`` links to the page it came
    from (a tournament's report)."""
    data = page_data(record)
    data["view"], data["start"] = "all", 0
    link = "" if back is None else (f'<a class="back" href="{html.escape(back)}">'
                                    "&#8592; tournament report</a>")
    head = html_head(_title(record),
                     f'<link rel="stylesheet" href="{html.escape(assets)}viewer.css">')
    page = (_PAGE.replace("<script>{js}</script>",
                          f'<script src="{html.escape(assets)}viewer.js"></script>')
            .replace('<div class="title">', '<div class="title">' + link, 1))
    return _fill(page, head=head, data=script_json(data),
                 result=html.escape(result_text(record)))


# -- one page for every match (a tournament of any size) -----------------------------------------

SHARED_PAGE = "replay.html"
"""The report's one replay page for every match: ``replay.html#id=<match id>`` (then, as a
match's own page takes them, ``&hand=H&turn=T``, ``&fault=S``) loads that match's data from
``replays/<id>.js`` (:func:`replay_script`) as a plain ``<script>``, so it works from the file
system as from any server."""


def replay_script(record: RecordDict) -> str:
    """A match's data for :data:`SHARED_PAGE`: ``ctReplay(id, "...")``, the data of its page
    (:func:`page_data`, with its result line) as gzip-compressed JSON in base64, which the page
    decompresses (``DecompressionStream``): about a sixth of the JSON's size."""
    data = page_data(record)
    data["view"], data["start"], data["result"] = "all", 0, result_text(record)
    return _packed(data)


def replay_script_of_page(page: str, match_id: str) -> str | None:
    """:func:`replay_script` of the record that :func:`linked_page` made ``page`` from, read
    from the page: the same data (its result line from the players, totals, ranks and faults
    it holds), with no replay of the record under the rules, which is most of the cost of
    either (a tournament's worker writes the page of each match it plays: :class:`ReplayPage`).
    ``None`` where ``page`` holds no such data of ``match_id``'s."""
    start = page.find(_DATA_OPEN)
    end = page.find("</script>", start)  # script_json wrote no "<" in the data
    if start < 0 or end < 0:
        return None
    try:
        data = json.loads(page[start + len(_DATA_OPEN):end])
        if not isinstance(data, dict) or data.get("id") != match_id \
                or not isinstance(data.get("steps"), list):
            return None
        data["view"], data["start"] = "all", 0
        data["result"] = result_text(data)
    except (ValueError, KeyError, TypeError, IndexError, AttributeError):
        return None
    return _packed(data)


_DATA_OPEN = '<script type="application/json" id="ct-data">'
"""Where a page's data starts (:data:`_PAGE`)."""


def _packed(data: dict[str, Any]) -> str:
    packed = gzip.compress(script_json(data).encode("utf-8"), 6, mtime=0)
    return (f"ctReplay({script_json(str(data['id']))}, "
            f"\"{base64.b64encode(packed).decode('ascii')}\");\n")


_LOADER = asset("replay-loader.js")


def shared_page(back: str = "tournament report") -> str:
    """:data:`SHARED_PAGE`: the viewer's markup, its style and script shared (``viewer.css``,
    ``viewer.js``), no match's data: a loader reads the match from the address. ``back``: what
    its link to ``index.html`` says the page there is."""
    head = html_head("Chinese Ten \u00b7 replay", '<link rel="stylesheet" href="viewer.css">')
    link = f'<a class="back" href="index.html">&#8592; {html.escape(back)}</a>'
    page = (_PAGE.replace('<script type="application/json" id="ct-data">{data}</script>\n', "")
            .replace("<script>{js}</script>", "<script>{js}</script>", 1)
            .replace('<div class="title">', '<div class="title">' + link, 1))
    return _fill(page, head=head, result="loading\u2026", js=_LOADER)
