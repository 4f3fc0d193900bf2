
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
