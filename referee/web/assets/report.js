
(function () {
  "use strict";
  const D = window.CT_REPORT;
  const $ = (id) => document.getElementById(id);
  if (!D) { $("nodata").hidden = false; $("headline").textContent = "no data"; return; }
  const el = (tag, cls, text) => {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  };
  const a = (href, text, title) => { const e = el("a", "", text); e.href = href; if (title) e.title = title; return e; };
  const td = (text, cls) => el("td", cls || "", text);
  const path = (p) => p.split("/").map(encodeURIComponent).join("/");
  const num = (x, places) => (x === null || x === undefined ? "" : Number(x).toFixed(places));
  const plural = (n, one, many) => n + " " + (n === 1 ? one : (many || one + "s"));
  const C = {};
  D.columns.forEach((c, k) => { C[c] = k; });
  const pages = D.pages === "all" ? null : new Set(Array.isArray(D.pages) ? D.pages : []);
  const hasPage = (id) => pages === null || pages.has(id);
  const matchHref = (id, hash) => (hasPage(id)  // a page of its own, else the one replay page
    ? "games/" + encodeURIComponent(id) + ".html" + (hash ? "#" + hash : "")
    : "replay.html#id=" + encodeURIComponent(id) + (hash ? "&" + hash : ""));
  const logHref = (id, seat, name) => "../" + path("logs/" + id + "/" + seat + "-" + name + ".stderr");

  // -- header, settings ---------------------------------------------------------------------
  document.title = D.name + " \u00b7 tournament report";
  $("name").textContent = D.name;
  $("headline").textContent = D.headline;
  const H = D.final ? null : D.halted;  // the run stopped before its end (Ctrl-C, an error)
  const when = (t) => new Date(t * 1000).toLocaleString();
  // the run's sign of life (alive.js, rewritten every few seconds while it runs; "now": the
  // serving machine's clock under --serve): one that stopped without a word (SIGKILL, a
  // machine gone) is told by its age
  const A = window.CT_ALIVE;
  const lastSign = A && typeof A.at === "number" ? A.at : null;
  const now = A && typeof A.now === "number" ? A.now : Date.now() / 1000;
  const dead = !D.final && !H && lastSign !== null && now - lastSign > (A.dead_after || 30);
  const clock = (t) => {
    const d = new Date(t * 1000);
    const hm = d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
    return now - t > 12 * 3600 ? d.toLocaleDateString() + " " + hm : hm;
  };
  const far = H ? (H.total ? H.done + " of " + H.total + " matches played" : plural(D.matches, "match", "matches") + " played") : "";
  $("sub").textContent = plural(D.matches, "match", "matches") + " \u00b7 " + plural(D.entrants, "entrant") +
    " \u00b7 " + (D.final ? "final" : H ? H.why + " at " + when(H.at) + ", " + far + "; not reloading"
      : dead ? "stopped (no sign of life since " + clock(lastSign) + "); not reloading"
      : "provisional: it reloads every 30 s while the run goes on" + (D.written ? " (updated " + when(D.written) + ")" : "")) +
    (D.stopped ? " \u00b7 " + D.stopped : "");
  if (H) {
    const p = el("p", "halted");
    p.append(el("strong", "", "The run was " + H.why + " (" + far + "); the finished matches are kept. Resume it with: "),
      el("code", "", H.resume));
    $("sub").after(p);
  } else if (dead) {
    const p = el("p", "halted");
    p.id = "dead";
    p.append(el("strong", "", "The run stopped without a word (no sign of life since " + clock(lastSign) + ": killed, or its machine went down), after " +
      plural(D.matches, "match", "matches") + "; the finished matches are kept. Running the same command again resumes it: "),
      el("code", "", "ct-referee tournament CONFIG.yaml"));
    $("sub").after(p);
    $("headline").textContent = D.headline.replace(" (provisional: the run is not over)", " (provisional: the run stopped before its end)");
  }
  D.files.forEach((f) => { $("files").appendChild(a("../" + f, f)); $("files").appendChild(document.createTextNode(" ")); });
  D.settings.forEach((s) => $("settings").appendChild(el("li", "", s)));
  $("stopped").textContent = D.stopped ? D.stopped + "." : (D.final ? "" : H ? "The run was " + H.why + " before its end: resume it with " + H.resume
    : dead ? "The run stopped before its end (no sign of life since " + clock(lastSign) + ")." : "The run is not over.");
  if (D.order_note) $("order").textContent = D.order_note;
  else $("order").textContent = "Sorted by mu\u22123\u03c3.";

  // -- gauntlet, audit, left out ------------------------------------------------------------
  if (D.questions.length) {
    $("gauntlet").hidden = false;
    const body = $("questions").tBodies[0];
    D.questions.forEach((q) => {
      const tr = el("tr");
      tr.append(td(q.upper), td(q.lower), td(q.text, q.verdict === "stronger" ? "good" : ""));
      body.appendChild(tr);
    });
  }
  if (D.audit.length) {
    $("audit").hidden = false;
    const body = $("audits").tBodies[0];
    D.audit.forEach((r) => {
      const tr = el("tr", r.flag ? "hit" : "");
      tr.append(td(r.name), td(num(r.later_minus_first, 1), "n"),
        td(r.low !== null && r.high !== null ? "[" + num(r.low, 1) + ", " + num(r.high, 1) + "]"
          : "too few sets" + (r.low !== null ? " (at least " + num(r.low, 1) + ")" : r.high !== null ? " (at most " + num(r.high, 1) + ")" : ""), r.low !== null && r.high !== null ? "" : "muted"),
        td(r.sets === undefined || r.sets === null ? "" : r.sets, "n"),
        td(r.flag ? (r.why ? "flagged: " + r.why : "flagged") : "\u2013", r.flag ? "bad" : "muted"));
      body.appendChild(tr);
    });
  }
  const LEFT = D.left_out || {};  // each in one row of its own (the standings), not in the matches

  // -- standings ----------------------------------------------------------------------------
  const PAGE = 100, RF = D.rows.length || 1;
  const rowFiles = { 0: D.rows };
  window.ctRows = (k, rows) => { rowFiles[k] = rows; };
  const load = (dir, k, have, done) => {
    if (have[k]) { done(have[k]); return; }
    const s = el("script");
    s.src = dir + "/" + k + ".js";
    s.onload = () => done(have[k] || null);
    s.onerror = () => done(null);
    document.body.appendChild(s);
  };
  function rowsAt(places, done) {  // the rows at these places of the standings
    const files = [...new Set(places.map((p) => Math.floor(p / RF)))];
    let left = files.length;
    if (!left) { done([]); return; }
    files.forEach((k) => load("rows", k, rowFiles, () => {
      if (--left === 0) done(places.map((p) => (rowFiles[Math.floor(p / RF)] || [])[p % RF]).filter((r) => r));
    }));
  }
  let page = 0, found = null;
  function verdict(v) {  // [word, diff, low, high, sets, its words] (referee.web.folder.pair_text)
    if (!v) return "";
    return typeof v === "string" ? v : v[5];
  }
  function leftOutRow(r, tr) {  // who never played: why, in place of the fallback's figures
    const name = el("td");
    name.append(el("span", "", r[C.name]), el("span", "tag bad", "left out"));
    const said = typeof r[C.verdict] === "string" ? r[C.verdict].replace(/^left out(: )?/, "") : "";
    const why = td(said || "no reason recorded", "bad leftout");
    why.colSpan = 10;
    why.appendChild(document.createTextNode("; it played no match (the referee's fallback played its seats)"));
    if (D.preflight[r[C.name]]) { why.appendChild(document.createTextNode(" \u00b7 ")); why.appendChild(a("../" + path(D.preflight[r[C.name]]), "its stderr")); }
    tr.append(td(r[C.rank], "n"), name, why);
    return tr;
  }
  function standingRow(r) {
    const tr = el("tr", found !== null ? "hit" : "");
    tr.id = "row-" + r[C.rank];
    if ((r[C.flags] || "").split(",").includes("left out")) return leftOutRow(r, tr);
    const name = el("td");
    const pick = a("#crosstable", r[C.name], "this entrant against every other, and its faults");
    pick.addEventListener("click", () => { $("pick").value = r[C.name]; showOne(r[C.name]); });
    name.appendChild(pick);
    (r[C.flags] ? r[C.flags].split(",") : []).forEach((f) => name.appendChild(el("span", "tag bad", f)));
    const v = r[C.verdict];
    const vcell = td(verdict(v), typeof v === "object" && v && v[0] === "stronger" ? "good" : "");
    const faults = td(r[C.faults] ? String(r[C.faults]) : "\u2013", "n m" + (r[C.faults] ? " bad" : " muted"));
    tr.append(td(r[C.rank], "n"), name, td(num(r[C.mu], 2), "n w"), td(num(r[C.sigma], 2), "n w"),
      td(num(r[C.score], 2), "n"), td(r[C.matches], "n w"), td(r[C.wins], "n w"),
      td(num(r[C.mean_rank], 2), "n w"), td(num(r[C.points_per_hand], 1), "n"), faults,
      td(r[C.p_above_next] === null ? "" : Math.round(100 * r[C.p_above_next]) + "%", "n w"), vcell);
    return tr;
  }
  function pager(box, count, size, at, go) {
    box.replaceChildren();
    const pages = Math.ceil(count / size);
    if (pages <= 1) return;
    const b = (label, to) => { const e = el("button", "", label); e.disabled = to < 0 || to >= pages || to === at; e.addEventListener("click", () => go(to)); return e; };
    box.append(b("\u00ab", 0), b("\u2039", at - 1),
      el("span", "", " " + (at * size + 1) + "\u2013" + Math.min(count, (at + 1) * size) + " of " + count + " "),
      b("\u203a", at + 1), b("\u00bb", pages - 1));
  }
  function drawStandings() {
    const body = $("table").tBodies[0];
    const total = found === null ? D.rows_total : found.length;
    const places = [];
    for (let p = page * PAGE; p < Math.min(total, (page + 1) * PAGE); p++) places.push(found === null ? p : found[p]);
    pager($("pager"), total, PAGE, page, (to) => { page = to; drawStandings(); });
    rowsAt(places, (rows) => {
      body.replaceChildren();
      rows.forEach((r) => body.appendChild(standingRow(r)));
      if (found !== null && !found.length) { const tr = el("tr"); const c = td("no entrant matches", "muted"); c.colSpan = 12; tr.appendChild(c); body.appendChild(tr); }
    });
  }
  $("find").addEventListener("input", () => {
    const q = $("find").value.trim().toLowerCase();
    found = null;
    if (q) { found = []; D.names.forEach((n, k) => { if (k < D.rows_total && n.toLowerCase().includes(q)) found.push(k); }); }
    page = 0;
    drawStandings();
  });
  drawStandings();

  // -- crosstable ---------------------------------------------------------------------------
  function crossCell(c) {
    if (!c) return td("", "muted");
    const [w, l, m, pa, pb] = c;
    const diff = pa - pb;
    const cell = td((diff > 0 ? "+" : "") + diff.toFixed(1), diff > 0 ? "good" : diff < 0 ? "bad" : "");
    cell.appendChild(el("small", "", w + "\u2013" + l));
    cell.title = pa + " vs " + pb + " points a hand; " + w + " wins, " + l + " losses in " + plural(m, "match", "matches");
    return cell;
  }
  function drawCross() {
    const names = D.cross.names, box = $("cross");
    if (!names.length || !D.matches) { box.replaceChildren(el("p", "muted", "no match finished yet")); return; }
    const width = box.clientWidth || 900;
    const n = Math.max(2, Math.min(names.length, Math.floor((width - 110) / 62)));
    const t = el("table", "data cross");
    t.style.width = Math.min(width, 110 + 90 * n) + "px";
    const cols = el("colgroup");
    const first = el("col"); first.style.width = "110px"; cols.appendChild(first);
    for (let k = 0; k < n; k++) cols.appendChild(el("col"));
    t.appendChild(cols);
    const head = el("tr");
    head.appendChild(el("th", "", ""));
    names.slice(0, n).forEach((b, k) => { const th = el("th", "c", (k + 1) + " " + b); th.title = b; head.appendChild(th); });
    t.appendChild(el("thead")).appendChild(head);
    const body = el("tbody");
    names.slice(0, n).forEach((row, i) => {
      const tr = el("tr");
      const th = el("th", "c", (i + 1) + " " + row); th.title = row; tr.appendChild(th);
      for (let j = 0; j < n; j++) tr.appendChild(i === j ? td("\u00b7", "muted") : crossCell(D.cross.cells[i][j]));
      body.appendChild(tr);
    });
    t.appendChild(body);
    box.replaceChildren(t);
    if (n < D.entrants) box.appendChild(el("p", "muted", "The top " + n + " of the standings; choose an entrant below for all of its opponents."));
  }
  drawCross();
  let resized = null;
  window.addEventListener("resize", () => { clearTimeout(resized); resized = setTimeout(drawCross, 150); });
  const details = {};
  window.ctEntrant = (k, data) => { details[k] = data; };
  const place = {};
  D.names.forEach((n, k) => { place[n] = k; });
  function showOne(name) {
    const box = $("one");
    if (!(name in place)) { box.replaceChildren(el("p", "muted", name ? "no entrant named " + name : "")); return; }
    if (!D.details) { box.replaceChildren(el("p", "muted", "Each entrant's opponents and faults are written when the run ends (or by ct-referee report).")); return; }
    const k = Math.floor(place[name] / D.details.size);
    load("entrant", k, details, (shard) => {
      const mine = shard && shard[name];
      if (!mine) { box.replaceChildren(el("p", "muted", "no details for " + name)); return; }
      const rows = mine.against.slice().sort((x, y) => (place[x[0]] ?? 1e9) - (place[y[0]] ?? 1e9));
      const t = el("table", "data");
      const h = el("tr");
      ["against", "pts/hand diff", "wins\u2013losses", "matches"].forEach((c, j) => h.appendChild(el("th", j ? "n" : "", c)));
      t.appendChild(el("thead")).appendChild(h);
      const body = el("tbody");
      rows.forEach((r) => {
        const [other, w, l, m, pa, pb] = r;
        const tr = el("tr");
        const d = pa - pb;
        tr.append(td(other), td((d > 0 ? "+" : "") + d.toFixed(1), "n " + (d > 0 ? "good" : d < 0 ? "bad" : "")), td(w + "\u2013" + l, "n"), td(m, "n"));
        body.appendChild(tr);
      });
      t.appendChild(body);
      box.replaceChildren(el("h3", "", name + " against " + plural(rows.length, "opponent")), t);
      mine.faults.forEach((g) => box.appendChild(faultGroup(g)));
    });
  }
  $("pick").addEventListener("change", () => showOne($("pick").value.trim()));

  // -- chart --------------------------------------------------------------------------------
  const PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"];
  function drawChart() {
    const ch = D.chart, box = $("chart");
    if (!ch || !ch.xs || ch.xs.length < 2) { box.appendChild(el("p", "muted", "no match rated yet")); return; }
    // drawn at the box's width (at most 760): a label of 11 px stays 11 px on a 390 px phone,
    // where a 760-wide picture scaled down drew it at 6
    const w = Math.max(280, Math.min(760, Math.floor(box.clientWidth || 760)));
    const NS = "http://www.w3.org/2000/svg", h = w < 500 ? 260 : 300, L = 62, R = 12, T = 10, B = 46;
    const svg = document.createElementNS(NS, "svg");
    svg.setAttribute("viewBox", "0 0 " + w + " " + h); svg.setAttribute("class", "chart");
    svg.style.maxWidth = w + "px";
    svg.setAttribute("role", "img"); svg.setAttribute("aria-label", "rating (mu) over the matches");
    const vals = ch.series.flatMap((s) => s[1].filter((v) => v !== null));
    let lo = Math.min(...vals), hi = Math.max(...vals);
    if (hi - lo < 1) { lo -= 1; hi += 1; }
    const x0 = ch.xs[0], span = Math.max(1, ch.xs[ch.xs.length - 1] - x0);
    const px = (x) => L + (x - x0) / span * (w - L - R), py = (y) => T + (hi - y) / (hi - lo) * (h - T - B);
    const add = (tag, attrs, text) => { const e = document.createElementNS(NS, tag); Object.keys(attrs).forEach((k) => e.setAttribute(k, attrs[k])); if (text !== undefined) e.textContent = text; svg.appendChild(e); return e; };
    for (let k = 0; k < 5; k++) {
      const y = lo + (hi - lo) * k / 4;
      add("line", { x1: L, x2: w - R, y1: py(y), y2: py(y), class: "grid" });
      add("text", { x: L - 6, y: py(y) + 4, "text-anchor": "end" }, y.toFixed(0));
      const x = Math.round(x0 + span * k / 4);
      add("text", { x: px(x), y: h - B + 16, "text-anchor": "middle" }, String(x));
    }
    // the axes say what they measure: matches rated across, the rating (mu) up
    add("text", { x: L + (w - L - R) / 2, y: h - 4, "text-anchor": "middle", class: "axis" }, "matches rated");
    add("text", { x: 14, y: T + (h - T - B) / 2, "text-anchor": "middle", class: "axis",
      transform: "rotate(-90 14 " + (T + (h - T - B) / 2) + ")" }, "rating (mu)");
    const keys = el("div", "keys");
    ch.series.forEach((s, k) => {
      const pts = ch.xs.map((x, j) => (s[1][j] === null ? null : px(x).toFixed(1) + "," + py(s[1][j]).toFixed(1))).filter((p) => p !== null);
      const line = add("polyline", { fill: "none", stroke: PALETTE[k % 10], "stroke-width": 2, points: pts.join(" ") });
      if (k >= 10) line.setAttribute("stroke-dasharray", "6 3");
      const title = document.createElementNS(NS, "title"); title.textContent = s[0]; line.appendChild(title);
      const key = el("span"); const i = el("i"); i.style.background = PALETTE[k % 10]; key.append(i, document.createTextNode(s[0]));
      keys.appendChild(key);
    });
    box.append(svg, keys);
  }
  drawChart();

  // -- faults -------------------------------------------------------------------------------
  function faultGroup(g) {
    const div = el("div", "group");
    const benched = g.benched === g.count && g.examples.length && /^(left out|disqualified): /.test(g.examples[0].detail);
    if (benched) {
      const h = el("h3", "", g.name + " " + g.examples[0].detail.replace(/: /, ": no process, ") + " (" + plural(g.count, "match", "matches") + " lost by " + g.kind + ")");
      if (D.preflight[g.name]) { h.appendChild(document.createTextNode(" ")); h.appendChild(a("../" + path(D.preflight[g.name]), "its stderr")); }
      div.appendChild(h);
      return div;
    }
    div.appendChild(el("h3", "", g.name + ": " + plural(g.count, g.kind + " fault") + (g.benched ? " (" + g.benched + " of them with no process: benched)" : "")));
    const ul = el("ul");
    g.examples.forEach((ex) => {
      const li = el("li");
      const where = "hand=" + ex.hand + (ex.turn !== undefined ? "&turn=" + ex.turn : "&fault=" + ex.seat);
      li.appendChild(a(matchHref(ex.id, where), ex.id + ", hand " + ex.hand + (ex.turn !== undefined ? ", turn " + ex.turn : "")));
      li.appendChild(document.createTextNode(": " + ex.detail + " "));
      if (ex.log) li.appendChild(a("../" + path(ex.log), "its stderr"));
      if (ex.tail) li.appendChild(el("pre", "tail", ex.tail));
      ul.appendChild(li);
    });
    if (g.count > g.examples.length) ul.appendChild(el("li", "muted", "and " + (g.count - g.examples.length) + " more (see the matches below)"));
    div.appendChild(ul);
    return div;
  }
  function drawWorkerFaults(box) {  // a cluster's workers whose results were refused
    const workers = D.cluster_faults || [];
    if (!workers.length) return;
    const div = el("div", "group");
    div.appendChild(el("h3", "", "Cluster workers whose results disagreed with the replay or could not be read (not counted, played again elsewhere)"));
    const ul = el("ul");
    workers.forEach((w) => ul.appendChild(el("li", "", w.worker + ": " + plural(w.count, "fault") + (w.excluded ? ", no longer sent matches" : "") + "; the first, match " + w.match + ": " + w.why)));
    div.appendChild(ul);
    box.appendChild(div);
  }
  function drawFaults() {
    const box = $("faultlist");
    drawWorkerFaults(box);
    if (!D.faults.length) { box.appendChild(el("p", "muted", D.matches ? "no fault" : "no match finished yet")); return; }
    D.faults.forEach((g) => box.appendChild(faultGroup(g)));
    if (D.fault_groups > D.faults.length) box.appendChild(el("p", "muted", "and " + (D.fault_groups - D.faults.length) + " more groups, of entrants further down the standings: choose an entrant (its name in the standings) for its own."));
  }
  drawFaults();

  // -- matches ------------------------------------------------------------------------------
  const chunks = {}, MPAGE = 50;
  let mpage = 0;
  window.ctMatches = (k, rows) => { chunks[k] = rows; };
  const chunk = (k, done) => load("matches", k, chunks, (rows) => done(rows || []));
  function drawMatches() {
    const body = $("mtable").tBodies[0];
    pager($("mpager"), D.matches, MPAGE, mpage, (to) => { mpage = to; drawMatches(); });
    if (!D.matches) { body.replaceChildren(); const tr = el("tr"); const c = td("no match finished yet", "muted"); c.colSpan = 4; tr.appendChild(c); body.appendChild(tr); return; }
    const start = mpage * MPAGE, k = Math.floor(start / D.chunk);
    chunk(k, (rows) => {
      body.replaceChildren();
      rows.slice(start - k * D.chunk, start - k * D.chunk + MPAGE).forEach((m) => {
        const [id, players, totals, ranks, hands, faults] = m;
        const tr = el("tr");
        tr.id = "match-" + id;
        const link = td(); link.appendChild(a(matchHref(id), id)); tr.appendChild(link);
        const seats = td();
        // a left-out entrant's seat is the referee's fallback's: said so, without its name
        const benched = new Set(faults.filter((x) => x[3] && players[x[0]] in LEFT).map((x) => x[0]));
        players.forEach((p, s) => {
          if (s) seats.appendChild(document.createTextNode(" \u00b7 "));
          const seat = el("span", benched.has(s) ? "muted" : ranks[s] === 1 ? "win" : "",
            (benched.has(s) ? "fallback" : p) + " " + totals[s] + " (" + ranks[s] + ")");
          if (benched.has(s)) seat.title = "the seat of an entrant left out by the pre-flight (see the standings), played by the referee's fallback";
          seats.appendChild(seat);
        });
        tr.append(seats, td(hands, "n"));
        const f = td("", "bad");
        faults.filter((x) => !benched.has(x[0])).forEach((x, j) => {
          if (j) f.appendChild(document.createTextNode(", "));
          f.appendChild(a(matchHref(id, "hand=" + x[2] + "&fault=" + x[0]), players[x[0]] + ": " + x[1]));
          if (!x[3]) { f.appendChild(document.createTextNode(" ")); f.appendChild(a(logHref(id, x[0], players[x[0]]), "stderr")); }
        });
        tr.appendChild(f);
        body.appendChild(tr);
      });
    });
  }
  drawMatches();
  if (!D.final && !H && !dead) {  // a running tournament: fresh data, unless the reader is busy with the page
    document.documentElement.dataset.reloads = "30";  // what the page does, for its tests
    setTimeout(() => {
      if (!$("find").value && !$("pick").value && page === 0 && mpage === 0 && window.scrollY < 50) location.reload();
    }, 30000);
  }
})();
