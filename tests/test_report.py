"""The tournament report (``report/index.html``): drawn from a real tournament's folder, opened
in headless Chromium (the DOM after scripts ran, and a screenshot), every link followed."""

from __future__ import annotations

import html
import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from referee.records.record import read_record
from referee.tournament.ratings import RatingConfig
from referee.web.folder import Folder, Match
from referee.web.replay_html import compact_steps, match_steps
from referee.web.report import read_folder
from referee.web.report_page import crosstable, index_html

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
        sys.stderr.write("<script>alert('stderr')</script>\\n")
        sys.stderr.flush()
        if n == 4:
            print("<img src=x onerror=alert(1)>", flush=True)
        else:
            print("info <b>thinking</b> & more", flush=True)
            print(answer(line), flush=True)
    elif line.startswith("quit"):
        break
"""


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished tournament: three entrants, two seats, one of them faulting with HTML in its
    answer and its stderr."""
    base = tmp_path_factory.mktemp("report")
    (base / "evil.py").write_text(EVIL_BOT)
    (base / "t.yaml").write_text(f"""\
name: report-test
entrants:
  - {{name: random, command: {PY} {ROOT}/bots/random_bot.py}}
  - {{name: greedy, command: {PY} {ROOT}/bots/greedy_bot.py}}
  - {{name: evil, command: {PY} evil.py}}
players: 2
target: 100
sandbox: none
""")
    done = subprocess.run([*CLI, "tournament", "t.yaml", "-o", "out"], cwd=base,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    done = subprocess.run([*CLI, "report", "out"], cwd=base, capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return base / "out"


# -- the page's content, without a browser ------------------------------------------------------


def test_the_report_has_every_match_and_escapes_bot_text(folder: Path) -> None:
    page = (folder / "report" / "index.html").read_text()
    ids = [json.loads(line)["id"] for line in (folder / "results.jsonl").read_text().splitlines()]
    assert len(ids) == 6
    for match_id in ids:
        assert f'href="games/{match_id}.html"' in page
        assert (folder / "report" / "games" / f"{match_id}.html").is_file()
    assert "<img src=x" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page
    blobs = []
    for match_id in ids:
        replay = (folder / "report" / "games" / f"{match_id}.html").read_text()
        assert '<script src="../viewer.js">' in replay
        blobs.append(replay.split('id="ct-data">', 1)[1].split("</script>", 1)[0])
        assert 'href="../index.html"' in replay
        assert len(replay) < 200_000
    assert sum("thinking" in blob for blob in blobs) == 4  # the matches of the evil bot
    assert not any("</" in blob or "<!--" in blob for blob in blobs)


def test_a_match_page_does_not_copy_the_viewer(folder: Path) -> None:
    viewer = (folder / "report" / "viewer.js").read_text()
    some = next((folder / "report" / "games").glob("*.html")).read_text()
    assert viewer[:200] not in some


def test_report_command_refuses_a_folder_that_is_not_a_tournament(tmp_path: Path) -> None:
    (tmp_path / "x").mkdir()
    for target in (tmp_path / "x", tmp_path / "missing"):
        done = subprocess.run([*CLI, "report", str(target)], capture_output=True, text=True,
                              timeout=60, check=False)
        assert done.returncode == 2
        assert done.stderr.startswith("error: ") and done.stderr.count("\n") == 1
        assert "Traceback" not in done.stderr


def test_crosstable_is_points_per_hand_over_shared_matches() -> None:
    def match(i: int, players: tuple[str, ...], totals: tuple[int, ...]) -> Match:
        return Match(f"r1-g001-s0{i}", players, totals, (1, 2), 2, (), "r1-g001", (i, ""))

    folder = Folder("t", ["a", "b", "c"], RatingConfig(),
                    [match(1, ("a", "b"), (300, 100)), match(2, ("b", "a"), (200, 200))])
    cells = crosstable(folder)
    assert cells[("a", "b")] == (125.0, 75.0, 1, 2)
    assert cells[("b", "a")] == (75.0, 125.0, 1, 2)
    assert ("a", "c") not in cells
    page = index_html(folder)
    assert "+50.0" in page and "-50.0" in page


def test_every_text_from_a_results_line_is_escaped() -> None:
    evil = '<script>x</script>"'
    m = Match("m1", (evil, "b"), (10, 0), (1, 2), 1,
              ({"seat": 0, "hand": 1, "fault": evil, "detail": evil},), evil, (0, ""))
    page = index_html(Folder(evil, [evil, "b"], RatingConfig(), [m],
                             logs={"m1": {0: f"logs/m1/0-{evil}.stderr"}}))
    assert "<script>" not in page
    assert page.count("&lt;script&gt;") >= 5


def test_verdicts_and_the_stopping_reason_are_shown() -> None:
    m = Match("r1-g001-s01", ("a", "b"), (100, 50), (1, 2), 1, (), "r1-g001", (0, ""))
    standings = {"standings": [{"rank": 1, "name": "a"}, {"rank": 2, "name": "b"}],
                 "stopped": "settled",
                 "pairs": [{"upper": "a", "lower": "b", "verdict": "stronger", "diff": 12.5,
                            "low": 3.25, "high": None, "sets": 4}]}
    page = index_html(Folder("t", ["a", "b"], RatingConfig(), [m], standings=standings))
    assert "verdict vs next" in page
    assert "stronger <span class=\"muted\">12.5 [3.2, ∞] pts/hand, 4 sets</span>" in page
    assert "every adjacent pair has a verdict" in page


def test_read_folder_skips_broken_lines(folder: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    with (copy / "results.jsonl").open("a") as f:
        f.write('{"id": "x", "players": 3}\nnot json\n{"id": "half')
    assert len(read_folder(copy).matches) == 6


# -- in a real browser --------------------------------------------------------------------------


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    pytest.skip("chromium is not installed (.ci/run installs it): the report's browser "
                "tests need it")


@pytest.fixture(scope="module")
def profile() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="ct-chromium-") as path:
        yield Path(path)


def browse(profile: Path, page: Path, *options: str) -> str:
    """The DOM of ``page`` after its scripts ran, from headless Chromium (or what it wrote)."""
    done = subprocess.run(
        [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
         "--no-first-run", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", f"--user-data-dir={profile}", "--window-size=1000,700", *options,
         page.as_uri()], capture_output=True, text=True, timeout=180, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


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
        folder: Path, profile: Path) -> None:
    index = folder / "report" / "index.html"
    links = parse(browse(profile, index, "--dump-dom"))
    text = " ".join(links.text)
    for name in ("random", "greedy", "evil"):
        assert name in text
    assert "Standings" in text and "Crosstable" in text
    assert assert_links_resolve(index, links) > 6 * 3
    assert any(t.startswith("../logs/") for t in links.targets)
    games = [t for t in links.targets if t.startswith("games/")]
    assert len(set(games)) == 6
    replay = index.parent / games[0]
    dom = browse(profile, replay, "--dump-dom")
    shown = parse(dom)
    assert 'class="seat' in dom, "the replay's script did not draw the table"
    assert "../index.html" in shown.targets
    assert_links_resolve(replay, shown)


def test_the_report_screenshot(folder: Path, profile: Path, tmp_path: Path) -> None:
    shot = tmp_path / "report.png"
    browse(profile, folder / "report" / "index.html", f"--screenshot={shot}")
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


def measure(profile: Path, page: Path, fragment: str, size: tuple[int, int], probe: str
            ) -> dict[str, object]:
    """Opens ``page#fragment`` in an iframe of ``size`` and returns what the JavaScript
    ``probe(window, document, out, done)`` put in ``out`` before calling ``done``."""
    harness = page.parent / "harness.html"
    harness.write_text(HARNESS.format(src=page.name + "#" + fragment, w=size[0], h=size[1],
                                      probe=probe))
    try:
        dom = browse(profile, harness, "--dump-dom", "--allow-file-access-from-files",
                     "--virtual-time-budget=20000")
    finally:
        harness.unlink()
    text = dom.split('<pre id="out">', 1)[1].split("</pre>", 1)[0]
    assert text != "pending", "the probe did not finish"
    result = json.loads(html.unescape(text))
    assert isinstance(result, dict)
    return result


def replay_page(folder: Path, *, faulted: bool) -> tuple[Path, dict[str, object]]:
    """A match page of the evil bot (``faulted``) or of two good bots, and its record."""
    for record_path in sorted((folder / "games").glob("*.json")):
        record = json.loads(record_path.read_text())
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
  const a = box(".action"), o = d.querySelector(".over") && box(".over");
  out.over = !!o;
  out.covers = !!o && !(o.top >= a.bottom || o.bottom <= a.top
                        || o.left >= a.right || o.right <= a.left);
  out.ten = Array.from(d.querySelectorAll(".card .r, .mini"))
    .some((e) => e.textContent.includes("10"));
  done();
}"""


@pytest.mark.parametrize("size", [(1000, 700), (390, 844)])
def test_the_replay_page_fits_and_the_hand_over_box_covers_nothing(
        folder: Path, profile: Path, size: tuple[int, int]) -> None:
    page, record = replay_page(folder, faulted=False)
    last = sum(1 + len(h["turns"]) for h in record["hands"]) - 1
    got = measure(profile, page, f"step={last}&view=all", size, LAYOUT)
    assert got["overflow"] == 0, got
    assert got["clipped"] == [], got
    assert got["over"] is True and got["covers"] is False, got
    assert got["ten"] is False, got


AUTOPLAY = """(w, d, out, done) => {
  out.before = d.getElementById("where").textContent;
  d.getElementById("speed").value = "200";
  d.getElementById("play").click();
  out.label = d.getElementById("play").textContent;
  w.setTimeout(() => { out.after = d.getElementById("where").textContent; done(); }, 1100);
}"""


def test_autoplay_moves_on_by_itself(folder: Path, profile: Path) -> None:
    page, _ = replay_page(folder, faulted=False)
    got = measure(profile, page, "step=0&view=all", (1000, 700), AUTOPLAY)
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
        folder: Path, profile: Path) -> None:
    page, record = replay_page(folder, faulted=True)
    seat = record["players"].index("evil")
    fault_turn = next(t for t, turn in enumerate(record["hands"][0]["turns"], 1)
                      if turn["by"] == "fallback")
    early = measure(profile, page, f"step=1&view={seat}", (1000, 700), SPOILERS)
    assert early["turns"] == 1 and early["warning"] is False and early["faulted"] == 0, early
    everything = measure(profile, page, "step=1&view=all", (1000, 700), SPOILERS)
    assert everything["turns"] == len(record["hands"][0]["turns"])
    reached = measure(profile, page, f"step={fault_turn}&view={seat}", (1000, 700), SPOILERS)
    assert reached["turns"] == fault_turn and reached["warning"] is True, reached
    assert "faulted (garbled" in str(reached["text"])


COMMENTS = """(w, d, out, done) => {
  out.action = d.querySelector(".action").textContent;
  out.log = d.querySelector("#log li.now").textContent;
  done();
}"""


def test_a_move_shows_its_time_and_the_bots_comments(folder: Path, profile: Path) -> None:
    page, record = replay_page(folder, faulted=True)
    seat = record["players"].index("evil")
    turns = record["hands"][0]["turns"]
    t = next(t for t, turn in enumerate(turns, 1) if turn["seat"] == seat and turn.get("info"))
    got = measure(profile, page, f"step={t}&view=all", (1000, 700), COMMENTS)
    assert "<b>thinking</b> & more" in str(got["action"]), got
    assert "info" not in str(got["action"]).replace("<b>thinking</b>", ""), got
    assert " ms" in str(got["action"]) and " ms" in str(got["log"]), got
    assert "<b>thinking</b> & more" in str(got["log"]), got


STEPS = """(w, d, out, done) => { out.steps = w.ctSteps; done(); }"""


@pytest.mark.parametrize("faulted", [False, True])
def test_the_script_restores_every_step_the_page_left_out(
        folder: Path, profile: Path, faulted: bool) -> None:
    page, record = replay_page(folder, faulted=faulted)
    got = measure(profile, page, "step=0&view=all", (1000, 700), STEPS)
    assert got["steps"] == json.loads(json.dumps(match_steps(read_record(
        folder / "games" / f"{record['id']}.json"))))


def test_compact_steps_leave_out_only_the_derived_cards(folder: Path) -> None:
    record = read_record(next((folder / "games").glob("*.json")))
    full = match_steps(record)
    compact = match_steps(record, compact=True)
    assert compact == compact_steps(full)
    assert all(("hands" in s) == (s["turn"] == 0) for s in compact)
