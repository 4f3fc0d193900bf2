"""The tournament report (``report/``): drawn from a real tournament's folder (a bot that
writes HTML, one that never starts), opened in headless Chromium (the DOM after the scripts ran,
layout measured at 1000x700 and 390 px), every link followed, ``--serve`` asked over HTTP. The
report's data without a browser: ``test_report_data.py``."""

from __future__ import annotations

import gzip
import html
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from browser import Browser, BrowserError, find_chromium
from served import Client, report_server

from conftest import tournament_yaml
from referee.records.record import read_record, write_record
from referee.web.replay_html import compact_steps, match_steps

pytestmark = pytest.mark.process
ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
CLI = [str(Path(PY).parent / "ct-referee")]

EVIL_BOT = f"""\
import sys
sys.path.insert(0, {str(ROOT / 'tests' / 'bots')!r})
from legal import answer
n = 0
for line in sys.stdin:
    if line.startswith("chinese-ten"):
        print("ready <i>evil</i>", flush=True)
    elif line.startswith(("go ", "pick ")):
        n += 1
        sys.stderr.write("\\x1b[31m<script>alert('stderr')</script>\\n")
        sys.stderr.flush()
        if n == 4:
            print("<img src=x onerror=alert(1)>", flush=True)
        else:
            print("info <b>thinking</b> & more", flush=True)
            print(answer(line), flush=True)
    elif line.startswith("quit"):
        break
"""
CRASHER = "import sys\nsys.stderr.write('boom: no model file\\n')\nsys.exit(3)\n"


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished tournament: four entrants, two seats, one faulting with HTML in its answer
    and its stderr, one that never starts (left out)."""
    base = tmp_path_factory.mktemp("report")
    (base / "evil.py").write_text(EVIL_BOT)
    (base / "crash.py").write_text(CRASHER)
    tournament_yaml(base, {"random": f"{PY} {ROOT}/bots/random_bot.py",
                           "greedy": f"{PY} {ROOT}/bots/greedy_bot.py",
                           "evil": f"{PY} evil.py", "crasher": f"{PY} crash.py"},
                    name="report-test", players=2, target=100, sandbox="none")
    done = subprocess.run([*CLI, "tournament", "t.yaml", "-o", "out"], cwd=base,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.rstrip().endswith(f"report: {base / 'out' / 'report' / 'index.html'}")
    assert [line for line in done.stdout.splitlines() if line != line.rstrip()] == []
    assert "1 sets" not in done.stdout
    # which difference is which: the verdicts' are adjusted for luck, pts/h is raw
    said = " ".join(done.stdout.split())  # the caption wraps
    assert "pts/h: raw points a hand." in said
    assert "the difference in points a hand adjusted for luck" in said
    assert sum(line.startswith("fault: ") and " crasher " in line
               for line in done.stdout.splitlines()) == 1  # not once per match
    # each limit in words: max_faults 0 is no limit, not "no fault allowed"
    assert "  faults:    no limit (max_faults 0: no entrant is disqualified)\n" in done.stdout
    assert "  clock:     a move 1000 ms, start-up 10000 ms, time bank none\n" in done.stdout
    done = subprocess.run([*CLI, "report", "out"], cwd=base, capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return base / "out"


def kth(k: int) -> str:
    """The id of the ``k``-th match (from 0) of a schedule of two-match sets."""
    return f"r{k // 2 + 1}-g001-s{k % 2 + 1:02d}"


def data(folder: Path) -> dict[str, object]:
    text = (folder / "report" / "data.js").read_text()
    result = json.loads(text[len("window.CT_REPORT = "):-2])
    assert isinstance(result, dict)
    return result


# -- the files, without a browser ----------------------------------------------------------------


def test_every_match_has_its_page_and_no_page_copies_the_viewer(folder: Path) -> None:
    ids = [json.loads(line)["id"] for line in (folder / "results.jsonl").read_text().splitlines()]
    assert len(ids) == 12 and data(folder)["pages"] == "all"
    viewer = (folder / "report" / "viewer.js").read_text()
    blobs = []
    for match_id in ids:
        replay = (folder / "report" / "games" / f"{match_id}.html").read_text()
        assert '<script src="../viewer.js">' in replay and viewer[:200] not in replay
        assert '<div id="result" class="result">Result: ' in replay
        blobs.append(replay.split('id="ct-data">', 1)[1].split("</script>", 1)[0])
        assert 'href="../index.html"' in replay
    assert sum("thinking" in blob for blob in blobs) == 6  # the matches of the evil bot
    assert not any("</" in blob or "<!--" in blob for blob in blobs)


def test_report_command_refuses_a_folder_that_is_not_a_tournament(tmp_path: Path) -> None:
    (tmp_path / "x").mkdir()
    for target in (tmp_path / "x", tmp_path / "missing"):
        done = subprocess.run([*CLI, "report", str(target)], capture_output=True, text=True,
                              timeout=60, check=False)
        assert done.returncode == 2
        assert done.stderr.startswith("error: ") and done.stderr.count("\n") == 1
        assert "Traceback" not in done.stderr


def test_serve_shows_logs_as_text_and_draws_any_match_on_demand(folder: Path,
                                                                 tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    shutil.rmtree(copy / "report" / "games")
    with report_server(copy) as (_, address):
        client = Client(address)
        log = next((copy / "logs").glob("*/*-evil.stderr")).relative_to(copy).as_posix()
        with client.open(f"/{log}") as r:
            assert r.headers["Content-Type"].startswith("text/plain")
            assert b"<script>" in r.read()
        record = next((copy / "games").glob("*.json.gz"))
        match_id = record.name.removesuffix(".json.gz")
        with client.open(f"/report/games/{match_id}.html") as r:
            assert r.headers["Content-Type"].startswith("text/html")
            assert b'id="ct-data"' in r.read()
        with client.open(f"/games/{record.name}") as r:
            # the compressed record, shown by the browser as JSON (it decompresses it)
            assert r.headers["Content-Type"] == "application/json"
            assert r.headers["Content-Encoding"] == "gzip"
            assert json.loads(gzip.decompress(r.read()))["id"] == match_id
        (tmp_path / "outside.json.gz").write_bytes(gzip.compress(b"{}"))  # beside the folder
        for escape in ("/games/%2E%2E/%2E%2E/outside.json.gz", "/games/../../outside.json.gz",
                       "/report/replays/%2E%2E%2F%2E%2E%2Foutside.js",  # not a match id: no
                       "/report/games/not%20an%20id.html"):  # record is looked for by it
            assert client.status(escape) == 404, escape
        assert client.read("/report/data.js").endswith(b'(window.CT_REPORT.pages = "all");\n')
        for hidden in ("/.deal-secret", "/%2Edeal-secret", "/games/../.ct-referee.json",
                       "/.report-key"):
            assert client.status(hidden) == 404, hidden


# -- in a real browser --------------------------------------------------------------------------


@pytest.mark.slow  # the test helper's own, two browsers started: the deep lane's
def test_a_browser_that_dies_or_hangs_fails_the_page_and_the_next_page_gets_another(
        tmp_path: Path) -> None:
    """The shared browser's helper (tests/browser.py): a browser killed fails the page it was
    asked for and the next page starts a new one; one stopped, so that it never answers, fails
    its page when the deadline runs out (not a hang) and is killed."""
    executable = find_chromium()
    if executable is None:
        pytest.skip("chromium is not installed (.ci/run installs it): the report's browser "
                    "tests need it")
    page = tmp_path / "p.html"
    page.write_text("<p id=x>before</p><script>setTimeout(() => "
                    "{ document.getElementById('x').textContent = 'after'; }, 30000)</script>")
    browser = Browser(executable, timeout=30)
    try:
        assert '<p id="x">before</p>' in browser.dom(page)
        assert '<p id="x">after</p>' in browser.dom(page, budget_ms=31000)  # virtual time
        first = browser.pid
        assert first is not None
        os.killpg(first, signal.SIGKILL)
        with pytest.raises(BrowserError, match=r"closed its pipe|Broken pipe"):
            browser.dom(page)
        assert browser.pid is None and '<p id="x">before</p>' in browser.dom(page)
        second = browser.pid
        assert second is not None and second != first
        os.killpg(second, signal.SIGSTOP)
        browser.timeout = 1  # a stopped browser never answers: any deadline runs out
        with pytest.raises(BrowserError, match="no answer within 1 s"):
            browser.dom(page)
        assert browser.pid is None and not Path(f"/proc/{second}").exists()  # killed
    finally:
        browser.close()


class Links(HTMLParser):
    """The ids and the link targets (``href``, ``src``) of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.targets: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for key, value in attrs:
            if key == "id" and value:
                self.ids.add(value)
            if key in ("href", "src") and value is not None:
                self.targets.append(value)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parse(dom: str) -> Links:
    links = Links()
    links.feed(dom)
    return links


