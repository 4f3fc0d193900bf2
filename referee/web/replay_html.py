"""A recorded match as one self-contained HTML page: the table as a picture, step by step.

:func:`match_steps` replays the record with the rules engine (:mod:`referee.records.positions`) and
takes a snapshot after the deal and after every turn (hands, table, stock, captured piles,
points); :func:`replay_html` embeds them as JSON in the page, whose script only draws step *i*.
No network, no external files.
"""

from __future__ import annotations

import html
import json
from typing import Any

from referee.game.rules import Hand
from referee.records.positions import Dealt, Scored, positions
from referee.records.record import RecordDict


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
    blob = script_json(data)
    head = html_head(_title(record), f"<style>{_CSS}</style>")
    return _PAGE.replace("{js}", _JS).replace("{data}", blob).replace("{head}", head, 1)


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
  <div class="title"><h1 id="title"></h1><div id="sub" class="sub"></div></div>
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

_CSS = """
:root { --felt: #17603a; --felt-dark: #0c3b23; --ink: #f4f1e8; --gold: #f2c14e;
  --red: #d1262f; --black: #1b1b1f; --muted: #a9c2b3; }
* { box-sizing: border-box; }
body { margin: 0; background: #0b1f15; color: var(--ink);
  font: 15px/1.35 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  min-height: 100vh; display: flex; flex-direction: column; }
header { display: flex; align-items: center; justify-content: space-between; gap: 6px 16px;
  padding: 8px 16px; background: #08160f; border-bottom: 1px solid #1f3d2c; flex-wrap: wrap; }
h1 { font-size: 19px; margin: 0; letter-spacing: .3px; }
h2 { font-size: 13px; text-transform: uppercase; letter-spacing: 1px; color: var(--muted);
  margin: 0 0 8px; }
.sub { color: var(--muted); font-size: 13px; }
.back { color: var(--gold); font-size: 13px; text-decoration: none; }
nav { display: flex; align-items: center; gap: 6px; flex-wrap: wrap; }
button { background: #1e4a33; color: var(--ink); border: 1px solid #2f6b4b; border-radius: 8px;
  padding: 6px 12px; font-size: 15px; cursor: pointer; }
button:hover { background: #2a6345; }
select { background: #1e4a33; color: var(--ink); border: 1px solid #2f6b4b; border-radius: 8px;
  padding: 5px 8px; font-size: 14px; }
label { color: var(--muted); font-size: 13px; margin-left: 8px; }
.where { min-width: 150px; text-align: center; font-variant-numeric: tabular-nums; }
.where b { color: var(--gold); }
main { flex: 1; display: grid; grid-template-columns: minmax(0, 1fr) 290px; gap: 12px;
  padding: 12px 16px; min-height: 0; }
.felt { position: relative; border-radius: 28px; padding: 18px;
  background: radial-gradient(ellipse at center, var(--felt) 0%, var(--felt-dark) 100%);
  box-shadow: inset 0 0 60px rgba(0,0,0,.55), 0 8px 24px rgba(0,0,0,.5);
  border: 10px solid #5a3a1e; display: grid; gap: 10px; min-height: 480px; min-width: 0;
  grid-template-columns: minmax(0, 1fr) minmax(0, 1.3fr) minmax(0, 1fr);
  grid-template-rows: auto 1fr auto;
  grid-template-areas: "top top top" "left center right" "bottom bottom bottom"; }
.seat { background: rgba(0,0,0,.22); border: 1px solid rgba(255,255,255,.08);
  border-radius: 14px; padding: 8px 10px; display: flex; flex-direction: column; gap: 6px;
  align-self: center; transition: box-shadow .2s; }
.seat.top, .seat.bottom { justify-self: center; min-width: 50%; }
.seat.moved { box-shadow: 0 0 0 2px var(--gold), 0 0 18px rgba(242,193,78,.45); }
.seat .name { font-weight: 600; display: flex; gap: 6px; align-items: center; flex-wrap: wrap; }
.seat .pts { margin-left: auto; white-space: nowrap; font-variant-numeric: tabular-nums; color: var(--muted);
  font-weight: 400; font-size: 13px; }
.seat .pts b { color: var(--ink); font-size: 15px; }
.badge { white-space: nowrap; font-size: 11px; padding: 1px 6px; border-radius: 9px; background: #2c5c43;
  color: var(--ink); font-weight: 600; }
.badge.dealer { background: var(--gold); color: #222; }
.badge.fb { background: #8a3b12; }
.row { display: flex; flex-wrap: nowrap; min-height: 76px; }
.seat { min-width: 0; }
.seat.left .row, .seat.right .row { flex-wrap: wrap; row-gap: 4px; padding-left: 16px; }
.seat.left .row .card, .seat.right .row .card { margin-left: -16px; }
.seat.hidden.left .row, .seat.hidden.right .row { padding-left: 40px; }
.seat.hidden.left .row .card, .seat.hidden.right .row .card { margin-left: -40px; }
.row .card + .card { margin-left: -16px; }
.pile { display: flex; flex-wrap: wrap; gap: 2px; min-height: 30px; }
.pile .empty, .row .empty { color: var(--muted); font-size: 12px; font-style: italic;
  align-self: center; }
.center { grid-area: center; display: flex; flex-direction: column; align-items: center;
  justify-content: center; gap: 16px; }
.tablecards { display: flex; flex-wrap: wrap; gap: 8px; justify-content: center;
  min-height: 84px; max-width: 440px; }
.stock { display: flex; align-items: center; gap: 10px; color: var(--muted); white-space: nowrap; }
.felt.n3 { grid-template-rows: 1fr auto; grid-template-areas: "left center right" "bottom bottom bottom"; }
.stack { position: relative; width: 54px; height: 76px; }
.stack .card { position: absolute; }
.action { background: rgba(0,0,0,.3); border-radius: 12px; padding: 8px 14px; min-height: 44px;
  text-align: center; max-width: 460px; }
.action .mini { vertical-align: middle; }
.fault { color: #ffb27a; font-size: 13px; }
.card { width: 54px; height: 76px; border-radius: 7px; background: #fffdf7; color: var(--black);
  box-shadow: 0 1px 3px rgba(0,0,0,.5); position: relative; flex: none;
  font-family: Georgia, "Times New Roman", serif; border: 1px solid #d8d2c2; }
.card.red { color: var(--red); }
.card .r { position: absolute; top: 3px; left: 5px; font-size: 16px; font-weight: 700;
  line-height: 1; text-align: center; }
.card .r i { display: block; font-style: normal; font-size: 13px; }
.card .c { position: absolute; inset: 0; display: flex; align-items: center;
  justify-content: center; font-size: 28px; padding-top: 10px; }
.card.back { background: repeating-linear-gradient(45deg, #2a3f8f 0 5px, #22357a 5px 10px);
  border: 3px solid #fffdf7; }
.card.new { box-shadow: 0 0 0 3px var(--gold), 0 0 14px rgba(242,193,78,.8); }
.mini { display: inline-flex; align-items: center; justify-content: center; width: 26px;
  height: 34px; border-radius: 4px; background: #fffdf7; color: var(--black); font-size: 12px;
  font-weight: 700; box-shadow: 0 1px 2px rgba(0,0,0,.5); line-height: 1; flex-direction: column;
  font-family: Georgia, serif; margin: 0 1px; }
.mini.red { color: var(--red); }
.mini.new { box-shadow: 0 0 0 2px var(--gold); }
.hidden .row .card + .card { margin-left: -40px; }
.row .count { margin-left: 10px; }
aside { display: flex; flex-direction: column; gap: 12px; min-height: 0; }
.panel { background: #10281b; border: 1px solid #1f3d2c; border-radius: 12px; padding: 12px; }
.panel.grow { flex: 1; overflow: auto; max-height: max(220px, calc(100vh - 300px));
  position: relative; }
.ms, .note { color: var(--muted); font-size: 12px; white-space: nowrap; }
.info { color: #cfe3d6; font-size: 13px; font-style: italic; overflow-wrap: anywhere;
  text-align: left; }
li .info { display: block; font-size: 12px; color: var(--muted); }
.badge.faulted { background: #b4461b; }
table { width: 100%; border-collapse: collapse; font-variant-numeric: tabular-nums; }
td { padding: 3px 4px; border-bottom: 1px solid #1f3d2c; }
td.n { text-align: right; }
tr.lead td { color: var(--gold); }
ol { margin: 0; padding-left: 26px; font-size: 13px; }
li { padding: 2px 4px; border-radius: 6px; cursor: pointer; }
li:hover { background: #1e4a33; }
li.now { background: #2a6345; }
li.later { color: #6f8b7b; }
.s-red { color: #ff6b6b; }
.over { background: rgba(8,22,15,.93); border: 1px solid var(--gold); border-radius: 16px;
  padding: 12px 18px; min-width: 260px; max-width: 100%; box-shadow: 0 8px 24px rgba(0,0,0,.5); }
.over h3 { margin: 0 0 8px; color: var(--gold); }
footer { color: #6f8b7b; font-size: 12px; padding: 0 16px 12px; }
@media (max-width: 900px) {
  main { grid-template-columns: minmax(0, 1fr); }
  .panel.grow { max-height: 360px; }
}
@media (max-width: 640px) {
  header, main { padding-left: 8px; padding-right: 8px; }
  h1 { font-size: 16px; }
  .where { min-width: 0; }
  .felt, .felt.n3 { grid-template-columns: minmax(0, 1fr); grid-template-rows: none;
    grid-template-areas: "top" "left" "center" "right" "bottom"; border-width: 6px;
    border-radius: 18px; padding: 10px; min-height: 0; }
  .felt.n3 { grid-template-areas: "left" "center" "right" "bottom"; }
  .seat.top, .seat.bottom { min-width: 0; justify-self: stretch; }
  .card { width: 40px; height: 56px; }
  .card .r { font-size: 13px; } .card .c { font-size: 20px; }
  .row { min-height: 56px; flex-wrap: wrap; row-gap: 4px; }
  .row .card + .card { margin-left: -12px; }
  .hidden .row .card + .card { margin-left: -30px; }
  .stack { width: 40px; height: 56px; }
  .tablecards { min-height: 60px; }
}
"""  # noqa: E501

