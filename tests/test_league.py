"""Real leagues: the CLI over a submissions folder of real bots, in the sandbox. A submission
added while it plays, a version replaced, broken submissions refused (one line each, on the page
too), hostile folders contained, and a restart after SIGKILL that loses no finished match."""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from served import Client

from conftest import EXAMPLES, PY, live_processes

pytestmark = [pytest.mark.process, pytest.mark.slow]

CLI = [PY, "-c", "from referee.cli import main; main()"]
WAIT_S = 240.0
"""The most a condition is waited for (a loaded machine is slow; nothing here is timed)."""


def submit(subs: Path, author: str, bot: str = "random_bot.py") -> Path:
    folder = subs / author
    folder.mkdir()
    shutil.copy(EXAMPLES / bot, folder / "bot.py")
    return folder


def config(tmp_path: Path, **extra: Any) -> Path:
    subs = tmp_path / "subs"
    subs.mkdir(exist_ok=True)
    path = tmp_path / "league.yaml"
    keys = {"name": "class", "submissions": "subs", "target": 100, "concurrency": 2,
            "placement": 2, "poll_s": 0.2, "settle_s": 0.5, "output": "out"} | extra
    path.write_text("".join(f"{k}: {json.dumps(v)}\n" for k, v in keys.items()))
    return path


class Running:
    """``ct-referee league`` in a process group of its own, its output in a file."""

    def __init__(self, path: Path, *args: str) -> None:
        self.out = path.parent / "out"
        self.log = open(path.parent / "league.log", "a")  # noqa: SIM115 - closed by stop
        self.proc = subprocess.Popen([*CLI, "league", str(path), *args], stdout=self.log,
                                     stderr=subprocess.STDOUT, start_new_session=True)

    def text(self) -> str:
        return (self.out.parent / "league.log").read_text()

    def results(self) -> list[dict[str, Any]]:
        path = self.out / "results.jsonl"
        if not path.exists():
            return []
        return [json.loads(x) for x in path.read_text().splitlines() if x.endswith("}")]

    def events(self) -> list[dict[str, Any]]:
        path = self.out / "league.jsonl"
        if not path.exists():
            return []
        return [json.loads(x) for x in path.read_text().splitlines() if x.endswith("}")]

    def wait_for(self, what: Callable[[], bool], why: str) -> None:
        deadline = time.monotonic() + WAIT_S
        while not what():
            assert self.proc.poll() is None, f"the league ended while waiting for {why}: " \
                f"{(self.out.parent / 'league.log').read_text()[-2000:]}"
            assert time.monotonic() < deadline, f"no {why} in {WAIT_S} s"
            time.sleep(0.1)

    def wait_for_more(self, matches: int, why: str) -> None:
        """Waits until ``matches`` more matches than now are saved."""
        count = len(self.results())
        self.wait_for(lambda: len(self.results()) >= count + matches, why)

    def played(self, name: str) -> bool:
        return any(name in r["players"] for r in self.results())

    def event(self, kind: str, **match: str) -> dict[str, Any] | None:
        return next((e for e in self.events() if e["event"] == kind
                     and all(e.get(k) == v for k, v in match.items())), None)

    def stop(self) -> str:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        self.proc.wait(timeout=120)
        self.log.close()
        return (self.out.parent / "league.log").read_text()

    def kill(self) -> None:
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=30)
        self.log.close()
        deadline = time.monotonic() + 30
        while live_processes(group=self.proc.pid) and time.monotonic() < deadline:
            time.sleep(0.05)


