"""The tournament report's page, drawn from a :class:`referee.web.report.Folder` (no I/O).

Every text that comes from a bot or a file (names, fault details, ids) is escaped for HTML. The
page needs no network and no script: the chart is inline SVG.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from html import escape
from typing import Any

from referee.game.faults import Fault
from referee.tournament.ratings import MatchResult, Standings
from referee.web.folder import Folder, Match

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
           "#17becf", "#bcbd22", "#7f7f7f")
"""Line colours of the chart, by entrant (repeating with a dash pattern after ten)."""

STOPPED = {"settled": "stopped early: every adjacent pair has a verdict",
           "cap": "stopped at the match cap, some pairs still open",
           "complete": "every planned match played"}
"""What ``standings.json``'s ``stopped`` means, in words."""

CHART_POINTS = 300
"""At most this many points per line of the rating chart."""


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _num(value: Any, places: int = 2) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return ""
    return f"{value:.{places}f}"


def _count(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else many or one + 's'}"


def _pct(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return ""
    return f"{100 * value:.0f}%"


def _results(folder: Folder) -> list[MatchResult]:
    return [MatchResult(m.players, m.totals, m.ranks, m.hands,
                        tuple((int(f.get("seat", -1)), str(f.get("fault", "?")))
                              for f in m.faults)) for m in folder.matches]


def playing(folder: Folder) -> list[str]:
    """The entrants that played a finished match (all of them before any match ends)."""
    seen = {p for m in folder.matches for p in m.players}
    return [n for n in folder.entrants if n in seen] if seen else list(folder.entrants)


def rating_history(folder: Folder) -> tuple[list[int], dict[str, list[float]]]:
    """Each entrant's ``mu`` before any match and after every ``step``-th match in schedule
    order (and after the last): the x positions (matches rated) and the values by name."""
    names = playing(folder)
    table = Standings(names, folder.rating)
    n = len(folder.matches)
    step = max(1, math.ceil(n / CHART_POINTS))
    xs: list[int] = []
    ys: dict[str, list[float]] = {name: [] for name in names}

    def sample(x: int) -> None:
        xs.append(x)
        mus = {row.name: row.mu for row in table.standings()}
        for name in names:
            ys[name].append(mus[name])

    sample(0)
    for k, result in enumerate(_results(folder), 1):
        try:
            table.add(result)
        except (KeyError, ValueError):
            continue
        if k % step == 0 or k == n:
            sample(k)
    return xs, ys


def standings_rows(folder: Folder) -> tuple[list[dict[str, Any]], bool]:
    """The table's rows (``standings.json``'s, or rated here from the finished matches) and
    whether they are final."""
    if folder.standings is not None:
        return [r for r in folder.standings["standings"] if isinstance(r, dict)], True
    table = Standings(folder.entrants, folder.rating)
    for result in _results(folder):
        try:
            table.add(result)
        except (KeyError, ValueError):
            continue
    return [row.to_json() for row in table.standings()], False


def crosstable(folder: Folder) -> dict[tuple[str, str], tuple[float, float, int, int]]:
    """Per ordered pair (a, b): a's and b's points per hand over the matches of the duplicate
    sets they shared, the number of those sets and of those matches."""
    sums: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    sets: dict[tuple[str, str], set[str]] = defaultdict(set)
    for m in folder.matches:
        for i, a in enumerate(m.players):
            for j, b in enumerate(m.players):
                if i != j:
                    acc = sums[(a, b)]
                    acc[0] += m.totals[i]
                    acc[1] += m.totals[j]
                    acc[2] += m.hands
                    acc[3] += 1
                    sets[(a, b)].add(m.set)
    return {pair: (acc[0] / acc[2], acc[1] / acc[2], len(sets[pair]), acc[3])
            for pair, acc in sums.items() if acc[2]}


# -- sections ----------------------------------------------------------------------------------


def _anchor(folder: Folder, name: str) -> str:
    return f"entrant-{folder.entrants.index(name) + 1}" if name in folder.entrants else "faults"


def _match_href(folder: Folder, match_id: str) -> str:
    if match_id in folder.pages:
        return f"games/{_e(match_id)}.html"
    return f"../games/{_e(match_id)}.json"


def _faults_cell(folder: Folder, name: str, faults: Any) -> str:
    if not isinstance(faults, dict):
        return ""
    parts = [f"{int(v)} {_e(k)}" for k, v in faults.items()
             if isinstance(v, int) and not isinstance(v, bool) and v > 0]
    if not parts:
        return '<span class="muted">-</span>'
    return f'<a href="#{_anchor(folder, name)}">{", ".join(parts)}</a>'


def _preflight_log(folder: Folder, name: str) -> str:
    path = folder.preflight.get(name)
    return f', <a href="../{_e(path)}">its stderr</a>' if path else ""


def _verdict(pair: Any) -> str:
    if not isinstance(pair, dict):
        return ""
    text = _e(pair.get("verdict", ""))
    detail = []
    if isinstance(pair.get("diff"), int | float):
        low = _num(pair.get("low"), 1) or "−∞"
        high = _num(pair.get("high"), 1) or "∞"
        detail.append(f"{_num(pair['diff'], 1)} [{low}, {high}] pts/hand")
    if isinstance(pair.get("sets"), int):
        detail.append(_count(pair["sets"], "set"))
    return text + (f' <span class="muted">{_e(", ".join(detail))}</span>' if detail else "")


def _standings(folder: Folder) -> str:
    rows, final = standings_rows(folder)
    pairs = (folder.standings or {}).get("pairs")
    pairs = pairs if isinstance(pairs, list) else None
    head = ["#", "name", "mu", "σ", "mu−3σ", "matches", "wins", "avg rank", "pts/hand",
            "faults", "P(above next)"] + (["verdict vs next"] if pairs is not None else [])
    out = ['<table class="data standings"><thead><tr>']
    out += [f"<th>{h}</th>" for h in head]
    out.append("</tr></thead><tbody>")
    for k, row in enumerate(rows):
        name = str(row.get("name", "?"))
        flags = ""
        if row.get("disqualified"):
            why = row["disqualified"]
            title = f"disqualified {why}" if isinstance(why, str) else "disqualified"
            flags = f' <span class="tag bad" title="{_e(title)}">disqualified</span>'
        if row.get("left_out"):
            flags += ' <span class="tag bad">left out</span>'
        cells = [_e(row.get("rank", k + 1)),
                 f'<a href="#{_anchor(folder, name)}">{_e(name)}</a>{flags}',
                 _num(row.get("mu")), _num(row.get("sigma")), _num(row.get("score")),
                 _e(row.get("matches", "")), _e(row.get("wins", "")),
                 _num(row.get("mean_rank")), _num(row.get("points_per_hand"), 1),
                 _faults_cell(folder, name, row.get("faults")), _pct(row.get("p_above_next"))]
        if pairs is not None:
            by_upper = [p for p in pairs if isinstance(p, dict) and p.get("upper") == name]
            pair = by_upper[0] if by_upper else (
                pairs[k] if k < len(pairs) and not any(
                    isinstance(p, dict) and "upper" in p for p in pairs) else None)
            cells.append(_verdict(pair) if pair is not None else "")
        out.append("<tr>" + "".join(f'<td class="{"t" if i in (1, 11) else "n"}">{c}</td>'
                                    for i, c in enumerate(cells)) + "</tr>")
    out.append("</tbody></table>")
    note = ("final standings" if final else
            "provisional: rated over the matches finished so far; the final table is written "
            "when the last match is done")
    left_out = (folder.standings or {}).get("left_out")
    if isinstance(left_out, dict) and left_out:
        out.append('<p class="bad">left out: ' + "; ".join(
            f"{_e(name)} ({_e(why)}{_preflight_log(folder, name)})"
            for name, why in left_out.items()) + "</p>")
    dq = [(str(r.get("name")), r["disqualified"]) for r in rows
          if isinstance(r.get("disqualified"), str)]
    if dq:
        out.append('<p class="bad">' + "; ".join(
            f"{_e(name)} disqualified {_e(why)}" for name, why in dq) + "</p>")
    stopped = (folder.standings or {}).get("stopped")
    if stopped in STOPPED:
        note += f"; {_e(STOPPED[stopped])}"
    elif isinstance(stopped, str) and stopped:
        note += f"; stopped: {_e(stopped)}"
    return f'<p class="muted">{note}</p>' + "".join(out)


def _crosstable(folder: Folder) -> str:
    cells = crosstable(folder)
    names = playing(folder)
    if not cells:
        return '<p class="muted">no match finished yet</p>'
    out = ['<table class="data cross"><thead><tr><th></th>']
    out += [f'<th title="{_e(n)}">{_e(n)}</th>' for n in names]
    out.append("</tr></thead><tbody>")
    for a in names:
        out.append(f'<tr><th class="t">{_e(a)}</th>')
        for b in names:
            if a == b or (a, b) not in cells:
                out.append('<td class="n muted">·</td>' if a == b else '<td class="n"></td>')
                continue
            pa, pb, nsets, nmatches = cells[(a, b)]
            diff = pa - pb
            tone = "good" if diff > 0 else "bad" if diff < 0 else ""
            title = (f"{a} {pa:.1f} vs {b} {pb:.1f} points per hand over {nsets} set(s), "
                     f"{nmatches} match(es)")
            out.append(f'<td class="n {tone}" title="{_e(title)}">{diff:+.1f}'
                       f'<small>{pa:.0f}–{pb:.0f}</small></td>')
        out.append("</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def chart_svg(xs: Sequence[int], ys: dict[str, list[float]], names: Sequence[str]) -> str:
    """The rating chart: one line per entrant, ``mu`` against matches rated."""
    w, h, left, right, top, bottom = 760, 280, 44, 12, 10, 28
    values = [v for n in names for v in ys.get(n, ())]
    if not values or len(xs) < 2:
        return '<p class="muted">no match rated yet</p>'
    lo, hi = min(values), max(values)
    if hi - lo < 1:
        lo, hi = lo - 1, hi + 1
    span_x = max(1, xs[-1] - xs[0])

    def px(x: int) -> float:
        return left + (x - xs[0]) / span_x * (w - left - right)

    def py(y: float) -> float:
        return top + (hi - y) / (hi - lo) * (h - top - bottom)

    out = [f'<svg class="chart" viewBox="0 0 {w} {h}" role="img" '
           'aria-label="rating (mu) of each entrant over the matches" '
           'xmlns="http://www.w3.org/2000/svg">']
    for k in range(5):
        y = lo + (hi - lo) * k / 4
        out.append(f'<line x1="{left}" x2="{w - right}" y1="{py(y):.1f}" y2="{py(y):.1f}" '
                   f'class="grid"/><text x="{left - 6}" y="{py(y) + 4:.1f}" '
                   f'text-anchor="end">{y:.0f}</text>')
    for k in range(5):
        x = round(xs[0] + span_x * k / 4)
        out.append(f'<text x="{px(x):.1f}" y="{h - 8}" text-anchor="middle">{x}</text>')
    for i, name in enumerate(names):
        points = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in zip(xs, ys[name], strict=True))
        dash = ' stroke-dasharray="6 3"' if i >= len(PALETTE) else ""
        out.append(f'<polyline fill="none" stroke="{PALETTE[i % len(PALETTE)]}" '
                   f'stroke-width="2"{dash} points="{points}"><title>{_e(name)}: '
                   f'{ys[name][-1]:.2f}</title></polyline>')
    out.append("</svg>")
    legend = "".join(f'<span class="key"><i style="background:{PALETTE[i % len(PALETTE)]}">'
                     f"</i>{_e(n)} {ys[n][-1]:.1f}</span>" for i, n in enumerate(names))
    return "".join(out) + f'<div class="legend">{legend}</div>'


def _faults(folder: Folder) -> str:
    by_name: dict[str, list[tuple[Match, dict[str, Any]]]] = defaultdict(list)
    for m in folder.matches:
        for f in m.faults:
            seat = f.get("seat")
            if isinstance(seat, int) and 0 <= seat < len(m.players):
                by_name[m.players[seat]].append((m, f))
    out = []
    for name in folder.entrants:
        items = by_name.get(name, [])
        out.append(f'<h3 id="{_anchor(folder, name)}">{_e(name)} '
                   f'<span class="muted">{len(items)} fault{"" if len(items) == 1 else "s"}'
                   "</span></h3>")
        if not items:
            continue
        out.append('<table class="data"><thead><tr><th>match</th><th>hand</th><th>kind</th>'
                   "<th>detail</th><th>stderr</th></tr></thead><tbody>")
        for m, f in items:
            log = folder.logs.get(m.id, {}).get(int(f["seat"]))
            log_link = (f'<a href="../{_e(log)}">log</a>' if log
                        else '<span class="muted">none</span>')
            out.append(f'<tr><td class="t"><a href="{_match_href(folder, m.id)}">{_e(m.id)}</a>'
                       f'</td><td class="n">{_e(f.get("hand", ""))}</td>'
                       f'<td class="t">{_e(f.get("fault", ""))}</td>'
                       f'<td class="t detail">{_e(f.get("detail", ""))}</td>'
                       f'<td class="t">{log_link}</td></tr>')
        out.append("</tbody></table>")
    return "".join(out)


def _player(match: Match, seat: object) -> str:
    if isinstance(seat, int) and 0 <= seat < len(match.players):
        return match.players[seat]
    return "?"


def _matches(folder: Folder) -> str:
    if not folder.matches:
        return '<p class="muted">no match finished yet</p>'
    out = ['<table class="data matches"><thead><tr><th>match</th><th>set</th><th>players '
           "(points, rank)</th><th>hands</th><th>faults</th><th>stderr</th></tr></thead><tbody>"]
    for m in folder.matches:
        seats = " · ".join(
            f'<span class="{"win" if r == 1 else ""}">{_e(p)} {t} ({r})</span>'
            for p, t, r in zip(m.players, m.totals, m.ranks, strict=True))
        faults = ", ".join(f'{_e(_player(m, f.get("seat")))}: {_e(f.get("fault", ""))}'
                           for f in m.faults)
        logs = " ".join(f'<a href="../{_e(path)}" title="seat {seat}">'
                        f"{_e(m.players[seat]) if seat < len(m.players) else seat}</a>"
                        for seat, path in sorted(folder.logs.get(m.id, {}).items()))
        out.append(f'<tr id="match-{_e(m.id)}"><td class="t"><a href="{_match_href(folder, m.id)}">'
                   f'{_e(m.id)}</a></td><td class="t muted">{_e(m.set)}</td><td class="t">{seats}'
                   f'</td><td class="n">{m.hands}</td><td class="t bad">{faults}</td>'
                   f'<td class="t">{logs}</td></tr>')
    out.append("</tbody></table>")
    return "".join(out)


def _files(folder: Folder) -> str:
    """Links to the folder's data files that exist by now."""
    links = []
    if folder.standings is not None:
        links += ['<a href="../standings.json">standings.json</a>',
                  '<a href="../standings.csv">standings.csv</a>']
    if folder.matches:
        links.append('<a href="../results.jsonl">results.jsonl</a>')
    return " ".join(links)


def index_html(folder: Folder) -> str:
    """The report page, as text."""
    xs, ys = rating_history(folder)
    total_faults = sum(len(m.faults) for m in folder.matches)
    kinds = ", ".join(Fault)
    return _PAGE.format(
        title=_e(f"{folder.name} · tournament report"), name=_e(folder.name),
        summary=_e(f"{_count(len(folder.matches), 'match', 'matches')} finished · "
                   f"{_count(len(folder.entrants), 'entrant')} · "
                   f"{_count(total_faults, 'fault')}"),
        standings=_standings(folder), cross=_crosstable(folder),
        chart=chart_svg(xs, ys, playing(folder)), faults=_faults(folder), kinds=_e(kinds),
        matches=_matches(folder), css=_CSS, files=_files(folder))


_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>{css}</style>
</head>
<body>
<header><h1>{name}</h1><p class="muted">{summary}</p>
<nav><a href="#standings">standings</a> <a href="#crosstable">crosstable</a>
<a href="#ratings">ratings</a> <a href="#faults">faults</a> <a href="#matches">matches</a>
{files}</nav>
</header>
<main>
<section id="standings"><h2>Standings</h2><div class="scroll">{standings}</div></section>
<section id="crosstable"><h2>Crosstable</h2>
<p class="muted">Row against column: the row's points per hand minus the column's, over the
matches of the duplicate sets (the same deals in every seat order) both played; below, both
points per hand.</p><div class="scroll">{cross}</div></section>
<section id="ratings"><h2>Ratings over the matches</h2>
<p class="muted">TrueSkill mean (mu) of each entrant after each match, in schedule order.</p>
{chart}</section>
<section id="faults"><h2>Faults</h2><p class="muted">Kinds: {kinds}. Each links to the match and
to the bot's stderr in it.</p><div class="scroll">{faults}</div></section>
<section id="matches"><h2>Matches</h2><div class="scroll">{matches}</div></section>
</main>
<footer class="muted">written by ct-referee; <code>ct-referee report OUTPUT</code> rebuilds it
</footer>
</body>
</html>
"""

_CSS = """
:root { --ink: #1d2327; --muted: #68737d; --line: #dde3e8; --good: #1a7f37; --bad: #b42318;
  --head: #f4f6f8; --accent: #17603a; }
* { box-sizing: border-box; }
body { margin: 0; color: var(--ink); background: #fff;
  font: 15px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
header { background: #0b1f15; color: #f4f1e8; padding: 14px 20px; }
header h1 { margin: 0 0 2px; font-size: 22px; }
header .muted { color: #a9c2b3; margin: 0 0 6px; }
header nav a { color: #f2c14e; margin-right: 12px; text-decoration: none; }
main { padding: 8px 20px 20px; max-width: 1200px; }
h2 { font-size: 18px; margin: 22px 0 6px; border-bottom: 2px solid var(--accent);
  padding-bottom: 3px; }
h3 { font-size: 15px; margin: 14px 0 4px; }
.muted { color: var(--muted); }
p.muted { margin: 4px 0 8px; font-size: 13px; }
.scroll { overflow-x: auto; }
table.data { border-collapse: collapse; font-variant-numeric: tabular-nums; font-size: 14px; }
table.data th { background: var(--head); text-align: left; font-weight: 600; }
table.data th, table.data td { padding: 4px 7px; border-bottom: 1px solid var(--line);
  white-space: nowrap; }
table.standings { font-size: 13px; }
td.n { text-align: right; }
td.detail { white-space: normal; min-width: 240px; max-width: 520px; word-break: break-word; }
td small { display: block; color: var(--muted); font-size: 11px; }
.good { color: var(--good); }
.bad { color: var(--bad); }
.win { font-weight: 600; }
.tag { font-size: 11px; border-radius: 8px; padding: 1px 6px; border: 1px solid currentColor; }
a { color: #0b5cad; }
svg.chart { width: 100%; max-width: 760px; height: auto; display: block; }
svg.chart text { font-size: 11px; fill: var(--muted); }
svg.chart .grid { stroke: var(--line); }
.legend { display: flex; flex-wrap: wrap; gap: 4px 16px; font-size: 13px; margin-top: 4px; }
.legend i { display: inline-block; width: 14px; height: 4px; margin-right: 5px;
  vertical-align: middle; }
footer { padding: 10px 20px 20px; font-size: 12px; }
"""
