"""The league's page, drawn from its data (:func:`render`): one static HTML file, no script,
that reloads itself while the league plays (a copy of ``report/`` is publishable as it is).

Phone first: at 390 px the leaderboard comes right after the title, each row its rank, name
(cut with an ellipsis where long) and verdict against the next one down (the short words); the
refusals follow it, each with the end of its bot's stderr; no table is wider than the screen
(the columns a phone cannot hold are left out, long names wrap elsewhere). Every finished
match links to its replay (the tournament report's one replay page, ``replay.html#id=<id>``),
and each author's section lists its newest matches (the lists of every match:
:mod:`referee.league.live`). Every text a submitter chose (names, refusal reasons, a bot's
stderr) is escaped.

>>> row = {"name": "a", "author": "a", "version": 1, "mu": 25, "sigma": 8, "score": 1,
...     "sets": 0, "matches": 0, "wins": 0,
...     "points_per_hand": None, "faults": 0, "history": [], "active": True, "why": ""}
>>> 'href="#a" title="a">a</a>' in render({"name": "l", "live": False, "rows": [row]})
True
"""

from __future__ import annotations

import html
from typing import Any
from urllib.parse import quote

from referee.web.folder import pair_text
from referee.web.replay_html import SHARED_PAGE

__all__ = ["REFUSED_SHOWN", "list_head", "match_row", "render", "sparkline"]

REFUSED_SHOWN = 200
"""Refusals listed on the page (then a count)."""

_STYLE = """
body{font:15px/1.4 system-ui,sans-serif;margin:1em auto;max-width:70em;padding:0 .6em;
color:#222}
h1{font-size:1.5em;margin:.3em 0}h2{margin:1.2em 0 .3em;font-size:1.2em}
table{border-collapse:collapse;margin:.4em 0;width:100%}
td,th{padding:.2em .4em;text-align:right;border-bottom:1px solid #ddd;vertical-align:top}
td.l,th.l{text-align:left}td.n{overflow-wrap:anywhere;word-break:break-word}
.muted{color:#666}.bad{color:#a00}svg{vertical-align:middle}code{font-size:90%}
a.id{white-space:nowrap}pre{white-space:pre-wrap;overflow-wrap:anywhere;margin:.2em 0;
font-size:85%;background:#f6f6f6;padding:.3em}
ul.refused{padding-left:1.1em}ul.refused li{margin:.3em 0}
.short{display:none}
@media (max-width:40em){.w,.s{display:none}.short{display:inline}.long{display:none}
body{font-size:14px;margin-top:.4em}h1{font-size:1.3em}h2{margin-top:.8em}
td,th{padding:.15em .25em}
#board td.n{max-width:7em;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}}
"""

VIEWPORT = "<meta name=viewport content='width=device-width, initial-scale=1'>"
"""A phone draws the page at its own width."""


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def sparkline(history: list[list[float]], *, lo: float, hi: float, width: int = 160,
              height: int = 28) -> str:
    """A version's mu over the league's sets as an inline SVG line (``lo``..``hi``: the
    page's common scale).

    >>> sparkline([[1, 20, 5], [2, 30, 4]], lo=0, hi=50).startswith("<svg")
    True
    """
    if len(history) < 2:
        return ""
    x0, x1 = history[0][0], history[-1][0]
    span_x, span_y = max(1.0, x1 - x0), max(1e-9, hi - lo)
    points = " ".join(f"{(x - x0) / span_x * width:.1f},{height - (mu - lo) / span_y * height:.1f}"
                      for x, mu, _ in history)
    return (f'<svg width="{width}" height="{height}" role="img" aria-label="rating over time">'
            f'<polyline fill="none" stroke="#36c" stroke-width="1.5" points="{points}"/></svg>')


def _p(p: float | None) -> str:
    return "" if p is None else f"{100 * p:.0f}%"


def _verdict(pair: dict[str, Any] | None, confidence: float, bound: float) -> str:
    """A row's verdict against the next one down: the tournament's words
    (:func:`~referee.web.folder.pair_text`), short on a phone."""
    if pair is None:
        return ""
    long = pair_text(pair, bound, confidence=confidence)
    short = pair_text(pair, bound, short=True, confidence=confidence)
    return f"<span class=long>{_e(long)}</span><span class=short>{_e(short)}</span>"


