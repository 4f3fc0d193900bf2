"""A report page whose run was killed (SIGKILL: no word from the run, no ``mark_stopped``) says
it stopped once the run's sign of life (``report/alive.js``, rewritten every few seconds) has
aged past its bound, and stops reloading; while the run lives it says "provisional" and reloads.
A real tournament through the CLI, killed for real, the page drawn by headless Chromium from the
disk and from ``--serve``."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest
from browser import Browser
from test_report import parse

from conftest import BOTS, CLI, PY, ROOT

pytestmark = [pytest.mark.process, pytest.mark.slow]

STALLER = f"""\
import os, sys
sys.path.insert(0, {str(BOTS)!r})
from legal import answer
played = os.path.getsize("played") if os.path.exists("played") else 0
with open("played", "a") as f:
    f.write("x")
for line in sys.stdin:
    if line.startswith("chinese-ten"):
        print("ready staller", flush=True)
    elif line.startswith(("go ", "pick ")):
        if played >= 2:  # from its third match on: silent until the referee is gone
            sys.stdin.read()
            break
        print(answer(line), flush=True)
    elif line.startswith("quit"):
        break
"""


def alive(out: Path) -> dict[str, float] | None:
    text = (out / "report" / "alive.js").read_text()
    value = json.loads(text[len("window.CT_ALIVE = "):text.index(";")])
    assert value is None or isinstance(value, dict)
    return value


def matches_shown(out: Path) -> int:
    try:
        text = (out / "report" / "data.js").read_text()
    except FileNotFoundError:
        return 0
    return int(json.loads(text[text.index("{"):text.rindex("}") + 1])["matches"])


def test_a_killed_run_is_told_stopped_by_its_page(tmp_path: Path, browser: Browser) -> None:
    (tmp_path / "staller.py").write_text(STALLER)
    (tmp_path / "t.yaml").write_text(f"""\
name: killed
entrants:
  - {{name: staller, command: {PY} staller.py}}
  - {{name: greedy, command: {PY} {ROOT}/bots/greedy_bot.py}}
players: 2
rounds: 2
target: 50
sandbox: none
preflight: off
limits: {{move_ms: 600000}}
""")
    out = tmp_path / "out"
    with open(tmp_path / "stdout", "wb") as log:
        run = subprocess.Popen([CLI, "tournament", "t.yaml", "-o", "out"], cwd=tmp_path,
                               stdout=log, stderr=subprocess.STDOUT)
    try:
        for _ in range(1200):  # the first set (two matches) is on the page; the third hangs
            if matches_shown(out) >= 2 or run.poll() is not None:
                break
            time.sleep(0.1)
        assert run.poll() is None, (tmp_path / "stdout").read_text()
        assert matches_shown(out) == 2
        index = out / "report" / "index.html"
        live = browser.dom(index, budget_ms=3000)
        assert 'data-reloads="30"' in live
        text = " ".join(parse(live).text)
        assert "provisional: it reloads every 30 s" in text and "no sign of life" not in text
    finally:
        run.send_signal(signal.SIGKILL)
        run.wait(timeout=60)
    beat = alive(out)
    assert beat is not None and beat["dead_after"] == 30
    while time.time() <= beat["at"] + beat["dead_after"] + 1:  # the sign of life ages
        time.sleep(1)
    assert alive(out) == beat  # nothing beats for a killed run
    dead = browser.dom(out / "report" / "index.html", budget_ms=3000)
    page = parse(dead)
    text = " ".join(page.text)
    assert "data-reloads" not in dead and "dead" in page.ids
    assert "stopped (no sign of life since " in text and "; not reloading" in text
    assert "(provisional: the run stopped before its end)" in text
    assert "The run stopped without a word" in text and "2 matches;" in text
    # --serve tells the page its own clock (the browser's may be another machine's)
    server = subprocess.Popen([CLI, "report", str(out), "--serve", "--port", "0"],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        assert server.stdout.readline().startswith("report: ")
        url = server.stdout.readline().split(" at ", 1)[1].split(" ", 1)[0]
        served = browser.dom(url, budget_ms=3000)
        assert "data-reloads" not in served and "stopped (no sign of life since " in served
    finally:
        server.terminate()
        server.wait(timeout=30)