def test_submissions_join_update_and_are_refused_while_the_league_plays(tmp_path: Path) -> None:
    path = config(tmp_path, keep_logs=3)
    subs = tmp_path / "subs"
    submit(subs, "alice")
    submit(subs, "bob", "greedy_bot.py")
    league = Running(path, "--serve", "0")
    try:
        league.wait_for(lambda: len(league.results()) >= 4, "4 matches")
        league.wait_for(lambda: "serving the page at" in league.text(), "the page served")
        address = league.text().split("serving the page at ", 1)[1].split()[0]
        page = Client(address)  # the key in the address, kept as a cookie
        assert b"Leaderboard" in page.read("/report/index.html")  # the live page
        for hidden in ("/.deal-secret", "/../.deal-secret", "/%2e%2e/results.jsonl",
                       "/results.jsonl", "/logs/"):
            assert page.status(hidden) == 404, hidden  # the page's folder alone
        def ended() -> list[str]:  # the matches of the sets whose both seatings are in
            done = [r["id"] for r in league.results()]
            return [i for i in done if sum(j[:-4] == i[:-4] for j in done) == 2]

        league.wait_for(lambda: bool(ended()), "a set that ended")
        ended_id = ended()[0]  # its matches' replays
        assert b'id="ct-data"' in page.read(f"/report/games/{ended_id}.html")
        assert page.status(f"/games/{ended_id}.json.gz") == 404  # a league's records stay home
        assert page.read(f"/report/replays/{ended_id}.js").startswith(  # the one replay
            f'ctReplay("{ended_id}"'.encode())  # page's data, and the page itself
        assert b"&#8592; league page</a>" in page.read("/report/replay.html")
        lists = ("/report/matches.html", "/report/authors/alice.html",  # every match's, and
                 "/report/authors/bob.html")  # each author's: every set so far is theirs
        league.wait_for(lambda: all(page.status(a) == 200 and ended_id.encode() in page.read(a)
                                    for a in lists), "the set in the lists of the matches")
        submit(subs, "carol", "greedy_bot.py")  # a new folder while it plays
        league.wait_for(lambda: league.played("carol"), "a match of carol")
        frank = subs / ".frank"  # a bot in a subfolder importing from its folder's root,
        (frank / "bots").mkdir(parents=True)  # with a command.txt: the check sees what a
        shutil.copy(EXAMPLES / "random_bot.py", frank / "helper.py")  # match sees
        (frank / "bots" / "bot.py").write_text(
            "import sys\nfrom pathlib import Path\n"
            "sys.path.insert(0, str(Path(__file__).resolve().parent.parent))\n"
            "import helper\nsys.exit(helper.main())\n")
        (frank / "command.txt").write_text("python3 bots/bot.py\n")
        frank.rename(subs / "frank")
        league.wait_for(lambda: league.played("frank"), "a match of frank")
        first = league.event("first", name="carol")
        assert first is not None and first["seconds"] >= 0
        with open(subs / "alice" / "bot.py", "a") as f:  # a new version of alice
            f.write("# version 2\n")
        league.wait_for(lambda: league.played("alice.v2"), "a match of alice.v2")
        broken = subs / "dave"  # does not start: the pre-flight refuses it
        broken.mkdir()
        (broken / "bot.py").write_text("print('hello', flush=True)\n")
        garbler = subs / "erin"  # starts, then answers nonsense: the conformance refuses it
        garbler.mkdir()
        (garbler / "bot.py").write_text(
            "import sys\nprint('ready erin', flush=True)\n"
            "for line in sys.stdin:\n    print('banana', flush=True)\n")
        league.wait_for(lambda: league.event("refused", author="dave") is not None and
                        league.event("refused", author="erin") is not None, "two refusals")
        league.wait_for_more(2, "play after the refusals")
    finally:
        text = league.stop()
    assert league.proc.returncode == 0, text
    assert "the same command goes on" in text
    assert "refused dave: did not start in the pre-flight" in text
    assert "refused erin: failed the conformance check (ct-referee check) twice" in text
    assert "'hello'" not in text and "banana" not in text  # never the bot's own output
    assert "standings: " in text and (league.out / "standings.csv").is_file()
    assert "admitted alice.v2" in text and "alice retires" in text
    data = json.loads((league.out / "report" / "league.json").read_text())
    rows = {r["name"]: r for r in data["rows"]}
    assert not rows["alice"]["active"] and rows["alice"]["why"] == "replaced by alice.v2"
    assert rows["alice"]["matches"] > 0  # its history stays
    assert rows["alice.v2"]["active"] and rows["carol"]["active"]
    assert set(data["refused"]) == {"dave", "erin"}
    assert "dave" not in rows and "erin" not in rows
    page = (league.out / "report" / "index.html").read_text()
    assert "did not start in the pre-flight" in page and "alice.v2" in page
    assert "verdict vs next" in page and "Fair-play audit" in page
    ranked = [r for r in data["rows"] if r["active"]]
    assert all(r["next"] is not None for r in ranked[:-1]) and "next" in ranked[-1]
    assert all(f"{k:>3}. {r['name']}" in text for k, r in enumerate(ranked, 1))  # complete
    assert all(r["audit"] is not None for r in data["rows"])
    # after its retirement alice was never handed another set: every match of alice came
    # before alice.v2's first one in the journal, but for seatings of sets already handed out
    results = league.results()
    first_v2 = next(i for i, r in enumerate(results) if "alice.v2" in r["players"])
    late = {r["id"].rsplit("-", 1)[0] for r in results[first_v2:] if "alice" in r["players"]}
    assert len(late) <= 2, late
    # keep_logs: 3: of the complete sets, only the three newest keep their bots' stderr
    seatings: dict[str, int] = {}
    for r in results:
        seatings[r["id"].rsplit("-", 1)[0]] = seatings.get(r["id"].rsplit("-", 1)[0], 0) + 1
    complete = sorted(s for s, n in seatings.items() if n == 2)
    logged = {p.name.rsplit("-", 1)[0] for p in (league.out / "logs").iterdir()}
    assert len(complete) > 6
    assert not logged & set(complete[:-3]), sorted(logged)


