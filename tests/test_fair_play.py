"""Fair play: deals no bot can predict, match ids that tell bots nothing, no two seatings of a
group at once, and bot text that cannot drive the organiser's terminal or break the HTML page."""

from __future__ import annotations

import json
import re
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from conftest import CLI, PY, ROOT, bot, tournament_yaml
from referee.cli import main
from referee.match.job import Done
from referee.match.play import Observer
from referee.records.record import read_record
from referee.runners.local import ThreadRunner
from referee.tournament.run import (
    SECRET,
    ConfigError,
    load_config,
    play_jobs,
    read_deal_secret,
    run,
)
from referee.tournament.schedule import schedule
from referee.web.replay_html import page_data

HOSTILE = " ".join(bot("hostile"))
HEX12 = re.compile(r"[0-9a-f]{12}")


def write_config(tmp_path: Path, entrants: list[tuple[str, str]], **extra: object) -> Path:
    return tournament_yaml(tmp_path, dict(entrants), name="t", players=2, target=100,
                           sandbox="none", **extra)


def deals(out: Path, match_id: str = "r1-g001-s01") -> list[dict[str, Any]]:
    """The deals of a tournament record: every hand without its turns and scores."""
    record = read_record(out / "games" / f"{match_id}.json.gz")
    return [{k: h[k] for k in ("dealer", "hands", "layout", "stock")} for h in record["hands"]]


@pytest.mark.process
def test_fresh_folders_deal_differently_and_a_resume_deals_the_same(tmp_path: Path) -> None:
    path = write_config(tmp_path, [("random", f"{PY} {ROOT}/bots/random_bot.py"),
                                   ("greedy", f"{PY} {ROOT}/bots/greedy_bot.py")])
    a, b = tmp_path / "a", tmp_path / "b"
    assert run(load_config(path, output=a)).finished
    assert run(load_config(path, output=b)).finished
    # The same file and seed in two fresh folders: two secrets, other deals.
    for out in (a, b):
        assert (out / SECRET).stat().st_mode & 0o777 == 0o600
        assert re.fullmatch(r"[0-9a-f]{64}\n", (out / SECRET).read_text())
    assert read_deal_secret(a / SECRET) != read_deal_secret(b / SECRET)
    assert deals(a) != deals(b)
    # Both seatings of the group play the same deals.
    assert deals(a)[0] == deals(a, "r1-g001-s02")[0]
    # A resume keeps the folder's secret: the match played again is dealt the same.
    before = read_record(a / "games" / "r1-g001-s02.json.gz")
    lines = (a / "results.jsonl").read_text().splitlines(keepends=True)
    (a / "results.jsonl").write_text("".join(x for x in lines if "r1-g001-s02" not in x))
    (a / "games" / "r1-g001-s02.json.gz").unlink()
    again = run(load_config(path, output=a))
    assert again.played == 1 and again.finished
    after = read_record(a / "games" / "r1-g001-s02.json.gz")
    assert after["hands"][0]["hands"] == before["hands"][0]["hands"]
    assert after["bot_id"] == before["bot_id"] and after["totals"] == before["totals"]
    # Another folder given the secret deals the same; a folder with another secret refuses it.
    c = tmp_path / "c"
    given = CliRunner().invoke(main, ["tournament", str(path), "-o", str(c),
                                      "--deal-secret", str(a / SECRET)])
    assert given.exit_code == 0, given.output
    assert (c / SECRET).read_text() == (a / SECRET).read_text()
    assert deals(c) == deals(a)
    with pytest.raises(ConfigError, match="another deal secret"):
        run(load_config(path, output=b), deal_secret=read_deal_secret(a / SECRET))
    # --fresh makes a new secret.
    old = (b / SECRET).read_text()
    assert CliRunner().invoke(main, ["tournament", str(path), "-o", str(b),
                                     "--fresh"]).exit_code == 0
    assert (b / SECRET).read_text() != old
    # A secret file that holds no secret is a one-line error.
    bad = tmp_path / "bad"
    bad.write_text("1234\n")
    result = CliRunner().invoke(main, ["tournament", str(path), "-o", str(tmp_path / "d"),
                                       "--deal-secret", str(bad)])
    assert result.exit_code == 2
    assert result.output == (f"error: deal secret {str(bad)!r}: expected at least 32 hex digits "
                             f"(128 bits), as in the {SECRET} file of a tournament folder\n")


