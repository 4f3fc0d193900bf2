"""The league's page: one static HTML file (``report/index.html``, with its data beside it in
``report/league.json``), written atomically as the league plays; it draws from the file
system or any static server, needs no script, and reloads itself while the league runs (a
snapshot of the folder is publishable as it is). Every text a submitter chose (names are
letters, digits, ``-``, ``_``, ``.``; refusal reasons quote their bots) is escaped.

>>> row = {"name": "a", "author": "a", "version": 1, "mu": 25, "sigma": 8, "score": 1,
...     "sets": 0, "matches": 0, "wins": 0,
...     "points_per_hand": None, "faults": 0, "history": [], "active": True, "why": ""}
>>> '<a href="#a">a</a>' in render({"name": "l", "live": False, "rows": [row]})
True
"""

from __future__ import annotations

import html
import json
import time
from pathlib import Path
from typing import Any

from referee.records.record import write_atomic
from referee.tournament.stopping import interval_ends

__all__ = ["render", "sparkline", "verdict_text", "write_page"]

_STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em auto;max-width:70em;padding:0 1em;
color:#222}
table{border-collapse:collapse;margin:.5em 0;display:block;max-width:100%;overflow-x:auto}
td,th{padding:.2em .6em;text-align:right;
border-bottom:1px solid #ddd}td:nth-child(2),th:nth-child(2),td.l{text-align:left}
.muted{color:#777}.bad{color:#a00}h2{margin-top:1.5em}svg{vertical-align:middle}
code{font-size:90%}
"""

VIEWPORT = "<meta name=viewport content='width=device-width, initial-scale=1'>"
"""A phone draws the page at its own width (the tables scroll in their own box)."""


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


def _row_cells(r: dict[str, Any], rank: int | str, lo: float, hi: float, *,
               line: bool = True, verdict: str | None = None) -> str:
    ppm = "" if r.get("points_per_hand") is None else f"{r['points_per_hand']:.2f}"
    return (f"<td>{rank}</td><td><a href=\"#{_e(r['author'])}\">{_e(r['name'])}</a></td>"
            f"<td>{r['score']:.2f}</td><td>{r['mu']:.2f}</td><td>{r['sigma']:.2f}</td>"
            f"<td>{r['sets']}</td><td>{r['matches']}</td><td>{r['wins']}</td><td>{ppm}</td>"
            f"<td>{r['faults']}</td><td>{_p(r.get('p_above_next'))}</td>"
            + (f"<td class=l>{_e(verdict)}</td>" if verdict is not None else "")
            + (f"<td>{sparkline(r['history'], lo=lo, hi=hi)}</td>" if line else ""))


EARLY_WIDTH = 0.5
"""An interval wider than this share of a hand's points says nothing yet (the tournament
page's rule)."""


def verdict_text(pair: dict[str, Any] | None, *, confidence: float, bound: float) -> str:
    """A row's verdict against the next one down, as a tournament's page says it:
    ``stronger +5.6 (+3.5 to +7.7) pts/hand, 95% sure, 3 sets``, ``open +1.2 (-2.9 to +5.3)
    pts/hand, 3 sets``: the interval's own ends (it is not centred on the difference).

    >>> verdict_text({"verdict": "open", "diff": 1.2, "low": -2.9, "high": 5.3, "sets": 3},
    ...              confidence=0.95, bound=240)
    'open +1.2 (-2.9 to +5.3) pts/hand, 3 sets'
    """
    if pair is None:
        return ""
    verdict, diff, sets = pair.get("verdict", "open"), pair.get("diff"), pair.get("sets", 0)
    tail = f", {sets} set{'s' if sets != 1 else ''}"
    if diff is None:
        return f"{verdict} (never met)"
    sure = "" if verdict == "open" else f", {confidence:.0%} sure"
    low, high = pair.get("low"), pair.get("high")
    if low is None or high is None or high - low > EARLY_WIDTH * bound:
        if verdict == "open":
            return f"open: too early to tell{tail} ({diff:+.1f} pts/hand so far)"
        return f"{verdict} {diff:+.1f} pts/hand{sure}{tail}"
    return f"{verdict} {diff:+.1f} ({interval_ends(low, high)}) pts/hand{sure}{tail}"


def _p(p: float | None) -> str:
    return "" if p is None else f"{100 * p:.0f}%"

_VERDICTS_NOTE = (
    "<p class=muted>Verdict vs next: the sequential test of the two versions' difference in "
    "points a hand over the duplicate sets they shared (adjusted for the luck of the stock "
    "flips), as a tournament's: <em>stronger</em> once it is {confidence} sure over the whole "
    "season however often it is looked at, <em>open</em> until then, <em>weaker</em> when the "
    "test says the next one down is stronger (the ratings and the test disagree); in brackets, "
    "the ends of its anytime-valid interval at the pair's level (not centred on the "
    "difference). Every verdict reads every set its pair played; a version's pairs are "
    "forgotten when it retires.</p>")


def _audit(flags: list[str], confidence: float) -> str:
    """The fair-play audit's section."""
    head = ("<h2>Fair-play audit</h2><p class=muted>Whether a version does better (or worse) "
            "in the later seatings of a duplicate set than in the first-played one, as a "
            "tournament's audit (a randomization test, each version at its share of "
            f"{1 - confidence:.0%} over the season). A cheat's gain is its opponents' loss: one "
            "flagged <em>loses later</em> may be the victim of one that gains; look at their "
            "records.</p>")
    if not flags:
        return head + "<p>No version flagged.</p>"
    return head + "<ul>" + "".join(f"<li class=bad>{_e(f)}</li>" for f in flags) + "</ul>"


def render(data: dict[str, Any]) -> str:
    """The page of ``data`` (:meth:`referee.league.season.League.page_data`)."""
    rows: list[dict[str, Any]] = data.get("rows", [])
    mus = [p[1] for r in rows for p in r["history"]] or [25.0]
    lo, hi = min(mus) - 1, max(mus) + 1
    head = ("<tr><th>#</th><th>version</th><th>score</th><th>mu</th><th>sigma</th>"
            "<th>sets</th><th>matches</th><th>wins</th><th>points/hand</th><th>faults</th>"
            "<th title='the probability that it is truly stronger than the next one down'>"
            "P(&gt;&nbsp;next)</th>")
    board_head = head + ("<th title='the sequential test on the two, valid however often it "
                         "is looked at'>verdict vs next</th></tr>")
    confidence = float(data.get("confidence", 0.95))
    bound = float(data.get("hand_points", 240))
    head += "<th>rating over time</th></tr>"
    active = [r for r in rows if r["active"]]
    board = "".join(
        "<tr>" + _row_cells(r, i, lo, hi, line=False, verdict=verdict_text(
            r.get("next"), confidence=confidence, bound=bound)) + "</tr>"
        for i, r in enumerate(active, 1))
    refresh = '<meta http-equiv="refresh" content="5">' if data.get("live") else ""
    state = ("playing" if data.get("live") else
             "stopped (not playing now: the same command goes on)")
    parts = [f"<!doctype html><html lang=en><head><meta charset=utf-8>{VIEWPORT}{refresh}"
             f"<title>{_e(data['name'])}: league</title><style>{_STYLE}</style></head><body>",
             f"<h1>{_e(data['name'])}</h1>",
             f"<p>{_e(state)} · {data.get('matches', 0):,} matches, {data.get('sets', 0):,} "
             f"sets rated · {len(active)} versions playing · updated "
             f"{_e(data.get('updated', ''))}</p>",
             (f"<p class=bad>On a Dask cluster: {_e(data['cluster'])}.</p>"
              if data.get("cluster") else ""),
             (f"<p class=bad>Weaker bot limits here: {_e('; '.join(data['limits']))}.</p>"
              if data.get("limits") else ""),
             "<h2>Leaderboard</h2><p class=muted>Ranked by the conservative score mu - 3 "
             "sigma (TrueSkill, one update per duplicate set, on points less the luck of the "
             "stock flips); P(&gt; next): the probability that a version is truly stronger "
             "than the next one down.</p>",
             _VERDICTS_NOTE.format(confidence=f"{confidence:.0%}"),
             f"<table>{board_head}{board}</table>"]
    parts.append(_audit(data.get("flags", []), confidence))
    newest = data.get("newest", [])
    if newest:
        parts.append("<h2>Newest results</h2><table><tr><th>match</th><th>players</th>"
                     "<th>totals</th><th>faults</th></tr>")
        for m in newest:
            players = ", ".join(_e(p) for p in m["players"])
            parts.append(f"<tr><td>{_e(m['id'])}</td><td class=l>{players}</td>"
                         f"<td>{_e(' - '.join(str(t) for t in m['totals']))}</td>"
                         f"<td>{_e(m['faults'])}</td></tr>")
        parts.append("</table>")
    refused = data.get("refused", {})
    if refused:
        parts.append("<h2>Refused</h2><table>")
        for author, why in sorted(refused.items()):
            parts.append(f"<tr><td class=l>{_e(author)}</td><td class='l bad'>{_e(why)}</td>"
                         f"</tr>")
        parts.append("</table>")
    parts.append("<h2>Entrants</h2>")
    by_author: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by_author.setdefault(r["author"], []).append(r)
    for author in sorted(by_author):
        versions = sorted(by_author[author], key=lambda r: -r["version"])
        parts.append(f"<h3 id=\"{_e(author)}\">{_e(author)}</h3><table>{head}")
        for r in versions:
            first = r.get("first_s")
            tag = "" if r["active"] else f" <span class=muted>({_e(r['why'])})</span>"
            if first is not None:
                tag += f" <span class=muted>first set {first:.1f} s after its folder was seen" \
                       f"</span>"
            cells = _row_cells(r, "" if not r["active"] else "·", lo, hi)
            parts.append(f"<tr>{cells}</tr>" if not tag else
                         f"<tr>{cells}<td class='l muted'>{tag}</td></tr>")
        parts.append("</table>")
    log = data.get("log", [])
    if log:
        parts.append("<h2>Log</h2><pre>" + _e("\n".join(log)) + "</pre>")
    parts.append("</body></html>\n")
    return "".join(parts)


def write_page(folder: Path, data: dict[str, Any]) -> None:
    """Writes ``index.html`` and ``league.json`` into ``folder`` (made if missing)."""
    folder.mkdir(parents=True, exist_ok=True)
    data = dict(data, updated=time.strftime("%Y-%m-%d %H:%M:%S"))
    write_atomic(folder / "league.json", json.dumps(data, separators=(",", ":")))
    write_atomic(folder / "index.html",  # a name no UTF-8 can say, written as an escape
                 render(data).encode("utf-8", "backslashreplace"))