HOSTILE_NAMES = (b"bad\xff\xfe", b"\x1b[31mred", b"-x", b"a" * 250, b"new\nline",
                 b"<script>alert(1)")
HOSTILE_SHOWN = ("bad\\xff\\xfe", "\\x1b[31mred", "-x", "a" * 80 + "... (250 characters)",
                 "new\\nline", "<script>alert(1)")
"""Folder names a hostile author chooses, and as the league's log and page show them."""


def test_a_hostile_folder_is_contained_and_the_league_plays_on(tmp_path: Path) -> None:
    path = config(tmp_path, snapshot_mb=4)
    subs = tmp_path / "subs"
    submit(subs, "alice")
    submit(subs, "bob", "greedy_bot.py")
    churn = submit(subs, "churn")  # never the same twice: it never settles
    huge = subs / "huge"  # a terabyte (of holes): refused by its size, never read
    huge.mkdir()
    shutil.copy(EXAMPLES / "random_bot.py", huge / "bot.py")
    with open(huge / "data.bin", "wb") as f:
        f.truncate(1 << 40)
    many = submit(subs, "many")  # more entries than snapshot_mb allows
    for i in range(300):
        (many / f"f{i}").write_text("")
    linkout = subs / "linkout"  # its bot is a symlink out of its folder
    linkout.mkdir()
    os.symlink(EXAMPLES / "random_bot.py", linkout / "bot.py")
    os.symlink(subs / "alice", subs / "alias")  # a folder that is a symlink
    submit(subs, "alice.v2")  # a name the league gives versions
    for name in HOSTILE_NAMES:  # names for a terminal, a page, a command line, a file system
        folder = os.fsencode(subs) + b"/" + name
        os.mkdir(folder)
        shutil.copy(EXAMPLES / "random_bot.py", folder + b"/bot.py")
    pipes = submit(subs, "pipes")  # special files inside: never opened, left out, it plays
    os.mkfifo(pipes / "fifo")
    if os.geteuid() == 0:
        os.mknod(pipes / "zero", 0o600 | stat.S_IFCHR, os.makedev(1, 5))
    stop = threading.Event()

    def rewrite() -> None:
        k = 0
        while not stop.is_set():
            (churn / "state.txt").write_text(str(k))
            k += 1
            time.sleep(0.05)

    writer = threading.Thread(target=rewrite)
    writer.start()
    league = Running(path)
    try:
        for author in ("huge", "many", "linkout", "alias", "alice.v2", *HOSTILE_SHOWN):
            league.wait_for(lambda a=author: league.event("refused", author=a) is not None,
                            f"{author} refused")
        league.wait_for(lambda: len(league.results()) >= 12, "12 matches while churn churns")
        league.wait_for(lambda: league.played("pipes"), "a match of pipes")
    finally:
        stop.set()
        writer.join()
        text = league.stop()
    assert league.proc.returncode == 0, text
    reasons = {e["author"]: e["reason"] for e in league.events() if e["event"] == "refused"}
    assert "more than 4 MiB" in reasons["huge"]
    assert "more than 256 files" in reasons["many"]
    assert "outside its own folder" in reasons["linkout"]
    assert "symlink" in reasons["alias"]
    assert "may not end in .v<number>" in reasons["alice.v2"]
    assert all("\n" not in r for r in reasons.values())
    assert all(not set(a) & set("\n\r\x1b\x00") and a.encode() for a in reasons), reasons
    assert "is not valid UTF-8" in reasons["bad\\xff\\xfe"]
    assert "may not start with '-'" in reasons["-x"]
    assert "longer than 64 characters" in reasons["a" * 80 + "... (250 characters)"]
    page = (league.out / "report" / "index.html").read_text(encoding="utf-8")
    assert "bad\\xff\\xfe" in page and "&lt;script&gt;alert(1)" in page
    assert "\x1b" not in page and "\x1b" not in text
    assert league.event("admitted", author="churn") is None
    assert not any("churn" in r["players"] for r in league.results())


