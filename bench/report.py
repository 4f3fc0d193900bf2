"""The report's costs at scale: what the coordinator spends on it per match, the index's size
and the time to write it, for a ladder of 500 entrants (100,000 matches) and one of 10,000
entrants (a million matches), 4 seats, synthetic journal lines (1% with a fault).

    python bench/report.py            # both
    python bench/report.py --quick    # 500 entrants, 20,000 matches
    python bench/report.py --large    # 10,000 entrants only

Prints, per scale: the cost of the coordinator's call (``Refresher.match_done``: append, clock),
of a snapshot of the running table (``Standings.standings()``, at most once per interval), of
adding a line to the aggregates and of one write of the data files (the report's thread, in the
coordinator's process), the sizes (index: index.html + report.js + report.css + data.js), and the
report's CPU per match at 10 and 100 matches a second with the refreshes paced as they are
(every max(3 s, 20 x the cost of a snapshot and a write, the cost / 1 ms a match) seconds, at
most 120 s).
"""

from __future__ import annotations

import html
import itertools
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path[0] = str(Path(__file__).resolve().parent.parent)  # not bench/: bench/referee.py

from referee.tournament.ratings import MatchResult, Standings  # noqa: E402
from referee.web.report import BUDGET_S, MAX_WAIT_S, Refresher, Report  # noqa: E402
from referee.web.report_page import ASSETS  # noqa: E402


def lines(entrants: int, matches: int, seed: int = 1) -> Iterator[dict[str, Any]]:
    rng = random.Random(seed)
    names = [f"entrant-{k:05d}" for k in range(entrants)]
    for m in range(matches):
        base = rng.randrange(entrants - 4)
        seats = [names[base + k] for k in rng.sample(range(6 if base + 6 < entrants else 4), 4)]
        totals = [rng.randrange(0, 1100) for _ in seats]
        order = sorted(range(4), key=lambda s: -totals[s])
        ranks = [0] * 4
        for place, s in enumerate(order, 1):
            ranks[s] = place
        faults = []
        if rng.random() < 0.01:
            faults = [{"seat": 0, "hand": rng.randrange(1, 8), "fault": "timeout",
                       "detail": "no answer within 1000 ms (waited 1001 ms)"}]
        yield {"id": f"r{m // 1000 + 1:03d}-g{m % 1000 + 1:04d}-s01", "players": seats,
               "totals": totals, "ranks": ranks, "faults": faults, "hands": rng.randrange(4, 9),
               "record": f"games/r{m}.json"}


def standings_doc(entrants: int, matches: int) -> dict[str, Any]:
    rng = random.Random(2)
    rows = []
    for k in range(entrants):
        mu = 40 - 30 * k / entrants + rng.random()
        rows.append({"rank": k + 1, "name": f"entrant-{k:05d}", "mu": round(mu, 6),
                     "sigma": 0.812345, "score": round(mu - 2.437, 6),
                     "matches": 4 * matches // entrants, "wins": matches // entrants,
                     "mean_rank": 2.512345, "points_per_hand": 101.234567,
                     "faults": {"timeout": 1, "illegal": 0, "garbled": 0, "crash": 0,
                                "startup": 0, "memory": 0},
                     "p_above_next": 0.612345})
    pairs = [{"upper": a["name"], "lower": b["name"], "verdict": "open", "diff": 1.2345,
              "low": -3.4567, "high": 5.6789, "sets": 12} for a, b in itertools.pairwise(rows)]
    return {"tournament": "bench", "matches": matches, "stopped": "cap", "standings": rows,
            "pairs": pairs, "rating": {"mu": 25.0, "sigma": 8.333333, "beta": 4.166667,
                                       "tau": 0.083333, "draw_probability": 0.0}}


def best(f: Callable[[], object], n: int = 3) -> float:
    times = []
    for _ in range(n):
        start = time.process_time()
        f()
        times.append(time.process_time() - start)
    return min(times)