_JS = r"""
(function () {
  "use strict";
  const D = JSON.parse(document.getElementById("ct-data").textContent);
  const S = D.steps, N = D.players.length;
  S.forEach((st, k) => {  // restore what compact() left out: it follows from the step before
    if (st.turn === 0) return;
    const prev = S[k - 1];
    if (!st.hands) {
      st.hands = prev.hands.map((h) => h.slice());
      st.hands[st.seat].splice(st.hands[st.seat].indexOf(st.play[0]), 1);
    }
    if (!st.piles) {
      st.piles = prev.piles.map((p) => p.slice());
      [st.play, st.turned].forEach((m) => { if (m[1].length) st.piles[st.seat].push(m[0], ...m[1]); });
    }
  });
  window.ctSteps = S;  // for tests: every step as drawn
  const SUIT = { c: "\u2663", d: "\u2666", h: "\u2665", s: "\u2660" };
  let i = Math.min(D.start || 0, S.length - 1);
  let view = D.view === undefined ? "all" : String(D.view);
  const hash = /step=(\d+)/.exec(location.hash), hview = /view=(\w+)/.exec(location.hash);
  if (hash) i = Math.min(Number(hash[1]), S.length - 1);
  const hhand = /hand=(\d+)/.exec(location.hash), hturn = /turn=(\d+)/.exec(location.hash);
  const hfault = /fault=(\d+)/.exec(location.hash);
  if (hhand) {  // a deep link: #hand=9&turn=6, or #hand=9&fault=SEAT (that seat's fault)
    const h = Number(hhand[1]);
    let k = -1;
    if (hturn) k = S.findIndex((st) => st.hand === h && st.turn === Number(hturn[1]));
    if (k < 0 && hfault) k = S.findIndex((st) => st.fault && st.seat === Number(hfault[1]));
    if (k < 0) k = S.findIndex((st) => st.hand === h);
    if (k >= 0) i = k;
  }
  if (hview && (hview[1] === "all" || Number(hview[1]) < N)) view = hview[1];
  const $ = (id) => document.getElementById(id);
  const el = (tag, cls, text) => {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  };
  const rank = (c) => c[0];  // T for ten, as in the protocol, the records and the text replay
  const red = (c) => c[1] === "d" || c[1] === "h";
  function card(c, isNew) {
    const e = el("div", "card" + (red(c) ? " red" : "") + (isNew ? " new" : ""));
    const r = el("span", "r", rank(c));
    r.appendChild(el("i", "", SUIT[c[1]]));
    e.appendChild(r);
    e.appendChild(el("span", "c", SUIT[c[1]]));
    e.title = c;
    return e;
  }
  const back = () => el("div", "card back");
  function mini(c, isNew) {
    const e = el("span", "mini" + (red(c) ? " red" : "") + (isNew ? " new" : ""));
    e.appendChild(el("span", "", rank(c)));
    e.appendChild(el("span", "", SUIT[c[1]]));
    e.title = c;
    return e;
  }
  const sym = (c) => rank(c) + SUIT[c[1]];
  const faultAt = {};
  D.faults.forEach((f) => {
    const k = S.findIndex((st) => st.fault && st.seat === f.seat);
    faultAt[f.seat] = k < 0 ? S.length - 1 : k;
  });
  const faulted = (s) => s in faultAt && faultAt[s] <= i;  // no spoiler: only once reached
  const ms = (st) => (st.ms && st.ms.length ? st.ms.map((t) => (t < 10 ? t.toFixed(1) : Math.round(t))).join(" + ") + " ms" : "");
  function places() {
    const order = { 2: ["bottom", "top"], 3: ["bottom", "left", "right"],
                    4: ["bottom", "left", "top", "right"] }[N];
    const first = view === "all" ? 0 : Number(view);
    const at = [];
    for (let k = 0; k < N; k++) at[(first + k) % N] = order[k];
    return at;
  }
  function describe(st, inline) {
    const box = el("span");
    const add = (t) => box.appendChild(document.createTextNode(t));
    const cards = (cs) => cs.forEach((c) => box.appendChild(inline ? mini(c) : el("b", red(c) ? "s-red" : "", sym(c))));
    add(D.players[st.seat] + " plays ");
    cards([st.play[0]]);
    if (st.play[1].length) { add(" takes "); cards(st.play[1]); }
    add(" \u00b7 turns ");
    cards([st.turned[0]]);
    if (st.turned[1].length) { add(" takes "); cards(st.turned[1]); }
    return box;
  }
  function renderSeat(s, st, at, fresh) {
    const box = el("div", "seat " + at[s]);
    box.style.gridArea = at[s];
    if (st.turn > 0 && st.seat === s) box.classList.add("moved");
    const hidden = view !== "all" && Number(view) !== s;
    if (hidden) box.classList.add("hidden");
    const name = el("div", "name");
    name.appendChild(el("span", "", D.players[s]));
    name.appendChild(el("span", "badge", "seat " + s));
    if (st.dealer === s) name.appendChild(el("span", "badge dealer", "dealer"));
    if (st.turn > 0 && st.seat === s && st.by === "fallback") name.appendChild(el("span", "badge fb", "fallback"));
    else if (faulted(s)) name.appendChild(el("span", "badge faulted", "faulted"));
    const pts = el("span", "pts");
    pts.appendChild(el("b", "", String(st.points[s])));
    pts.appendChild(document.createTextNode(" pts \u00b7 total " + st.totals[s]));
    name.appendChild(pts);
    box.appendChild(name);
    const row = el("div", "row");
    st.hands[s].forEach((c) => row.appendChild(hidden ? back() : card(c)));
    if (!st.hands[s].length) row.appendChild(el("span", "empty", "no cards left"));
    else if (hidden) row.appendChild(el("span", "empty count", st.hands[s].length + " card" + (st.hands[s].length > 1 ? "s" : "")));
    box.appendChild(row);
    const pile = el("div", "pile");
    st.piles[s].forEach((c) => pile.appendChild(mini(c, fresh.has(c) && st.seat === s)));
    if (!st.piles[s].length) pile.appendChild(el("span", "empty", "nothing captured yet"));
    box.appendChild(pile);
    return box;
  }
  function render() {
    const st = S[i], felt = $("felt"), at = places();
    const fresh = new Set();
    if (st.turn > 0) {
      [st.play, st.turned].forEach((m) => { if (m[1].length) { fresh.add(m[0]); m[1].forEach((c) => fresh.add(c)); } });
    }
    if (st.take) st.take.forEach((t) => t[1].forEach((c) => fresh.add(c)));
    felt.replaceChildren();
    felt.className = "felt n" + N;
    for (let s = 0; s < N; s++) felt.appendChild(renderSeat(s, st, at, fresh));
    const center = el("div", "center");
    const tc = el("div", "tablecards");
    const landed = new Set(st.turn > 0 ? [st.play, st.turned].filter((m) => !m[1].length).map((m) => m[0]) : []);
    st.table.forEach((c) => tc.appendChild(card(c, landed.has(c))));
    if (!st.table.length) tc.appendChild(el("span", "empty", "the table is empty"));
    const stock = el("div", "stock");
    const stack = el("div", "stack");
    for (let k = 0; k < Math.min(3, st.stock); k++) {
      const b = back(); b.style.left = (k * 3) + "px"; b.style.top = (-k * 2) + "px"; stack.appendChild(b);
    }
    stock.appendChild(stack);
    stock.appendChild(el("span", "", st.stock + " in the stock"));
    const action = el("div", "action");
    if (st.turn === 0) {
      action.appendChild(el("div", "", "Hand " + st.hand + " dealt \u00b7 " + D.players[st.dealer] + " deals, " + D.players[st.to_move] + " starts"));
      (st.take || []).forEach((t) => {
        const d = el("div", "");
        d.appendChild(document.createTextNode(D.players[t[0]] + " takes the layout four of a kind "));
        t[1].forEach((c) => d.appendChild(mini(c)));
        action.appendChild(d);
      });
    } else {
      action.appendChild(describe(st, true));
      if (st.turned[2].length) action.appendChild(el("div", "sub", "picked from " + st.turned[2].map(sym).join(" ")));
      if (st.by === "fallback") action.appendChild(el("div", "note", "played by the referee's fallback"));
      else if (ms(st)) action.appendChild(el("div", "note", "answered in " + ms(st)));
      if (st.fault) action.appendChild(el("div", "fault", D.players[st.seat] + " faulted (" + st.fault + "); the referee plays this seat from here"));
      (st.info || []).forEach((t) => action.appendChild(el("div", "info", "\u201c" + t + "\u201d")));
    }
    center.append(tc, stock, action);
    if (st.scores) center.appendChild(overlay(st));  // below the last move's caption, never over it
    felt.appendChild(center);
    $("where").replaceChildren();
    $("where").insertAdjacentHTML("beforeend", "hand <b>" + st.hand + "</b>/" + D.hands + " \u00b7 turn <b>" + st.turn + "</b>/24");
    board(st);
    log(st);
  }
  function overlay(st) {
    const last = st.hand === D.hands;
    const o = el("div", "over");
    o.appendChild(el("h3", "", last ? "Match over" : "Hand " + st.hand + " over"));
    const t = el("table");
    const order = [...Array(N).keys()];
    if (last) order.sort((a, b) => D.ranks[a] - D.ranks[b] || a - b);
    order.forEach((s) => {
      const tr = el("tr", last && D.ranks[s] === 1 ? "lead" : "");
      tr.appendChild(el("td", "", last ? "#" + D.ranks[s] : ""));
      tr.appendChild(el("td", "", D.players[s]));
      tr.appendChild(el("td", "n", "+" + st.scores[s]));
      tr.appendChild(el("td", "n", String(st.totals[s])));
      t.appendChild(tr);
    });
    o.appendChild(t);
    if (last && D.faults.length && i === S.length - 1) o.appendChild(el("div", "fault", "faulted seats rank below the others"));
    return o;
  }
  function board(st) {
    const t = $("board");
    t.replaceChildren();
    const best = Math.max(...st.totals);
    for (let s = 0; s < N; s++) {
      const tr = el("tr", st.totals[s] === best && best > 0 ? "lead" : "");
      const f = faulted(s) ? D.faults.find((x) => x.seat === s) : undefined;
      tr.appendChild(el("td", "", D.players[s] + (f ? " \u26a0" : "")));
      if (f) tr.title = f.fault + " in hand " + f.hand + ": " + f.detail;
      tr.appendChild(el("td", "n", String(st.points[s])));
      tr.appendChild(el("td", "n", String(st.totals[s])));
      t.appendChild(tr);
    }
    const cap = el("caption", "sub", D.variant + " \u00b7 target " + D.target + " \u00b7 this hand / total");
    t.appendChild(cap);
  }
  function log(st) {
    const ol = $("log");
    ol.replaceChildren();
    $("log-title").textContent = "Hand " + st.hand + " \u00b7 turns";
    const start = i - st.turn;
    const spoil = view === "all";  // a seat's view shows no turn before it is reached
    for (let k = start + 1; k < S.length && S[k].hand === st.hand && (spoil || k <= i); k++) {
      const li = el("li", k === i ? "now" : k > i ? "later" : "");
      li.appendChild(describe(S[k], false));
      const note = S[k].by === "fallback" ? "fallback" : ms(S[k]);
      if (note) { li.appendChild(document.createTextNode(" ")); li.appendChild(el("span", "ms", note)); }
      (S[k].info || []).forEach((t) => li.appendChild(el("span", "info", "\u201c" + t + "\u201d")));
      const target = k;
      li.addEventListener("click", () => go(target));
      ol.appendChild(li);
      if (k === i) {
        const panel = ol.parentElement;
        setTimeout(() => { panel.scrollTop = li.offsetTop - panel.clientHeight / 2; }, 0);
      }
    }
  }
  function go(k) {
    i = Math.max(0, Math.min(S.length - 1, k));
    render();
    try { history.replaceState(null, "", "#step=" + i + "&view=" + view); } catch (e) { /* file: */ }
  }
  function handStart(h) { const k = S.findIndex((s) => s.hand === h); return k < 0 ? i : k; }
  const prevHand = () => go(S[i].turn > 0 ? handStart(S[i].hand) : handStart(S[i].hand - 1));
  const nextHand = () => go(S[i].hand < D.hands ? handStart(S[i].hand + 1) : S.length - 1);
  let timer = null;
  function autoplay(on) {
    if (timer !== null) { clearInterval(timer); timer = null; }
    if (on) {
      if (i >= S.length - 1) go(0);
      timer = setInterval(() => { if (i >= S.length - 1) autoplay(false); else go(i + 1); }, Number($("speed").value));
    }
    $("play").textContent = timer !== null ? "\u23f8 pause" : "\u25b6 play";
    $("play").setAttribute("aria-pressed", timer !== null ? "true" : "false");
  }
  $("play").onclick = () => { $("play").blur(); autoplay(timer === null); };
  $("speed").onchange = () => { $("speed").blur(); if (timer !== null) autoplay(true); };
  $("prev").onclick = () => go(i - 1);
  $("next").onclick = () => go(i + 1);
  $("prev-hand").onclick = prevHand;
  $("next-hand").onclick = nextHand;
  document.addEventListener("keydown", (e) => {
    const k = { ArrowLeft: () => go(i - 1), ArrowRight: () => go(i + 1), ArrowUp: prevHand,
      PageUp: prevHand, ArrowDown: nextHand, PageDown: nextHand, Home: () => go(0),
      End: () => go(S.length - 1), " ": () => autoplay(timer === null) }[e.key];
    if (k && e.target.tagName !== "SELECT") { e.preventDefault(); k(); }
  });
  const sel = $("view");
  [["all", "all (every hand)"], ...D.players.map((p, s) => [String(s), s + " \u00b7 " + p])].forEach(([v, t]) => {
    const o = el("option", "", t); o.value = v; sel.appendChild(o);
  });
  sel.value = view;
  sel.onchange = () => { view = sel.value; sel.blur(); go(i); };
  $("title").textContent = "Chinese Ten \u00b7 " + D.players.join(" vs ");
  $("sub").textContent = "match " + D.id + (D.tournament ? " \u00b7 " + D.tournament : "") + " \u00b7 " + D.variant + " \u00b7 target " + D.target + " \u00b7 " + D.hands + " hands";
  render();
})();
"""  # noqa: E501


# -- pages that share one viewer (a tournament's report) -----------------------------------------

ASSETS = {"viewer.css": _CSS, "viewer.js": _JS}
"""The viewer's style and script, as files that every linked page loads (:func:`linked_page`)."""


def linked_page(record: RecordDict, *, assets: str, back: str | None = None) -> str:
    """The page of :func:`replay_html` without its style and script: it loads ``viewer.css`` and
    ``viewer.js`` (:data:`ASSETS`) from the folder ``assets`` (a relative URL ending in ``/``),
    so thousands of matches share one copy of the viewer. ``back`` links to the page it came
    from (a tournament's report)."""
    data = page_data(record)
    data["view"], data["start"] = "all", 0
    blob = script_json(data)
    link = "" if back is None else (f'<a class="back" href="{html.escape(back)}">'
                                    "&#8592; tournament report</a>")
    head = html_head(_title(record),
                     f'<link rel="stylesheet" href="{html.escape(assets)}viewer.css">')
    page = (_PAGE.replace("<script>{js}</script>",
                          f'<script src="{html.escape(assets)}viewer.js"></script>')
            .replace('<div class="title">', '<div class="title">' + link, 1))
    return page.replace("{data}", blob).replace("{head}", head, 1)