def assert_links_resolve(page: Path, links: Links) -> int:
    for target in links.targets:
        parts = urlsplit(target)
        assert not parts.scheme and not parts.netloc, f"{page.name}: external link {target!r}"
        if not parts.path:
            assert parts.fragment in links.ids, f"{page.name}: no anchor {target!r}"
            continue
        resolved = (page.parent / unquote(parts.path)).resolve()
        assert resolved.is_file(), f"{page.name}: {target!r} leads nowhere ({resolved})"
    return len(links.targets)


def test_the_report_renders_in_chromium_and_every_link_leads_somewhere(
        folder: Path, browser: Browser) -> None:
    index = folder / "report" / "index.html"
    links = parse(browser.dom(index, budget_ms=10000))
    text = " ".join(links.text)
    for name in ("random", "greedy", "evil", "crasher"):
        assert name in text
    assert str(data(folder)["headline"]) in text
    assert "Standings" in text and "Crosstable" in text and "What the columns mean" in text
    words = " ".join(text.split())
    assert "adjusted for luck" in data(folder)["headline"]  # type: ignore[operator]
    assert "Adjusted for luck: the differences in the headline and the verdicts" in \
        words.split("Standings", 1)[0]
    assert "raw points a hand minus the column's (not adjusted for luck" in words
    # the entrant left out: one row of its own saying why, in no match, crosstable nor audit
    assert " ".join(text.split()).count("crasher") == 1, text
    assert "crasher left out did not start in the pre-flight" in " ".join(text.split())
    assert "<img src=x" in text  # the evil bot's answer, as text
    # one duplicate set per pair: each verdict in words, with a ± figure once it measures
    # something (never one as wide as a hand's points)
    verdicts = [row[-2][5] for row in data(folder)["rows"]  # type: ignore[index]
                if isinstance(row[-2], list)]
    assert verdicts and all(v in text for v in verdicts), verdicts
    assert all(", 1 set" in v for v in verdicts), verdicts
    assert data(folder)["audit"] and "later \u2212 first" in text.split("Fair-play audit", 1)[1]
    assert "\u221e" not in text and "240.0]" not in text
    assert assert_links_resolve(index, links) > 12
    assert any(t.startswith("../logs/") for t in links.targets)
    assert any(t.startswith("../preflight/crasher") for t in links.targets)
    games = {t.split("#")[0] for t in links.targets if t.startswith("games/")}
    assert len(games) == 12  # the match list's first chunk was loaded
    deep = [t for t in links.targets if t.startswith("games/") and "&turn=" in t]
    assert deep, "no fault example links to its step"
    replay = index.parent / games.pop()
    dom = browser.dom(replay)
    shown = parse(dom)
    assert 'class="seat' in dom, "the replay's script did not draw the table"
    assert "../index.html" in shown.targets
    assert_links_resolve(replay, shown)


