"""A five-entrant event where one entrant fails its pre-flight, as an organiser sees it: the
left-out entrant is one row of its own with its reason, in the terminal's final standings and
on the report page, and nowhere else on the page (not in the matches, whose seat of it the
referee's fallback played, nor the crosstable, the audit or the faults). The real CLI, real
bots, the page drawn by headless Chromium."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from browser import Browser
from test_report import assert_links_resolve, parse

from conftest import CLI, PY, ROOT

pytestmark = [pytest.mark.process, pytest.mark.slow]

BROKEN = "import sys\nsys.stderr.write('oops: cannot load my model\\n')\nsys.exit(3)\n"


@pytest.fixture(scope="module")
def event(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The folder and the terminal's output of a finished five-entrant round robin."""
    base = tmp_path_factory.mktemp("left-out")
    (base / "broken.py").write_text(BROKEN)
    (base / "t.yaml").write_text(f"""\
name: five
entrants:
  - {{name: random, command: {PY} {ROOT}/bots/random_bot.py}}
  - {{name: greedy, command: {PY} {ROOT}/bots/greedy_bot.py}}
  - {{name: broken, command: {PY} broken.py}}
  - {{name: random-b, command: {PY} {ROOT}/bots/random_bot.py --seed 3}}
  - {{name: greedy-b, command: {PY} {ROOT}/bots/greedy_bot.py}}
players: 2
target: 100
concurrency: 2
sandbox: none
""")
    done = subprocess.run([CLI, "tournament", "t.yaml", "-o", "out"], cwd=base,
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return base / "out", done.stdout


def test_the_terminal_gives_it_one_row_of_its_own(event: tuple[Path, str]) -> None:
    out, stdout = event
    table = stdout.split("final standings, ", 1)[1].split("\norder: ", 1)[0]
    rows = [line.split() for line in table.splitlines() if line[:4].strip().isdigit()]
    assert [r[0] for r in rows] == ["1", "2", "3", "4"], table
    assert "broken" not in {r[1] for r in rows}, table
    lines = " ".join(table.split("\n\n")[-1].split())  # under the rows, wrapped
    assert lines.startswith("5. broken: left out, did not start in the pre-flight: "), table
    assert "it played no match (the referee's fallback played its seats)" in lines
    assert f"(its stderr: {out / 'preflight' / 'broken.stderr'})" in lines
    assert rows[-1][-1] != "%" and not rows[-1][-1].endswith("%")  # no P>next against it
    assert sum("fault: " in line and " broken " in line for line in stdout.splitlines()) == 1


def test_the_page_names_it_once_with_why(event: tuple[Path, str], browser: Browser) -> None:
    out, _ = event
    index = out / "report" / "index.html"
    dom = browser.dom(index, budget_ms=10000)
    links = parse(dom)
    text = " ".join(" ".join(links.text).split())
    assert text.count("broken") == 1, text  # its row: not the matches, crosstable, audit, faults
    assert ("5 broken left out did not start in the pre-flight: startup: exited with code 3 "
            "before ready; it played no match (the referee's fallback played its seats) · its "
            "stderr") in text
    assert "../preflight/broken.stderr" in links.targets
    lines = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert len(lines) == 20 and sum("broken" in x["players"] for x in lines) == 8
    matches = text.split("players (points, rank) hands faults", 1)[1]
    assert matches.count("fallback ") == 8  # its seat in each of its matches, said as such
    assert "startup" not in matches  # no fault of play listed for a seat that never ran
    assert assert_links_resolve(index, links) > 20
