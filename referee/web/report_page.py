"""The tournament report's viewer: one fixed page, script and style (no data).

``report/index.html`` loads ``report.css``, ``data.js`` (``window.CT_REPORT``: the page's data,
:func:`referee.web.folder.page_data`) and ``report.js``, which draws everything from the data,
and loads the match list a chunk at a time (``matches/<k>.js``, each calling
``ctMatches(k, rows)``) and a chosen entrant's crosstable (``cross/<k>.js``, ``ctCross``) as
``<script>`` elements: plain files, so the page works from ``file://`` as from any static
server. The script writes every text from the data with ``textContent``, never as HTML, so
nothing a bot wrote can become markup. The style and script are package data
(``assets/report.css``, ``assets/report.js``).
"""

from __future__ import annotations

from referee.web.replay_html import asset, html_head

__all__ = ["ASSETS", "INDEX_HTML"]

INDEX_HTML = html_head("tournament report", '<link rel="stylesheet" href="report.css">') + """
<body>
<header><h1 id="name">tournament report</h1>
<p id="headline" class="headline">loading…</p>
<p id="luck" class="sub">Adjusted for luck: the differences in the headline and the verdicts
are points a hand minus the luck of the cards turned up from the stock, over the same deals in
every seat order; pts/hand and the crosstable are raw points, so they can differ.</p>
<p id="sub" class="sub"></p>
<nav><a href="#standings">standings</a> <a href="#about">settings</a>
<a href="#crosstable">crosstable</a>
<a href="#ratings">ratings</a> <a href="#faults">faults</a> <a href="#matches">matches</a>
<span id="files"></span></nav>
</header>
<main>
<noscript><p class="bad">This page draws itself with JavaScript: allow scripts for it, or read
standings.csv and results.jsonl beside it.</p></noscript>
<p id="nodata" class="bad" hidden>No data.js beside this page: <code>ct-referee report
OUTPUT</code> writes it.</p>
<section id="gauntlet" hidden><h2>The candidate against each entrant</h2>
<table class="data" id="questions"><thead><tr><th>candidate</th><th>against</th>
<th>verdict</th></tr></thead><tbody></tbody></table></section>
<section id="standings"><h2>Standings</h2>
<p id="order" class="muted"></p>
<div class="tools"><label>find an entrant <input id="find" type="search"
 placeholder="name" autocomplete="off"></label> <span id="pager" class="pager"></span></div>
<table class="data standings" id="table"><thead><tr>
<th class="n">#</th><th>name</th><th class="n w">mu</th><th class="n w">σ</th>
<th class="n">mu−3σ</th><th class="n w">matches</th><th class="n w">wins</th>
<th class="n w">avg rank</th><th class="n">pts/hand</th><th class="n m">faults</th>
<th class="n w">P(above next)</th><th>verdict vs next</th></tr></thead><tbody></tbody></table>
<details class="legend"><summary>What the columns mean</summary><dl>
<dt>mu, σ</dt><dd>TrueSkill's estimate of the entrant's skill and its uncertainty, updated
once per duplicate set on the members' points over the set less the luck of the stock's cards
(<code>rating.per: set</code>, the default; with <code>rating.per: match</code>, on each
match's final ranks).</dd>
<dt>mu−3σ</dt><dd>a cautious skill: the entrant is very likely at least this good. The table
is sorted by it (rated once per duplicate set on luck-adjusted points), except that a decided
verdict always wins over it. <em>wins</em> counts matches won, which the seat and the cards
decide more than points a hand do: the two may disagree. A row may trail the next on the
difference its verdict prints while that verdict is open: the order is mu−3σ's, which weighs
each set's ranking and how sure the rating is, not the mean difference over the deals; only a
decided verdict moves a row.</dd>
<dt>pts/hand</dt><dd>raw points scored per hand played, over all its matches (not adjusted
for luck).</dd>
<dt>P(above next)</dt><dd>TrueSkill's probability that this entrant is stronger than the next
row: a description, with no error control.</dd>
<dt>verdict vs next</dt><dd>the test on this row against the next, over the duplicate
sets they shared (a <em>set</em>: the same deals in every seat order, so the luck of the cards
cancels): <em>stronger</em> once it is decided at the tournament's confidence (it stays so),
<em>tie</em> (with a margin) when neither is stronger by the margin, else <em>open</em>: not
yet told apart; then the difference in points a hand (adjusted for luck: each hand's points
minus the luck of the stock's cards), in brackets the ends of its interval (an asymptotic
confidence sequence: it holds however often it is looked at, centred on the difference, its
spread learnt from the deals, narrowing as sets accrue) and the sets. <em>Too early to
tell</em>: the interval is still wider than half a hand's points, so it measures nothing yet;
the difference so far is in brackets. What each verdict assumes:
docs/statistics.md.</dd>
<dt>faults</dt><dd>timeouts, illegal moves, garbled lines, crashes, failed starts, memory
kills: each loses that match (the referee's fallback plays the seat on).</dd>
<dt>tags</dt><dd><em>left out</em>: did not start in the pre-flight, plays no match: its row
says why, last (the referee's fallback played its seats, shown as <em>fallback</em> in the
matches);
<em>disqualified</em>: too many faults; <em>audit</em>: the fair-play audit flagged it.</dd>
</dl></details>
</section>
<section id="about"><h2>Format and settings</h2><ul id="settings" class="settings"></ul>
<p id="stopped" class="muted"></p></section>
<section id="audit" hidden><h2>Fair-play audit</h2>
<p class="muted">Per entrant, its points a hand (adjusted for luck) in the later seatings of
each duplicate set minus in the first-played one, and about where that lies: a bot that
remembers the deals between the seatings of a set scores more in the later ones (or less, to
feed an accomplice). The seatings are played in an order drawn at random, so for an honest
bot the first is a seating like any other: the flag is a randomization test, exact, at the
tournament's confidence over all entrants. In a set a cheat's gain is its opponents' loss, so
an entrant is named only on its own evidence: in every subset of the field holding it, the
sets among those entrants alone show a difference (closed testing), so an honest entrant beside
one cheat is named no more often than the confidence allows. Where every set holds the same
entrants (two entrants, or a group of three at three seats), they cannot be told apart: the
pair or the group is flagged, and any of them may be the cause.</p>
<table class="data" id="audits"><thead><tr><th>entrant</th><th class="n">later − first</th>
<th>about</th><th class="n">sets</th><th>flag</th></tr></thead><tbody></tbody></table></section>
<section id="crosstable"><h2>Crosstable</h2>
<p class="muted">Row against column, over the matches both played: the row's raw points a
hand minus the column's (not adjusted for luck, unlike the verdicts), and below, its
wins–losses (a win: ranked above the other).</p>
<div id="cross"></div>
<div class="tools"><label>one entrant against every other, and its faults
<input id="pick" type="search" placeholder="name" autocomplete="off"></label></div>
<div id="one"></div></section>
<section id="ratings"><h2>Ratings over the matches</h2>
<p class="muted">TrueSkill mean (mu) of the leading entrants as the matches were rated.</p>
<div id="chart"></div></section>
<section id="faults"><h2>Faults</h2>
<p class="muted">Grouped by entrant and kind, with the first examples: each links to the
step of the match where it happened and to the bot's stderr.</p><div id="faultlist"></div>
</section>
<section id="matches"><h2>Matches</h2><div class="tools"><span id="mpager" class="pager">
</span></div><table class="data matches" id="mtable"><thead><tr><th>match</th><th>players
(points, rank)</th><th class="n">hands</th><th>faults</th></tr></thead><tbody></tbody>
</table></section>
</main>
<footer class="muted">written by ct-referee; <code>ct-referee report OUTPUT</code> rebuilds it,
<code>ct-referee report OUTPUT --serve</code> serves the folder with every match's replay.
</footer>
<script src="data.js"></script>
<script src="alive.js"></script>
<script src="report.js"></script>
</body>
</html>
"""

REPORT_CSS = asset("report.css")

REPORT_JS = asset("report.js")

ASSETS = {"index.html": INDEX_HTML, "report.css": REPORT_CSS, "report.js": REPORT_JS}
"""The report's fixed files (the same for every tournament), by name in ``report/``."""