# The step a replay page shows: where it is, its action line and its log's current entry.
STEP = """(w, d, out, done) => {
  out.where = d.getElementById("where").textContent;
  out.action = d.querySelector(".action").textContent;
  out.log = d.querySelector("#log li.now").textContent;
  done();
}"""


def test_a_fault_links_to_its_step(folder: Path, browser: Browser) -> None:
    group = next(g for g in data(folder)["faults"] if g["name"] == "evil")  # type: ignore[attr-defined]
    example = group["examples"][0]
    assert example["log"].startswith("logs/") and "<script>" in example["tail"]
    assert "\x1b" not in example["tail"] and "\\x1b[31m" in example["tail"]  # as a terminal
    page = folder / "report" / "games" / f"{example['id']}.html"
    got = measure(browser, page, f"hand={example['hand']}&turn={example['turn']}", (1000, 700),
                  STEP)
    assert f"hand {example['hand']}/" in str(got["where"])
    assert f"turn {example['turn']}/" in str(got["where"])
    assert "evil faulted (garbled" in str(got["action"]), got


REPORT_LAYOUT = """(w, d, out, done) => { w.setTimeout(() => {
  const width = d.documentElement.clientWidth;
  out.overflow = d.documentElement.scrollWidth - width;
  const cut = [], overlaps = [];
  d.querySelectorAll("td, th, h1, #headline, .group li, .tools").forEach((e) => {
    const r = e.getBoundingClientRect();
    if (r.width && (r.right > width + 0.5 || r.left < -0.5)) cut.push(e.textContent.slice(0, 40));
  });
  d.querySelectorAll("tr").forEach((tr) => {
    const cells = Array.from(tr.children).filter((c) => c.getBoundingClientRect().width > 0);
    for (let k = 1; k < cells.length; k++) {
      if (cells[k].getBoundingClientRect().left < cells[k - 1].getBoundingClientRect().right - 0.5)
        overlaps.push(cells[k].textContent.slice(0, 40));
    }
  });
  out.cut = cut;
  out.overlaps = overlaps;
  const verdict = d.querySelector("#table tbody tr td:last-child").getBoundingClientRect();
  out.verdict = verdict.width > 0 && verdict.right <= width + 0.5;
  out.headline = d.getElementById("headline").textContent;
  out.matches = d.querySelectorAll("#mtable tbody tr").length;
  done();
}, 500); }"""


@pytest.mark.parametrize("size", [(1000, 700), (390, 844)])
def test_the_report_fits_with_no_horizontal_scrolling(folder: Path, browser: Browser,
                                                      size: tuple[int, int]) -> None:
    got = measure(browser, folder / "report" / "index.html", "", size, REPORT_LAYOUT)
    assert got["overflow"] == 0, got
    assert got["cut"] == [] and got["overlaps"] == [], got
    assert got["verdict"] is True, got
    assert got["headline"] == data(folder)["headline"] and got["matches"] == 12


def ladder_id(m: int) -> str:
    """The id of :func:`large_ladder`'s ``m``-th match: sets of four seatings, 100 a round."""
    return f"r{m // 400 + 1}-g{m // 4 % 100 + 1:03d}-s{m % 4 + 1:02d}"