def _cells(r: dict[str, Any], rank: int | str, *, verdict: str | None = None,
           line: str = "") -> str:
    """A version's cells: rank, name, score, then the wide ones (``w``: not on a phone)."""
    ppm = "" if r.get("points_per_hand") is None else f"{r['points_per_hand']:.2f}"
    wide = (f"{r['mu']:.2f}", f"{r['sigma']:.2f}", r["sets"], r["matches"], r["wins"], ppm,
            r["faults"], _p(r.get("p_above_next")))
    return (f"<td>{rank}</td><td class='l n'><a href=\"#{_e(r['author'])}\" "
            f"title=\"{_e(r['name'])}\">{_e(r['name'])}</a></td><td class=s>{r['score']:.2f}</td>"
            + "".join(f"<td class=w>{_e(x)}</td>" for x in wide)
            + (f"<td class=l>{verdict}</td>" if verdict is not None else "")
            + (f"<td class='w l'>{line}</td>" if line else ""))


_HEAD = ("<th>#</th><th class=l>version</th><th class=s title='mu - 3 sigma'>score</th>"
         + "".join(f"<th class=w>{h}</th>" for h in (
             "mu", "sigma", "sets", "matches", "wins", "points/hand", "faults",
             "<span title='the probability that it is truly stronger than the next one "
             "down'>P(&gt;&nbsp;next)</span>")))

_BOARD_NOTE = (
    "<details><summary class=muted>What the leaderboard says</summary><p class=muted>Ranked "
    "by the conservative score mu - 3 sigma (TrueSkill, one update per duplicate set, on "
    "points less the luck of the stock flips). Verdict vs next: the sequential test of the "
    "two versions' difference in points a hand over the duplicate sets they shared (adjusted "
    "for the luck of the stock flips), as a tournament's: <em>stronger</em> once it is "
    "{confidence} sure over the whole season however often it is looked at, <em>open</em> "
    "until then, <em>weaker</em> when the test says the next one down is stronger (the "
    "ratings and the test disagree); in brackets, the ends of its anytime-valid interval at "
    "the pair's level (not centred on the difference). Every verdict reads every set its "
    "pair played; a version's pairs are forgotten when it retires. P(&gt; next): the "
    "probability that a version is truly stronger than the next one down.</p></details>")


def _board(data: dict[str, Any], active: list[dict[str, Any]]) -> list[str]:
    confidence = float(data.get("confidence", 0.95))
    bound = float(data.get("hand_points", 240))
    rows = "".join("<tr>" + _cells(r, i, verdict=_verdict(r.get("next"), confidence, bound))
                   + "</tr>" for i, r in enumerate(active, 1))
    return ["<h2>Leaderboard</h2>",
            f"<table id=board><tr>{_HEAD}<th class=l>verdict vs next</th></tr>{rows}</table>",
            _BOARD_NOTE.format(confidence=f"{confidence:.0%}")]


def _refused(refused: dict[str, Any]) -> list[str]:
    """The refusals, each with the end of its bot's stderr (escaped)."""
    if not refused:
        return []
    items = []
    for author in sorted(refused)[:REFUSED_SHOWN]:
        why = refused[author]
        reason, tail = (why.get("reason", ""), why.get("stderr") or []) \
            if isinstance(why, dict) else (why, [])
        item = f"<li id=\"refused-{_e(author)}\"><b>{_e(author)}</b>: " \
               f"<span class=bad>{_e(reason)}</span>"
        if tail:
            item += ("<details><summary>the end of its stderr</summary><pre>"
                     + _e("\n".join(str(x) for x in tail)) + "</pre></details>")
        items.append(item + "</li>")
    more = len(refused) - REFUSED_SHOWN
    tail = f"<p class=muted>and {more:,} more (league.jsonl has them all)</p>" \
        if more > 0 else ""
    return ["<h2>Refused</h2><ul class=refused>", *items, "</ul>", tail]


def _audit(flags: list[str], confidence: float) -> list[str]:
    """The fair-play audit's section."""
    head = ("<h2>Fair-play audit</h2><details><summary class=muted>What it checks</summary>"
            "<p class=muted>Whether a version does better (or worse) in the later seatings of "
            "a duplicate set than in the first-played one, as a tournament's audit (a "
            "randomization test, each version at its share of "
            f"{1 - confidence:.0%} over the season). A cheat's gain is its opponents' loss: "
            "one flagged <em>loses later</em> may be the victim of one that gains; look at "
            "their records.</p></details>")
    if not flags:
        return [head, "<p>No version flagged.</p>"]
    return [head, "<ul>", *(f"<li class=bad>{_e(f)}</li>" for f in flags), "</ul>"]


def match_row(m: dict[str, Any], root: str = "") -> str:
    """A finished match's row: its replay linked (``root``: the way to ``report/`` from the
    page the row is in)."""
    players = ", ".join(_e(p) for p in m["players"])
    return (f"<tr><td class=l><a class=id href=\"{root}{SHARED_PAGE}#id={quote(str(m['id']))}\">"
            f"{_e(m['id'])}</a></td><td class='l n'>{players}</td>"
            f"<td>{_e(' - '.join(str(t) for t in m['totals']))}</td>"
            f"<td class=w>{_e(m['faults'])}</td></tr>")