def told_ids(log_dir: Path) -> set[str]:
    """The ids in the ``match`` lines that echo bots logged to stderr in ``log_dir``."""
    ids = set()
    for log in log_dir.rglob("*.stderr"):
        for line in log.read_text().splitlines():
            if line.startswith("got match "):
                ids.add(line.split()[3])
    return ids


@pytest.mark.process
def test_the_id_a_bot_is_told_reveals_nothing(tmp_path: Path) -> None:
    echo = f"{PY} {ROOT}/tests/bots/echo.py"
    path = write_config(tmp_path, [("e1", echo), ("e2", echo), ("e3", echo)], seed="zebra")
    first, second = tmp_path / "first", tmp_path / "second"
    for out in (first, second):
        assert run(load_config(path, output=out)).finished
    for out in (first, second):
        told: dict[str, set[str]] = {}
        for match_dir in (out / "logs").iterdir():
            told[match_dir.name] = told_ids(match_dir)
        assert len(told) == 6
        for match_id, ids in told.items():
            assert len(ids) == 1  # every seat of a match is told the same id
            bot_id = ids.pop()
            assert HEX12.fullmatch(bot_id), bot_id  # no round, group, seating or seed in it
            record = read_record(out / "games" / f"{match_id}.json.gz")
            assert record["id"] == match_id and record["bot_id"] == bot_id
            told[match_id] = {bot_id}
        assert len(set().union(*told.values())) == 6
    assert told_ids(first / "logs").isdisjoint(told_ids(second / "logs"))
    # play: an opaque id too, with or without --seed.
    for extra in ([], ["--seed", "5"]):
        logs = tmp_path / f"play{len(extra)}"
        done = subprocess.run([CLI, "play", echo, echo, "--sandbox", "none", "--target", "100",
                               "--logs", str(logs), "-q", *extra], capture_output=True,
                              text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        (bot_id,) = told_ids(logs)
        assert HEX12.fullmatch(bot_id), bot_id


class _FakeSpec:
    def __init__(self, index: int, group: int, seating: int) -> None:
        self.index, self.id = index, f"g{group}-s{seating}"
        self.deals_key = (1, group)


class _FakeJob:
    """Stands for a match: it notes which groups run beside it, and waits (a little) for a
    second match to start, so that two matches always overlap when they can."""

    def __init__(self, spec: _FakeSpec, state: dict[str, Any]) -> None:
        self.spec, self.state = spec, state

    def run(self, stop: threading.Event, observer: Observer, *, keep: bool = False) -> Done:
        state, key = self.state, self.spec.deals_key
        with state["lock"]:
            if key in state["active"]:
                state["clashes"].append(self.spec.id)
            state["active"].append(key)
            state["most"] = max(state["most"], len(state["active"]))
            state["lock"].notify_all()
            state["lock"].wait_for(lambda: len(state["active"]) >= 2, timeout=0.5)
        with state["lock"]:
            state["active"].remove(key)
        return Done({"faults": []})


@pytest.mark.heavy  # a second of waiting: a seating with no other to overlap waits its 0.5 s out
def test_no_two_seatings_of_a_group_play_at_once() -> None:
    plan = schedule(4, players=2, rounds=1, seatings="all", seed=1, secret=bytes(32))
    state: dict[str, Any] = {"lock": threading.Condition(), "active": [], "clashes": [],
                             "most": 0}
    jobs = [_FakeJob(_FakeSpec(s.index, s.group, s.seating), state) for s in plan]
    done: list[str] = []
    with ThreadRunner(2) as runner:  # fake matches: no bot
        play_jobs(runner, jobs, lambda job, record: done.append(job.spec.id),  # type: ignore[arg-type]
                  threading.Event())
    assert sorted(done) == sorted(j.spec.id for j in jobs)
    assert state["clashes"] == []
    assert state["most"] == 2  # still two at once: seatings of other groups


def script_json(page: str) -> Any:
    """The JSON of the page's data block: from its opening tag to the first ``</script>``."""
    head = '<script type="application/json" id="ct-data">'
    start = page.index(head) + len(head)
    return json.loads(page[start:page.index("</script>", start)])


@pytest.mark.process
def test_bot_text_cannot_drive_the_terminal_or_break_the_page(tmp_path: Path) -> None:
    greedy = f"{PY} {ROOT}/bots/greedy_bot.py"
    done = subprocess.run([CLI, "play", HOSTILE, greedy, "--seed", "3", "--sandbox", "none",
                           "--target", "100", "--record", "game.json", "-v"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout + done.stderr
    assert "garbled in hand 1: not a card: '\\x1b[2J" in done.stdout
    record = read_record(tmp_path / "game.json")
    infos = [i for h in record["hands"] for t in h["turns"] for i in t.get("info", [])]
    assert any("\x1b[2J" in i for i in infos) and any("<!--<script>" in i for i in infos)
    # The text replay.
    text = CliRunner().invoke(main, ["replay", str(tmp_path / "game.json")])
    assert text.exit_code == 0, text.output
    assert "\x1b" not in text.output
    assert "info: \\x1b[2J\\x1b[1;1Hfault: r1-g001-s01 greedy (seat 1) forfeits" in text.output
    assert "info: info" not in text.output
    # The HTML page: its data block is intact and holds the bot's text as it was.
    html_path = tmp_path / "game.html"
    page = CliRunner().invoke(main, ["replay", str(tmp_path / "game.json"), "--html",
                                     str(html_path)])
    assert page.exit_code == 0, page.output
    html = html_path.read_text()
    assert "<!--" not in html
    data = script_json(html)
    expected = json.loads(json.dumps(page_data(record)))
    assert {k: v for k, v in data.items() if k not in ("view", "start")} == expected
    assert html.count("<script") == 2 and html.count("</script>") == 2
    # The conformance checker: the ready name, garbage answers and stderr tails.
    check = subprocess.run([CLI, "check", HOSTILE, "--sandbox", "none"], capture_output=True,
                           text=True, timeout=120)
    assert check.returncode == 1
    assert "\x1b" not in check.stdout + check.stderr
    assert "received: \\x1b[2J\\x1b[1;1H[red]forfeits[/red]" in check.stdout
    # A tournament's plain lines.
    path = write_config(tmp_path, [("hostile", HOSTILE), ("greedy", greedy)])
    result = CliRunner().invoke(main, ["tournament", str(path), "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.output
    assert "fault: r1-g001-s01 hostile (seat 0) garbled in hand 1: not a card: '\\x1b[2J" \
        in result.output


def test_the_live_view_shows_fault_text_escaped(tmp_path: Path) -> None:
    import io

    from rich.console import Console

    from referee.cli.tournament import LiveReporter

    spec = schedule(2, players=2, rounds=1, seatings="all", seed=1, secret=bytes(32))[0]
    console = Console(file=io.StringIO(), force_terminal=True, width=200, color_system=None)
    reporter = LiveReporter(console)
    reporter.fault(spec, "b\x1b[2Jot", {"seat": 0, "hand": 1, "fault": "garbled",
                                       "detail": "[red]x[/] \x1b[1;1H\u202e"})
    shown = console.file.getvalue()  # type: ignore[attr-defined]
    assert "b\\x1b[2Jot" in shown and "[red]x[/] \\x1b[1;1H\\u202e" in shown
    assert "\x1b[2J" not in shown and "\u202e" not in shown