def large_ladder(out: Path, entrants: int, matches: int) -> None:
    """An output folder of a ladder, written without bots: the journal and the standings."""
    rng = random.Random(5)
    names = [f"entrant-{k:05d}" for k in range(entrants)]
    out.mkdir(parents=True)
    (out / "tournament.yaml").write_text("name: big\nformat: ladder\nplayers: 4\n"
                                         "seatings: rotate\n")
    with (out / "results.jsonl").open("w") as f:
        for m in range(matches):
            base = rng.randrange(entrants - 4)
            seats = names[base:base + 4]
            totals = [rng.randrange(1100) for _ in seats]
            ranks = [1 + sorted(totals, reverse=True).index(t) for t in totals]
            faults = [{"seat": 2, "hand": 3, "fault": "timeout", "detail": "no answer"}] \
                if m % 50 == 0 else []
            f.write(json.dumps({"id": ladder_id(m),
                                "players": seats, "totals": totals, "ranks": ranks,
                                "faults": faults, "hands": 5}) + "\n")
    rows = [{"rank": k + 1, "name": n, "mu": 40 - k / 100, "sigma": 1.0, "score": 37 - k / 100,
             "matches": 8, "wins": 2, "mean_rank": 2.5, "points_per_hand": 100.0,
             "faults": {"timeout": 0}, "p_above_next": 0.6} for k, n in enumerate(names)]
    (out / "standings.json").write_text(json.dumps({"standings": rows, "stopped": "cap",
                                                    "pairs": []}))


BIG = """(w, d, out, done) => { w.setTimeout(() => {
  const names = () => Array.from(d.querySelectorAll("#table tbody tr td:nth-child(2) a"))
    .map((e) => e.textContent);
  out.first = names().length;
  const find = d.getElementById("find");
  find.value = "entrant-01150";
  find.dispatchEvent(new w.Event("input"));
  w.setTimeout(() => {
    out.found = names();
    find.value = "";
    find.dispatchEvent(new w.Event("input"));
    w.setTimeout(() => {
      d.querySelector("#pager button:last-child").click();
      w.setTimeout(() => {
        out.last = names();
        d.querySelector("#table tbody tr td:nth-child(2) a").click();
        w.setTimeout(() => {
          out.one = d.getElementById("one").textContent;
          d.querySelector("#mpager button:last-child").click();
          w.setTimeout(() => {
            out.matches = Array.from(d.querySelectorAll("#mtable tbody tr td:first-child"))
              .map((e) => e.textContent);
            out.overflow = d.documentElement.scrollWidth - d.documentElement.clientWidth;
            done();
          }, 300);
        }, 300);
      }, 300);
    }, 300);
  }, 300);
}, 300); }"""