def test_a_restart_after_sigkill_loses_no_finished_match(tmp_path: Path) -> None:
    path = config(tmp_path)
    subs = tmp_path / "subs"
    for author, bot in (("alice", "random_bot.py"), ("bob", "greedy_bot.py"),
                        ("carol", "random_bot.py")):
        submit(subs, author, bot)
    league = Running(path)
    league.wait_for(lambda: len(league.results()) >= 8, "8 matches")
    league.kill()
    out = league.out
    before = [r["id"] for r in league.results()]
    records = sorted(p.name.removesuffix(".json.gz") for p in (out / "games").iterdir())
    assert set(before) <= set(records)
    # a kill between a record's write and its line: the record is there, its line is not
    lines = (out / "results.jsonl").read_text().splitlines(keepends=True)
    (out / "results.jsonl").write_text("".join(lines[:-1]))
    cut = before[-1]
    total = len(records) + 6
    again = Running(path, "--max-matches", str(total))
    again.proc.wait(timeout=WAIT_S)
    text = again.stop()
    assert again.proc.returncode == 0, text
    after = [r["id"] for r in again.results()]
    assert len(after) == len(set(after))  # each match once
    assert cut in after  # played again (the tournament's rule: a line counts, not a record)
    assert total <= len(after) <= total + 1  # the cap lets a set under way finish
    assert set(records) <= set(after)  # every finished match kept, the cut one too
    versions = [e["name"] for e in again.events() if e["event"] == "admitted"]
    assert sorted(versions) == ["alice", "bob", "carol"]  # the same code: the same versions
    # the ratings are the journal's: a run with nothing left to play shows the same table
    rows = json.loads((out / "report" / "league.json").read_text())["rows"]
    still = Running(path, "--max-matches", str(len(after)))
    still.proc.wait(timeout=120)
    assert "0 this run); a larger max_matches (or --max-matches) plays on" in still.stop()
    same = json.loads((out / "report" / "league.json").read_text())["rows"]
    key = [(r["name"], r["mu"], r["sigma"], r["sets"], r.get("next"), r["audit"]) for r in rows]
    assert [(r["name"], r["mu"], r["sigma"], r["sets"], r.get("next"), r["audit"])
            for r in same] == key  # the verdicts and the audit too, read back set by set
    assert any(r.get("next") and r["next"]["sets"] > 0 for r in same)
    assert all(r["audit"]["sets"] == r["sets"] for r in same)  # every rated set audited


def test_the_configuration_is_read_again_while_it_plays(tmp_path: Path) -> None:
    path = config(tmp_path)
    house = (f"entrants:\n  - name: house-random\n    command: {PY} {EXAMPLES}/random_bot.py\n"
             f"  - name: house-greedy\n    command: {PY} {EXAMPLES}/greedy_bot.py\n")
    path.write_text(path.read_text() + house)
    league = Running(path)
    try:
        league.wait_for(lambda: len(league.results()) >= 2, "2 matches")
        path.write_text(path.read_text() + f"  - name: house-late\n    command: {PY} "
                        f"{EXAMPLES}/greedy_bot.py\n")
        league.wait_for(lambda: league.played("house-late"), "a match of house-late")
        path.write_text(path.read_text() + "placment: 2\n")  # a mistake: the rest stays
        league.wait_for(lambda: "not read again" in league.text(), "the mistake said")
        league.wait_for_more(2, "play after the mistake")
    finally:
        text = league.stop()
    assert league.proc.returncode == 0, text
    assert "league.yaml read again: 3 house entrants" in text
    assert "placment: unknown key (did you mean 'placement'?)" in text
    report = subprocess.run([*CLI, "report", str(league.out)], capture_output=True, text=True,
                            timeout=120)
    assert report.returncode == 0 and "a league's page" in report.stdout, report.stderr