def scale(entrants: int, matches: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        (out / "tournament.yaml").write_text(f"name: bench\nformat: ladder\nplayers: 4\n"
                                             f"max_matches: {matches}\n")
        # the coordinator's call, without a snapshot (the interval not reached)
        pages = Refresher(out, interval=1e9)
        table = Standings([f"entrant-{k:05d}" for k in range(entrants)])
        sample = list(lines(entrants, 20_000, seed=3))
        pages._next = float("inf")
        start = time.process_time()
        for line in sample:
            pages.match_done(line, table)
        call = (time.process_time() - start) / len(sample)
        pages._lines = []
        pages.finish()
        # a snapshot of a table of this many entrants, rated over a few matches each
        for line in sample[:min(len(sample), 2 * entrants)]:
            table.add(MatchResult.from_json(line))
        report = Report(out)
        snap = best(lambda: report.snapshot(table))
        # the aggregates: every line added once
        report = Report(out)
        start = time.process_time()
        for line in lines(entrants, matches):
            report.add(line)
        add = (time.process_time() - start) / matches
        doc = standings_doc(entrants, matches)
        (out / "standings.json").write_text(json.dumps(doc))
        report.history = [(k * matches // 300, {r["name"]: r["mu"] for r in
                                                 doc["standings"][:30]}) for k in range(301)]
        start = time.perf_counter()
        report.write()
        first = time.perf_counter() - start
        write = best(report.write)
        wall = best(lambda: report.write(final=True), 1)
        root = out / "report"
        index = sum((root / n).stat().st_size for n in (*ASSETS, "data.js"))
        data = (root / "data.js").stat().st_size
        chunks = sorted((root / "matches").glob("*.js"))
        details = sum(p.stat().st_size for p in (root / "entrant").glob("*.js"))
        rows = sum(p.stat().st_size for p in (root / "rows").glob("*.js"))
        print(f"{entrants} entrants, {matches:,} matches:")
        print(f"  index {index / 1e6:.2f} MB (data.js {data / 1e6:.2f} MB); match list "
              f"{len(chunks)} files, {chunks[0].stat().st_size / 1e3:.0f} KB each; "
              f"standings files {rows / 1e6:.2f} MB; each entrant's details "
              f"{details / 1e6:.1f} MB")
        print(f"  write of the data files: {write * 1e3:.0f} ms CPU (the first, with every "
              f"full chunk: {first:.2f} s wall; at the end, with each entrant's details: "
              f"{wall:.2f} s CPU)")
        print(f"  coordinator's call {call * 1e6:.1f} µs; snapshot of the table "
              f"{snap * 1e3:.1f} ms; a line into the aggregates {add * 1e6:.1f} µs")
        opened = None
        for _ in range(3):  # a loaded machine may keep Chromium from starting in time
            opened = page_time(root)
            if opened is not None:
                break
        print("  the page drawn in headless Chromium from file:// (standings and the first "
              "matches): " + ("no Chromium, or not within 15 s three times" if opened is None
                              else f"{opened:.2f} s"))
        cost = write + snap
        for rate in (10, 100):
            period = min(MAX_WAIT_S, max(3.0, 20 * cost, cost / (BUDGET_S * rate)))
            per = call + add + cost / (rate * period)
            print(f"  report CPU a match at {rate} matches/s (a refresh every {period:.0f} s): "
                  f"{per * 1e3:.2f} ms")


HARNESS = """<!DOCTYPE html><html><body><pre id="out">pending</pre><script>
const t0 = performance.now();
const f = document.createElement("iframe");
f.style.cssText = "width:1000px;height:700px;border:0";
f.src = "index.html";
document.body.appendChild(f);
const poll = setInterval(() => {
  const d = f.contentDocument;
  if (d && d.querySelector("#mtable tbody tr") && d.querySelector("#table tbody tr")) {
    clearInterval(poll);
    document.getElementById("out").textContent = String(performance.now() - t0);
  }
}, 5);
</script></body></html>"""


def page_time(root: Path) -> float | None:
    """Seconds from asking for the index (in an iframe of headless Chromium, from file://)
    until its standings and its first matches are drawn; ``None`` without Chromium."""
    browser = next(filter(None, map(shutil.which, ("chromium", "chromium-browser"))), None)
    if browser is None:
        return None
    (root / "timing.html").write_text(HARNESS)
    with tempfile.TemporaryDirectory() as profile:
        done = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu",
                               f"--user-data-dir={profile}", "--allow-file-access-from-files",
                               "--timeout=15000", "--dump-dom",
                               (root / "timing.html").as_uri()],
                              capture_output=True, text=True, timeout=120, check=False)
    text = html.unescape(done.stdout.split('<pre id="out">', 1)[-1].split("</pre>", 1)[0])
    try:
        return float(text) / 1000
    except ValueError:
        return None


def main() -> None:
    if "--quick" in sys.argv:
        scale(500, 20_000)
        return
    if "--large" in sys.argv:
        scale(10_000, 1_000_000)
        return
    scale(500, 100_000)
    scale(10_000, 1_000_000)


if __name__ == "__main__":
    main()