@pytest.mark.deep
def test_a_large_ladder_pages_its_rows_and_matches_and_finds_an_entrant(
        tmp_path: Path, browser: Browser) -> None:
    out = tmp_path / "out"
    large_ladder(out, 1200, 2100)
    done = subprocess.run([*CLI, "report", str(out)], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert len(list((out / "report" / "rows").glob("*.js"))) == 3
    assert len(list((out / "report" / "matches").glob("*.js"))) == 3
    got = measure(browser, out / "report" / "index.html", "", (1000, 700), BIG)
    assert got["first"] == 100 and got["found"] == ["entrant-01150"], got
    assert got["last"] == [f"entrant-{k:05d}" for k in range(1100, 1200)], got
    assert "entrant-01100 against 6 opponents" in str(got["one"]), got
    assert got["matches"] == [ladder_id(m) for m in range(2050, 2100)], got
    assert got["overflow"] == 0


CHART = """(w, d, out, done) => {
  const svg = d.querySelector("svg.chart"), frame = svg.getBoundingClientRect();
  const texts = Array.from(svg.querySelectorAll("text"));
  const box = (t) => { const r = t.getBoundingClientRect();
    return {text: t.textContent, left: r.left, right: r.right, top: r.top, bottom: r.bottom}; };
  out.axes = texts.filter((t) => t.classList.contains("axis")).map(box);
  out.ticks = texts.filter((t) => !t.classList.contains("axis")).map(box);
  out.frame = {left: frame.left, right: frame.right, top: frame.top, bottom: frame.bottom};
  done();
}"""


def test_the_rating_chart_labels_its_axes(folder: Path, browser: Browser) -> None:
    got = measure(browser, folder / "report" / "index.html", "ratings", (1000, 700), CHART)
    axes = {a["text"]: a for a in got["axes"]}  # type: ignore[attr-defined]
    assert set(axes) == {"matches rated", "rating (mu)"}, got
    frame, ticks = got["frame"], got["ticks"]
    for a in axes.values():  # inside the chart, over no tick's number
        assert frame["left"] <= a["left"] and a["right"] <= frame["right"], got  # type: ignore[index]
        assert frame["top"] <= a["top"] and a["bottom"] <= frame["bottom"], got  # type: ignore[index]
        for t in ticks:  # type: ignore[attr-defined]
            assert (a["right"] <= t["left"] or t["right"] <= a["left"] or a["bottom"] <= t["top"]
                    or t["bottom"] <= a["top"]), (a, t)
    x, y = axes["matches rated"], axes["rating (mu)"]
    assert y["bottom"] - y["top"] > y["right"] - y["left"], "the rating's label is not upright"
    assert x["top"] > max(t["bottom"] for t in ticks) - 1  # type: ignore[attr-defined]


def test_the_report_screenshot(folder: Path, browser: Browser, tmp_path: Path) -> None:
    shot = tmp_path / "report.png"
    browser.screenshot(folder / "report" / "index.html", shot, budget_ms=5000)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000


# -- the replay page's behaviour, measured in the browser ---------------------------------------

HARNESS = """<!DOCTYPE html><html><body><pre id="out">pending</pre>
<iframe id="f" src="{src}" style="width:{w}px;height:{h}px;border:0"></iframe>
<script>
const f = document.getElementById("f");
f.addEventListener("load", () => {{
  const w = f.contentWindow, d = f.contentDocument;
  const out = {{}};
  const probe = {probe};
  probe(w, d, out, () => {{ document.getElementById("out").textContent = JSON.stringify(out); }});
}});
</script></body></html>"""


def measure(browser: Browser, page: Path, fragment: str, size: tuple[int, int], probe: str,
            budget: int = 20000) -> dict[str, object]:
    """Opens ``page#fragment`` in an iframe of ``size`` and returns what the JavaScript
    ``probe(window, document, out, done)`` put in ``out`` before calling ``done``."""
    harness = page.parent / "harness.html"
    harness.write_text(HARNESS.format(src=page.name + "#" + fragment, w=size[0], h=size[1],
                                      probe=probe))
    try:
        dom = browser.dom(harness, budget_ms=budget)
    finally:
        harness.unlink()
    text = dom.split('<pre id="out">', 1)[1].split("</pre>", 1)[0]
    assert text != "pending", "the probe did not finish"
    result = json.loads(html.unescape(text))
    assert isinstance(result, dict)
    return result


def replay_page(folder: Path, *, faulted: bool) -> tuple[Path, dict[str, object]]:
    """A match page of the evil bot (``faulted``) or of two good bots, and its record."""
    for record_path in sorted((folder / "games").glob("*.json.gz")):
        record = dict(read_record(record_path))
        if ("evil" in record["players"]) == faulted:
            return folder / "report" / "games" / f"{record['id']}.html", record
    raise AssertionError("no such match")


LAYOUT = """(w, d, out, done) => {
  const box = (sel) => d.querySelector(sel).getBoundingClientRect();
  out.overflow = d.documentElement.scrollWidth - d.documentElement.clientWidth;
  const clipped = [];
  d.querySelectorAll("#board td, #log li, .seat .pts, .over td").forEach((e) => {
    const r = e.getBoundingClientRect();
    if (r.right > d.documentElement.clientWidth + 0.5 || r.left < -0.5) clipped.push(e.textContent);
  });
  out.clipped = clipped;
  const side = box("aside"), covered = [];
  d.querySelectorAll(".seat .card, .seat .pts, .center .card").forEach((e) => {
    const r = e.getBoundingClientRect();
    if (!(r.right <= side.left || r.left >= side.right || r.bottom <= side.top
          || r.top >= side.bottom)) covered.push(e.title || e.textContent);
  });
  out.covered = covered;
  const a = box(".action"), o = d.querySelector(".over") && box(".over");
  out.over = !!o;
  out.covers = !!o && !(o.top >= a.bottom || o.bottom <= a.top
                        || o.left >= a.right || o.right <= a.left);
  out.ten = Array.from(d.querySelectorAll(".card .r, .mini"))
    .some((e) => e.textContent.includes("10"));
  done();
}"""


@pytest.mark.parametrize("size", [(1000, 700), (1100, 700), (390, 844)])
def test_the_replay_page_fits_and_the_hand_over_box_covers_nothing(
        folder: Path, browser: Browser, size: tuple[int, int]) -> None:
    page, record = replay_page(folder, faulted=False)
    last = sum(1 + len(h["turns"]) for h in record["hands"]) - 1
    got = measure(browser, page, f"step={last}&view=all", size, LAYOUT)
    assert got["overflow"] == 0, got
    assert got["clipped"] == [] and got["covered"] == [], got
    assert got["over"] is True and got["covers"] is False, got
    assert got["ten"] is False, got


@pytest.mark.parametrize("players", [3, 4])
def test_the_scores_lie_over_no_seat_at_1000_and_1100_px(tmp_path: Path, browser: Browser,
                                                          players: int) -> None:
    bots = [f"{PY} {ROOT}/bots/random_bot.py --seed {k}" for k in range(players)]
    done = subprocess.run([*CLI, "play", *bots, "--seed", "5", "--target", "100", "-q",
                           "--sandbox", "none", "--record", str(tmp_path / "g.json")],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    done = subprocess.run([*CLI, "replay", str(tmp_path / "g.json"), "--html",
                           str(tmp_path / "g.html")], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    for width in (1000, 1100):
        for step in (0, 1):  # every seat holds its whole hand
            got = measure(browser, tmp_path / "g.html", f"step={step}&view=all", (width, 700),
                          LAYOUT)
            assert got["overflow"] == 0 and got["clipped"] == [], (width, step, got)
            assert got["covered"] == [], (width, step, got)


AUTOPLAY = """(w, d, out, done) => {
  out.before = d.getElementById("where").textContent;
  d.getElementById("speed").value = "200";
  d.getElementById("play").click();
  out.label = d.getElementById("play").textContent;
  w.setTimeout(() => { out.after = d.getElementById("where").textContent; done(); }, 1100);
}"""


def test_autoplay_moves_on_by_itself(folder: Path, browser: Browser) -> None:
    page, _ = replay_page(folder, faulted=False)
    got = measure(browser, page, "step=0&view=all", (1000, 700), AUTOPLAY)
    assert "turn 0/" in str(got["before"]) and "pause" in str(got["label"])
    turn = int(str(got["after"]).split("turn ")[1].split("/")[0])
    assert turn >= 3, got


SPOILERS = """(w, d, out, done) => {
  out.turns = d.querySelectorAll("#log li").length;
  out.warning = d.getElementById("board").textContent.includes("\\u26a0");
  out.faulted = d.querySelectorAll(".badge.faulted, .badge.fb").length;
  out.text = d.getElementById("felt").textContent;
  done();
}"""


def test_a_seats_view_shows_no_later_turn_and_no_fault_before_it_happens(
        folder: Path, browser: Browser) -> None:
    page, record = replay_page(folder, faulted=True)
    seat = record["players"].index("evil")
    fault_turn = next(t for t, turn in enumerate(record["hands"][0]["turns"], 1)
                      if turn["by"] == "fallback")
    early = measure(browser, page, f"step=1&view={seat}", (1000, 700), SPOILERS)
    assert early["turns"] == 1 and early["warning"] is False and early["faulted"] == 0, early
    everything = measure(browser, page, "step=1&view=all", (1000, 700), SPOILERS)
    assert everything["turns"] == len(record["hands"][0]["turns"])
    reached = measure(browser, page, f"step={fault_turn}&view={seat}", (1000, 700), SPOILERS)
    assert reached["turns"] == fault_turn and reached["warning"] is True, reached
    assert "faulted (garbled" in str(reached["text"])


def test_a_move_shows_its_time_and_the_bots_comments(folder: Path, browser: Browser) -> None:
    page, record = replay_page(folder, faulted=True)
    seat = record["players"].index("evil")
    turns = record["hands"][0]["turns"]
    t = next(t for t, turn in enumerate(turns, 1) if turn["seat"] == seat and turn.get("info"))
    got = measure(browser, page, f"step={t}&view=all", (1000, 700), STEP)
    assert "<b>thinking</b> & more" in str(got["action"]), got
    assert "info" not in str(got["action"]).replace("<b>thinking</b>", ""), got
    assert " ms" in str(got["action"]) and " ms" in str(got["log"]), got
    assert "<b>thinking</b> & more" in str(got["log"]), got


STEPS = """(w, d, out, done) => { out.steps = w.ctSteps; done(); }"""


@pytest.mark.parametrize("faulted", [False, True])
def test_the_script_restores_every_step_the_page_left_out(
        folder: Path, browser: Browser, faulted: bool) -> None:
    page, record = replay_page(folder, faulted=faulted)
    got = measure(browser, page, "step=0&view=all", (1000, 700), STEPS)
    assert got["steps"] == json.loads(json.dumps(match_steps(read_record(
        folder / "games" / f"{record['id']}.json.gz"))))


def test_compact_steps_leave_out_only_the_derived_cards(folder: Path) -> None:
    record = read_record(next((folder / "games").glob("*.json.gz")))
    full = match_steps(record)
    compact = match_steps(record, compact=True)
    assert compact == compact_steps(full)
    assert all(("hands" in s) == (s["turn"] == 0) for s in compact)


# -- a run stopped before its end; every match's page from disk ------------------------------------


@pytest.fixture(scope="module")
def interrupted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A tournament stopped with Ctrl-C (SIGINT) after a few matches, and its resume command."""
    base = tmp_path_factory.mktemp("interrupted")
    tournament_yaml(base, {"random": f"{PY} {ROOT}/bots/random_bot.py",
                           "greedy": f"{PY} {ROOT}/bots/greedy_bot.py",
                           "random-b": f"{PY} {ROOT}/bots/random_bot.py --seed 3"},
                    name="cut-short", players=2, rounds=8, target=1000, sandbox="none")
    out = base / "out"
    proc = subprocess.Popen([*CLI, "tournament", "t.yaml", "-o", "out"], cwd=base,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not ((out / "report" / "data.js").is_file() and (out / "results.jsonl").is_file()
               and (out / "results.jsonl").read_text().count("\n") >= 3):
        assert proc.poll() is None and time.monotonic() < deadline, "no progress"
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    resume = stderr.split("resume with: ", 1)[1].split("\n", 1)[0]
    return out, resume


RELOADS = """(w, d, out, done) => {
  window.loads = (window.loads || 0) + 1;
  out.loads = window.loads;
  out.sub = d.getElementById("sub").textContent;
  out.halted = (d.querySelector("header .halted") || {textContent: ""}).textContent;
  out.stopped = d.getElementById("stopped").textContent;
  out.headline = d.getElementById("headline").textContent;
  if (window.loads > 1) done();
  else setTimeout(() => { if (window.loads === 1) done(); }, 33000);  // past the 30 s reload
}"""


def test_an_interrupted_run_says_so_and_how_to_resume_and_stops_reloading(
        interrupted: tuple[Path, str], browser: Browser) -> None:
    out, resume = interrupted
    said = data(out)
    assert said["final"] is False and said["halted"]["why"] == "interrupted"  # type: ignore[index]
    assert said["halted"]["resume"] == resume  # type: ignore[index]
    assert "tournament t.yaml" in resume
    got = measure(browser, out / "report" / "index.html", "", (1000, 700), RELOADS, 40000)
    assert got["loads"] == 1, got  # still the same page after 33 s: no reload
    assert "interrupted at " in str(got["sub"]) and "not reloading" in str(got["sub"]), got
    assert "reloads every 30 s" not in str(got["sub"])
    assert str(got["halted"]).startswith("The run was interrupted (") and resume in str(
        got["halted"]), got
    assert "the run is not over" not in str(got["headline"]), got
    # the control: the same page of a run still going reloads itself every 30 s
    live = out.parent / "live"
    shutil.copytree(out, live)
    page = data(live)
    del page["halted"]
    (live / "report" / "data.js").write_text(f"window.CT_REPORT = {json.dumps(page)};\n")
    beat = {"at": time.time(), "every": 5, "dead_after": 600}  # its heartbeat fresh (alive.js)
    (live / "report" / "alive.js").write_text(f"window.CT_ALIVE = {json.dumps(beat)};\n")
    again = measure(browser, live / "report" / "index.html", "", (1000, 700), RELOADS, 40000)
    assert again["loads"] == 2 and "reloads every 30 s" in str(again["sub"]), again


@pytest.mark.slow
def test_a_resumed_run_is_live_then_final_again(interrupted: tuple[Path, str],
                                                 tmp_path: Path) -> None:
    out, resume = interrupted
    copy = tmp_path / "out"
    shutil.copytree(out, copy)
    args = resume.split()[2:]  # ct-referee tournament CONFIG ...
    done = subprocess.run([*CLI, "tournament", *args, "-o", str(copy)], cwd=out.parent,
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    assert data(copy)["final"] is True and "halted" not in data(copy)


def contest(folder: Path, tmp_path: Path, matches: int, *, logs: bool = False) -> Path:
    """A copy of ``folder`` (its report left out) whose journal holds ``matches`` matches in
    whole sets (a match shows once its set has ended), its matches' records repeated under
    :func:`kth`'s ids; with ``logs``, each match's bots' stderr too (linked from faults)."""
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy, ignore=shutil.ignore_patterns("report"))
    lines = [json.loads(x) for x in (copy / "results.jsonl").read_text().splitlines()]
    records = {x["id"]: dict(read_record(copy / x["record"])) for x in lines}
    journal = []
    for k in range(matches):
        line = dict(lines[k % len(lines)])
        record = dict(records[line["id"]])
        was = line["id"]
        line["id"] = record["id"] = kth(k)
        if logs and not (copy / "logs" / line["id"]).exists():
            shutil.copytree(copy / "logs" / was, copy / "logs" / line["id"])
        line["record"] = f"games/{line['id']}.json.gz"
        write_record(record, copy / line["record"])  # type: ignore[arg-type]
        journal.append(json.dumps(line) + "\n")
    (copy / "results.jsonl").write_text("".join(journal))
    return copy


def test_every_match_of_a_300_match_contest_has_its_page_from_disk(
        folder: Path, tmp_path: Path, browser: Browser) -> None:
    """Past the 200 matches that used to have pages: each match of the list links to its page,
    opened from the file system."""
    copy = contest(folder, tmp_path, 300, logs=True)
    done = subprocess.run([*CLI, "report", str(copy)], capture_output=True, text=True,
                          timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    assert data(copy)["pages"] == "all"
    assert len(list((copy / "report" / "games").glob("*.html"))) == 300
    index = copy / "report" / "index.html"
    links = parse(browser.dom(index, budget_ms=10000))
    games = {t.split("#")[0] for t in links.targets if t.startswith("games/")}
    assert len(games) >= 50 and all(g.endswith(".html") for g in games), games
    assert_links_resolve(index, links)


@pytest.mark.slow  # 14 s: the 300-match contest above stays in the everyday lane
def test_every_match_of_a_1200_match_contest_has_its_replay_from_disk_and_served(
        folder: Path, tmp_path: Path, browser: Browser) -> None:
    """Past the 999 matches that get a page of their own: each match of the list links to the
    one replay page (``replay.html#id=...``), which draws it from its data in
    ``replays/<id>.js``, opened from the file system; ``--serve`` draws one whose data is
    missing."""
    copy = contest(folder, tmp_path, 1200)
    done = subprocess.run([*CLI, "report", str(copy)], capture_output=True, text=True,
                          timeout=900, check=False)
    assert done.returncode == 0, done.stderr
    assert data(copy)["pages"] != "all"
    replays = sorted((copy / "report" / "replays").glob("*.js"))
    assert len(replays) == 1200
    size = sum(p.stat().st_size for p in replays) / 1200
    pages = sorted((copy / "report" / "games").glob("*.html"))  # the fault examples' alone
    assert 0 < len(pages) < 20 and size < sum(p.stat().st_size for p in pages) / len(pages) / 3
    index = copy / "report" / "index.html"
    links = parse(browser.dom(index, budget_ms=10000))
    shared = [t for t in links.targets if t.startswith("replay.html#id=")]
    assert len(shared) >= 50, links.targets
    for target in (shared[0], f"replay.html#id={kth(1150)}&hand=1&turn=3"):
        match_id = target.split("id=", 1)[1].split("&", 1)[0]
        got = measure(browser, copy / "report" / "replay.html", target.split("#", 1)[1],
                      (1000, 700), SHARED)
        record = dict(read_record(copy / "games" / f"{match_id}.json.gz"))
        assert got["steps"] == len(match_steps(record))
        assert str(got["result"]).startswith("Result: ") and match_id in str(got["title"])
        if "turn=" in target:
            assert "hand 1/" in str(got["where"]) and "turn 3/" in str(got["where"]), got
    missing = measure(browser, copy / "report" / "replay.html", "id=r9999-g001-s01",
                      (1000, 700), SHARED)
    assert missing["steps"] == 0 and "No replay of r9999-g001-s01" in str(missing["result"])
    # served: a match whose data is not on disk (as while its run goes) is drawn on demand
    with report_server(copy) as (_, address):
        client = Client(address)
        (copy / "report" / "replays" / "r7-g001-s01.js").unlink()
        assert client.read("/report/replays/r7-g001-s01.js").startswith(
            b'ctReplay("r7-g001-s01", "')
        dom = browser.dom(f"{client.base}/report/replay.html#id=r7-g001-s01", budget_ms=5000)
        assert 'class="seat' in dom and "Result: " in dom, dom[-2000:]
    assert not (copy / "report" / "replays" / "r7-g001-s01.js").exists()  # serving writes none


SHARED = """(w, d, out, done) => { w.setTimeout(() => {
  out.steps = (w.ctSteps || []).length;
  out.result = d.getElementById("result").textContent;
  out.title = d.title;
  out.where = (d.getElementById("where") || {textContent: ""}).textContent;
  done();
}, 2000); }"""


SIZES = """(w, d, out, done) => { w.setTimeout(() => {
  const vw = d.documentElement.clientWidth;
  out.overflow = d.documentElement.scrollWidth - vw;
  let small = 99, where = "";
  const walk = d.createTreeWalker(d.body, 4);  // text nodes
  while (walk.nextNode()) {
    const n = walk.currentNode, e = n.parentElement;
    if (!n.textContent.trim() || !e) continue;
    const r = e.getBoundingClientRect();
    if (!r.width || !r.height) continue;  // not shown (a closed details, a hidden section)
    let size = parseFloat(w.getComputedStyle(e).fontSize);
    const svg = e.closest("svg");
    if (svg) size *= svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
    if (size < small) { small = size; where = n.textContent.slice(0, 40); }
  }
  out.small = Math.round(small * 10) / 10;
  out.where = where;
  const cross = d.getElementById("cross");
  out.cross = cross.getBoundingClientRect().right <= vw + 0.5;
  out.crossCut = cross.scrollWidth > cross.clientWidth + 0.5
    && w.getComputedStyle(cross).overflowX !== "auto";
  out.chart = !!d.querySelector("svg.chart");
  done();
}, 800); }"""


@pytest.fixture(scope="module")
def thousand(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("thousand") / "out"
    large_ladder(out, 1000, 1500)
    done = subprocess.run([*CLI, "report", str(out)], capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    return out


@pytest.mark.parametrize("width", [390, 1000, 1600])
@pytest.mark.parametrize("which", ["four", pytest.param("thousand", marks=pytest.mark.deep)])
def test_the_page_at_every_width_cuts_nothing_and_no_text_is_under_11_px(
        request: pytest.FixtureRequest, browser: Browser, width: int, which: str) -> None:
    """A phone (390 px), a laptop, a wide screen; 4 entrants (the finished tournament) and
    1,000 (a ladder): nothing wider than the window but inside a box of its own that scrolls
    (the crosstable), and no text under 11 px (the chart's labels were about 6 at 390)."""
    out = request.getfixturevalue("folder" if which == "four" else "thousand")
    got = measure(browser, out / "report" / "index.html", "", (width, 800), SIZES)
    assert got["overflow"] == 0, got
    assert got["cross"] is True and got["crossCut"] is False, got
    assert got["small"] >= 11, got
    assert got["chart"] is True, got
