"""The league's page in the real headless Chromium (tests/browser.py), as a class reads it: at
390 px (a phone) the leaderboard with every row's verdict on the first screen and the
refusals right after it, nothing wider than the screen; at 1000 px every column; every
finished match linked to its replay, which the tournament report's replay page draws from the
league's own folder."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from browser import Browser
from test_report import measure

from conftest import EXAMPLES, PY
from referee.league.config import load_league
from referee.league.live import write_page
from referee.league.run import run_league

pytestmark = pytest.mark.process  # a browser

NAMES = ["alice", "bob", "carol", "dan", "erin-the-very-long-named-student-of-group-b",
         "fay", "gus", "hal", "ivy", "jo", "kim", "lee"]


def data() -> dict[str, Any]:
    """A class of 12 versions, three refusals (one with the end of its stderr), results."""
    rows = []
    for k, name in enumerate(NAMES):
        pair = {"upper": name, "lower": "x", "verdict": "open" if k % 3 else "stronger",
                "diff": 3.4 - k / 4, "low": -20.5 + k, "high": 27.25 - k, "sets": 6 + k}
        rows.append({"name": name, "author": name, "version": 1, "mu": 30 - k, "sigma": 1.5,
                     "score": 25.5 - k, "sets": 40, "matches": 80, "wins": 40,
                     "points_per_hand": 120.25, "faults": k % 2, "active": True, "why": "",
                     "history": [[1, 25.0, 8.0], [40, 30.0 - k, 1.5]],
                     "p_above_next": 0.61, "next": pair if k < len(NAMES) - 1 else None,
                     "first_s": 2.5})
    matches = [{"id": f"r1-g{g:06d}-s0{s}", "players": ["alice", "bob"], "totals": [1002, 840],
                "faults": 0} for g in range(1, 16) for s in (1, 2)]
    refused = {"zed": {"reason": "did not start in the pre-flight: startup: it exited before "
                                 "`ready`",
                       "stderr": ['  File "/ct/0/bot.py", line 2', '    print("ready"',
                                  "SyntaxError: '(' was never closed"]},
               "yan": {"reason": "failed the conformance check (ct-referee check) twice: "
                                 "match 1: go: expected an answer line within 1000 ms"},
               "xi": {"reason": "its folder is empty (nothing to run)"}}
    return {"name": "cs101", "live": False, "matches": 1200, "sets": 600, "rows": rows,
            "newest": matches, "own": {"alice": matches[:20], "bob": matches[:20]},
            "refused": refused, "log": [f"09:00:{k:02d} admitted {n}"
                                        for k, n in enumerate(NAMES)],
            "confidence": 0.95, "hand_points": 240, "flags": []}


LAYOUT = """(w, d, out, done) => { w.setTimeout(() => {
  const width = d.documentElement.clientWidth;
  out.overflow = d.documentElement.scrollWidth - width;
  out.height = w.innerHeight;
  out.verdicts = Array.from(d.querySelectorAll("#board tr td:last-child")).map((c) => {
    const r = c.getBoundingClientRect();
    return [c.textContent, r.width > 0 && r.left >= 0 && r.right <= width + 0.5, r.bottom];
  });
  const cut = [];
  d.querySelectorAll("td, th, h1, h2, li, pre").forEach((e) => {
    const r = e.getBoundingClientRect();
    if (r.width && (r.right > width + 0.5 || r.left < -0.5)) cut.push(e.textContent.slice(0, 40));
  });
  out.cut = cut;
  out.refused = d.getElementById("refused-zed").getBoundingClientRect().top;
  out.columns = Array.from(d.querySelectorAll("#board tr:first-child th"))
    .filter((c) => c.getBoundingClientRect().width > 0).length;
  out.replays = Array.from(d.querySelectorAll("a.id")).map((a) => a.getAttribute("href"));
  done();
}, 300); }"""


@pytest.mark.parametrize("size", [(390, 844), (1000, 700)])
def test_the_league_page_reads_on_a_phone_and_a_desk(tmp_path: Path, browser: Browser,
                                                      size: tuple[int, int]) -> None:
    report = tmp_path / "report"
    write_page(report, data())
    got = measure(browser, report / "index.html", "", size, LAYOUT)
    assert got["overflow"] == 0 and got["cut"] == [], got
    verdicts = got["verdicts"]
    assert isinstance(verdicts, list) and len(verdicts) == len(NAMES)
    assert all(shown for _, shown, _ in verdicts[:-1]), verdicts  # the last has no next
    assert verdicts[0][0].startswith("stronger")
    if size[0] == 390:  # every row with its verdict on the first screen, the refusals next
        assert all(bottom <= size[1] for _, _, bottom in verdicts), verdicts
        assert got["columns"] == 3, got  # #, version, verdict
        assert float(str(got["refused"])) < 2 * size[1], got
    else:
        assert got["columns"] == 12, got
    assert "replay.html#id=r1-g000001-s01" in str(got["replays"])


def test_a_finished_match_replays_from_the_league_page(tmp_path: Path,
                                                       browser: Browser) -> None:
    """A small league of the house's random and greedy bots (no sandbox: trusted), two sets:
    each match of a finished set is linked from the page, its replay written beside it, and
    the tournament report's replay page draws it from the league's folder."""
    path = tmp_path / "league.yaml"
    path.write_text(f"name: tiny\nsandbox: none\ncheck: false\ntarget: 100\nplacement: 1\n"
                    f"max_matches: 4\noutput: out\nentrants:\n"
                    f"  - {{name: r, command: {PY} {EXAMPLES}/random_bot.py}}\n"
                    f"  - {{name: g, command: {PY} {EXAMPLES}/greedy_bot.py}}\n")
    run_league(load_league(path), stop=threading.Event())
    out = tmp_path / "out"
    page = (out / "report" / "index.html").read_text()
    newest = json.loads((out / "report" / "league.json").read_text())["newest"]
    assert len(newest) == 4
    for match in newest:
        assert f'href="replay.html#id={match["id"]}"' in page
        assert (out / "report" / "replays" / f"{match['id']}.js").is_file()
    every = (out / "report" / "matches.html").read_text()
    theirs = (out / "report" / "authors" / "r.html").read_text()
    for match in newest:  # every match listed, and in each of its authors' lists
        assert f'href="replay.html#id={match["id"]}"' in every
        assert f'href="../replay.html#id={match["id"]}"' in theirs
    assert 'href="matches.html"' in page and 'href="authors/r.html"' in page
    assert (out / "standings.csv").read_text().startswith("rank,name,author,version,mu")
    standings = json.loads((out / "standings.json").read_text())
    assert {r["name"] for r in standings["standings"]} == {"r", "g"}
    dom = browser.dom(f"{(out / 'report' / 'replay.html').as_uri()}#id={newest[0]['id']}",
                      budget_ms=5000)
    result = dom.split('id="result"', 1)[1].split(">", 1)[1].split("<", 1)[0]
    assert result.startswith("Result: ") and "No replay" not in result, result
    assert "&#8592; league page</a>" in dom or "← league page</a>" in dom