_MATCHES_HEAD = ("<table><tr><th class=l>match (replay)</th><th class=l>players</th>"
                 "<th>totals</th><th class=w>faults</th></tr>")


def _matches(items: list[dict[str, Any]]) -> str:
    return _MATCHES_HEAD + "".join(map(match_row, items)) + "</table>"


def list_head(league: str, whose: str, root: str = "") -> str:
    """The start of a list of every finished match (``whose``: ``every`` or an author's name),
    to which :func:`match_row` rows are appended as sets finish (oldest first; a page a
    browser draws unclosed)."""
    return (f"<!doctype html><html lang=en><head><meta charset=utf-8>{VIEWPORT}"
            f"<title>{_e(league)}: {_e(whose)} matches</title><style>{_STYLE}</style></head>"
            f"<body><p><a href=\"{root}index.html\">&#8592; league page</a></p>"
            f"<h1>{_e(league)}: {_e(whose)} matches</h1><p class=muted>Every match of a finished "
            f"duplicate set, oldest first; each links to its replay.</p>{_MATCHES_HEAD}\n")


def _authors(data: dict[str, Any], rows: list[dict[str, Any]]) -> list[str]:
    """A section per author: its versions, their ratings over time, its newest matches."""
    mus = [p[1] for r in rows for p in r["history"]] or [25.0]
    lo, hi = min(mus) - 1, max(mus) + 1
    own: dict[str, list[dict[str, Any]]] = data.get("own", {})
    parts = ["<h2>Entrants</h2>"]
    by_author: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by_author.setdefault(r["author"], []).append(r)
    for author in sorted(by_author):
        versions = sorted(by_author[author], key=lambda r: -r["version"])
        parts.append(f"<h3 id=\"{_e(author)}\">{_e(author)}</h3><table><tr>{_HEAD}"
                     f"<th class='w l'>rating over time</th></tr>")
        for r in versions:
            first = r.get("first_s")
            tag = "" if r["active"] else f" <span class=muted>({_e(r['why'])})</span>"
            if first is not None:
                tag += f" <span class=muted>first set {first:.1f} s after its folder was " \
                       f"seen</span>"
            line = sparkline(r["history"], lo=lo, hi=hi) or "&nbsp;"
            parts.append(f"<tr>{_cells(r, '' if not r['active'] else '·', line=line)}</tr>"
                         + (f"<tr><td></td><td class='l n' colspan=3>{tag}</td></tr>"
                            if tag else ""))
        parts.append("</table>")
        if own.get(author):
            parts.append(f"<p class=muted>Its newest matches (of finished sets; each links to "
                         f"its replay; <a href=\"authors/{_e(quote(author))}.html\">all of "
                         f"them</a>):</p>{_matches(own[author])}")
    return parts


def render(data: dict[str, Any]) -> str:
    """The page of ``data`` (:meth:`referee.league.season.League.page_data`)."""
    rows: list[dict[str, Any]] = data.get("rows", [])
    active = [r for r in rows if r["active"]]
    confidence = float(data.get("confidence", 0.95))
    refresh = '<meta http-equiv="refresh" content="5">' if data.get("live") else ""
    state = ("playing" if data.get("live") else
             "stopped (not playing now: the same command goes on)")
    parts = [f"<!doctype html><html lang=en><head><meta charset=utf-8>{VIEWPORT}{refresh}"
             f"<title>{_e(data['name'])}: league</title><style>{_STYLE}</style></head><body>",
             f"<h1>{_e(data['name'])}</h1>",
             f"<p>{_e(state)} · {data.get('matches', 0):,} matches, {data.get('sets', 0):,} "
             f"sets rated · {len(active)} versions playing · updated "
             f"{_e(data.get('updated', ''))}</p>"]
    if data.get("resting"):
        parts.append(f"<p class=muted>Resting: {_e(data['resting'])}.</p>")
    if data.get("cluster"):
        parts.append(f"<p class=bad>On a Dask cluster: {_e(data['cluster'])}.</p>")
    if data.get("limits"):
        parts.append(f"<p class=bad>Weaker bot limits here: {_e('; '.join(data['limits']))}.</p>")
    parts += _board(data, active)
    parts += _refused(data.get("refused", {}))
    parts += _audit(data.get("flags", []), confidence)
    newest = data.get("newest", [])
    if newest:
        parts += ["<h2>Newest results</h2><p class=muted>Matches of finished duplicate sets, "
                  "newest first; each links to its replay (<a href=\"matches.html\">every "
                  "match</a>).</p>", _matches(newest)]
    parts += _authors(data, rows)
    log = data.get("log", [])
    if log:
        parts.append("<h2>Log</h2><pre>" + _e("\n".join(log)) + "</pre>")
    parts.append("</body></html>\n")
    return "".join(parts)
