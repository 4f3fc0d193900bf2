"""Whole tournaments with real bot processes: output folder, concurrency, resume after SIGKILL and
Ctrl-C, refusing another tournament's folder, ``--fresh``, faults and plain output."""

from __future__ import annotations

import io
import json
import os
import pty
import re
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from plans import planned

from conftest import (
    PY,
    ROOT,
    Scripted,
    ScriptedEntrant,
    live_processes,
    quitter_tournament,
    tournament_yaml,
)
from referee.bots.process import bwrap_available
from referee.cli import main
from referee.records.record import dumps, read_record
from referee.tournament.run import (
    MARKER,
    SECRET,
    ConfigError,
    Journal,
    Reporter,
    load_config,
    read_deal_secret,
    run,
)
from referee.web.report import Refresher

CLI = [PY, "-c", "from referee.cli import main; main()"]
MATCHES = 2 * 4 * 6  # rounds x C(4, 3) groups x 3! seatings


def config_text(bots: Path, **extra: object) -> str:
    text = f"""\
name: t
entrants:
  - name: random
    command: {PY} {bots}/random_bot.py
  - name: greedy
    command: [{PY}, {bots}/greedy_bot.py]
  - name: random-b
    command: {PY} {bots}/random_bot.py --seed 7
  - name: greedy-b
    command: {PY} {bots}/greedy_bot.py
players: 3
rounds: 2
target: 200
sandbox: none
"""
    return text + "".join(f"{k}: {v}\n" for k, v in extra.items())


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """A config using copies of the example bots (so their processes can be found), and the
    standings.json of an uninterrupted run at concurrency 1."""
    base = tmp_path_factory.mktemp("tournament")
    bots = base / "bots"
    bots.mkdir()
    for name in ("random_bot.py", "greedy_bot.py"):
        shutil.copy(ROOT / "bots" / name, bots / name)
    path = base / "t.yaml"
    path.write_text(config_text(bots))
    outcome = run(load_config(path, output=base / "reference", concurrency=1))
    assert outcome.finished and outcome.played == MATCHES
    yield path, (base / "reference" / "standings.json").read_text()


def journal_lines(out: Path) -> int:
    try:
        return (out / "results.jsonl").read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def start_cli(args: list[str], cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([*CLI, "tournament", *args], cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def wait_for_lines(proc: subprocess.Popen[str], out: Path, n: int) -> None:
    deadline = time.monotonic() + 60
    while journal_lines(out) < n:
        assert proc.poll() is None, "the tournament ended too early"
        assert time.monotonic() < deadline, "no progress"
        time.sleep(0.02)


def reference_secret(path: Path) -> Path:
    """The deal secret of the setup's reference run: other runs deal the same with it."""
    return path.parent / "reference" / SECRET


@pytest.mark.process
@pytest.mark.slow
def test_concurrency_2_output_folder_and_ranking(setup: tuple[Path, str], tmp_path: Path) -> None:
    path, reference = setup
    config = load_config(path, output=tmp_path / "out", concurrency=2)
    secret = read_deal_secret(reference_secret(path))
    outcome = run(config, deal_secret=secret, pages=Refresher)
    out = config.output
    assert outcome.finished and outcome.total == outcome.played == MATCHES
    # Identical standings whatever the concurrency: schedule-order rating, the same deals.
    assert (out / "standings.json").read_text() == reference
    # The output folder, exactly.
    assert sorted(p.name for p in out.iterdir()) == sorted(
        [MARKER, SECRET, "tournament.yaml", "results.jsonl", "games", "logs", "standings.json",
         "standings.csv", "preflight", "report"])
    assert (out / SECRET).stat().st_mode & 0o777 == 0o600
    # written by the worker processes (forks of a server that may be older than this run)
    made = [p for p in (out / "games").iterdir()] + [p for p in (out / "logs").rglob("*")]
    assert {p.stat().st_mode & 0o777 for p in made} == {0o600, 0o700}
    assert (out / "report" / "index.html").is_file()
    assert len(list((out / "report" / "games").iterdir())) == MATCHES
    resolved = yaml.safe_load((out / "tournament.yaml").read_text())
    assert resolved["concurrency"] == 2 and resolved["limits"]["move_ms"] == 1000
    assert resolved["output"] == str(out)
    lines = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert sorted(x["id"] for x in lines) == [m.id for m in planned(config, secret=secret)]
    for line in lines:
        assert set(line) >= {"id", "players", "totals", "ranks", "faults", "record"}
        record = read_record(out / line["record"])
        assert record["id"] == line["id"] and record["players"] == line["players"]
        assert record["totals"] == line["totals"] and record["tournament"] == "t"
        for seat, name in enumerate(line["players"]):
            assert (out / "logs" / line["id"] / f"{seat}-{name}.stderr").is_file()
    assert sorted(p.name for p in (out / "games").iterdir()) == sorted(
        f"{x['id']}.json.gz" for x in lines)
    # The standings.
    table = json.loads(reference)["standings"]
    names = [row["name"] for row in table]
    assert set(names[:2]) == {"greedy", "greedy-b"}, names  # greedy beats random
    assert all(row["matches"] == 3 * 6 * 2 for row in table)
    assert [row["rank"] for row in table] == [1, 2, 3, 4]
    assert table[-1]["p_above_next"] is None and 0 <= table[0]["p_above_next"] <= 1
    csv_rows = (out / "standings.csv").read_text().splitlines()
    assert csv_rows[0].startswith("rank,name,mu,sigma,score,matches,wins,mean_rank,")
    assert [r.split(",")[1] for r in csv_rows[1:]] == names


@pytest.mark.process
@pytest.mark.slow
def test_resume_after_sigkill_and_a_torn_line(setup: tuple[Path, str], tmp_path: Path) -> None:
    path, reference = setup
    out = tmp_path / "out"
    proc = start_cli([str(path), "--output", str(out), "--concurrency", "2",
                      "--deal-secret", str(reference_secret(path))], tmp_path)
    wait_for_lines(proc, out, 6)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=10)
    kept = journal_lines(out)
    assert kept < MATCHES
    with open(out / "results.jsonl", "ab") as f:  # an append torn by a crash
        f.write(b'{"id":"r2-g004-s06","players":["gree')
    # A line whose record is missing does not count either: that match is played again.
    first = json.loads((out / "results.jsonl").read_text().splitlines()[0])
    (out / first["record"]).unlink()
    done = subprocess.run([*CLI, "tournament", str(path), "--output", str(out)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert f", {kept - 1} already played" in done.stdout
    assert "\x1b" not in done.stdout + done.stderr
    assert (out / "standings.json").read_text() == reference
    text = (out / "results.jsonl").read_text()
    assert text.endswith("\n")
    ids = [json.loads(x)["id"] for x in text.splitlines()]
    assert len(ids) == len(set(ids)) == MATCHES


@pytest.mark.process
@pytest.mark.slow
def test_a_folder_of_plain_records_from_before_resumes(setup: tuple[Path, str],
                                                        tmp_path: Path) -> None:
    """A folder an older ct-referee left (``games/<id>.json``, plain JSON; journal lines without
    hand scores, whose records the resume reads) resumes: the new matches' records compressed
    (``.json.gz``), both kinds verified, the same standings."""
    path, reference = setup
    out = tmp_path / "out"
    shutil.copytree(path.parent / "reference", out)
    lines = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    kept, dropped = lines[:7], lines[7:]
    for line in dropped:
        (out / line["record"]).unlink()
    for k, line in enumerate(kept):
        old = out / "games" / f"{line['id']}.json"
        old.write_text(dumps(read_record(out / line["record"])))
        (out / line["record"]).unlink()
        line["record"] = f"games/{line['id']}.json"
        if k < 3:  # a line of a ct-referee before hand scores: its record is read back
            line.pop("scores", None)
            line.pop("luck", None)
    (out / "results.jsonl").write_text("".join(json.dumps(x) + "\n" for x in kept))
    (out / "standings.json").unlink()
    done = subprocess.run([*CLI, "tournament", str(path), "--output", str(out)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert ", 7 already played" in done.stdout, done.stdout
    assert (out / "standings.json").read_text() == reference
    names = sorted(p.name for p in (out / "games").iterdir())
    assert sorted(n for n in names if n.endswith(".json")) == sorted(
        f"{x['id']}.json" for x in kept)
    assert sorted(n for n in names if n.endswith(".json.gz")) == sorted(
        f"{x['id']}.json.gz" for x in dropped)
    verified = subprocess.run([*CLI, "replay", "--verify", str(out)], capture_output=True,
                              text=True, timeout=120)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert verified.stdout.splitlines()[-1] == f"{MATCHES} records: {MATCHES} ok, 0 bad"
    for name in (names[0], names[-1]):  # one of each kind, told turn by turn
        told = subprocess.run([*CLI, "replay", str(out / "games" / name)],
                              capture_output=True, text=True, timeout=120)
        assert told.returncode == 0 and "rank 1" in told.stdout, told.stderr


@pytest.mark.slow  # about 19 s with its setup (a reference run): the deep lane
@pytest.mark.process
def test_a_match_played_again_keeps_one_record(setup: tuple[Path, str], tmp_path: Path) -> None:
    """An older ct-referee's folder whose last matches were written (``games/<id>.json``) but
    not journalled (killed between the two), and one match left with both files by a resume
    before this fix: the resume plays those matches again, and each match ends with one
    record, the compressed one of the match that counts."""
    path, reference = setup
    out = tmp_path / "out"
    shutil.copytree(path.parent / "reference", out)
    lines = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    kept, dropped = lines[:7], lines[7:]
    for line in lines[1:]:  # every record as an older ct-referee wrote it: plain JSON
        (out / "games" / f"{line['id']}.json").write_text(dumps(read_record(out / line["record"])))
        (out / line["record"]).unlink()
        line["record"] = f"games/{line['id']}.json"
    # a resume before the fix left both: the .json.gz its line names, and an older try's .json
    shutil.copy(out / "games" / f"{dropped[0]['id']}.json", out / "games" / f"{kept[0]['id']}.json")
    shutil.copy(out / "games" / f"{dropped[0]['id']}.json", out / "games" / "x.json")
    (out / "results.jsonl").write_text("".join(json.dumps(x) + "\n" for x in kept))
    (out / "standings.json").unlink()
    done = subprocess.run([*CLI, "tournament", str(path), "--output", str(out)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert (out / "standings.json").read_text() == reference
    names = sorted(p.name for p in (out / "games").iterdir())
    ids = [n.split(".")[0] for n in names]
    assert len(ids) == len(set(ids)) == MATCHES + 1, [n for n in names if ids.count(
        n.split(".")[0]) > 1]
    assert "x.json" in names  # a file that is no match's record is not touched
    assert sorted(n for n in names if n.endswith(".json.gz")) == sorted(
        f"{x['id']}.json.gz" for x in [kept[0], *dropped])
    verified = subprocess.run([*CLI, "replay", "--verify", str(out / "games")],
                              capture_output=True, text=True, timeout=120)
    assert verified.stdout.splitlines()[-1] == f"{MATCHES + 1} records: {MATCHES + 1} ok, 0 bad"


@pytest.mark.process
@pytest.mark.slow
def test_ctrl_c_stops_cleanly_and_resumes(setup: tuple[Path, str], tmp_path: Path) -> None:
    path, reference = setup
    out = tmp_path / "out"
    args = [str(path), "--output", str(out), "--concurrency", "2",
            "--deal-secret", str(reference_secret(path))]
    proc = start_cli(args, tmp_path)
    wait_for_lines(proc, out, 4)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=20)
    assert proc.returncode == 130, stderr
    resume = f"resume with: ct-referee tournament {path} --output {out} --concurrency 2"
    assert resume in stderr
    assert "Traceback" not in stderr
    assert "\x1b" not in stdout + stderr
    assert journal_lines(out) < MATCHES
    assert not (out / "standings.json").exists()
    deadline = time.monotonic() + 10  # the bots' processes, reaped as the command ended
    while live_processes(holding=str(path.parent / "bots")) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert live_processes(holding=str(path.parent / "bots")) == []
    done = subprocess.run([*CLI, "tournament", *args], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert (out / "standings.json").read_text() == reference


@pytest.mark.process
def test_another_tournament_is_refused_and_fresh_starts_over(tmp_path: Path) -> None:
    bots = ROOT / "bots"
    path = tmp_path / "t.yaml"
    path.write_text(config_text(bots).replace("players: 3", "players: 2")
                    .replace("rounds: 2", "rounds: 1").replace("  - name: greedy-b\n", "")
                    .replace(f"    command: {PY} {bots}/greedy_bot.py\n", ""))
    out = tmp_path / "out"
    cli = CliRunner()
    first = cli.invoke(main, ["tournament", str(path), "-o", str(out)])
    assert first.exit_code == 0, first.output
    assert "\x1b" not in first.output
    (out / "notes.txt").write_text("mine")
    # The same tournament again: nothing to play, same table.
    again = cli.invoke(main, ["tournament", str(path), "-o", str(out)])
    assert again.exit_code == 0 and ", 6 already played" in again.output
    # Another seed is another tournament.
    path.write_text(path.read_text() + "seed: 2\n")
    refused = cli.invoke(main, ["tournament", str(path), "-o", str(out)])
    assert refused.exit_code == 2
    assert refused.output == (
        f"error: output {str(out)!r} holds another tournament (seed is 1 there, 2 here); "
        f"add --fresh to start over there, or choose another --output\n")
    with pytest.raises(ConfigError, match="holds another tournament"):
        run(load_config(path, output=out))
    fresh = cli.invoke(main, ["tournament", str(path), "-o", str(out), "--fresh"])
    assert fresh.exit_code == 0, fresh.output
    assert (out / "notes.txt").read_text() == "mine"  # --fresh deletes only what it wrote
    assert json.loads((out / MARKER).read_text())["identity"]["seed"] == 2
    # A folder that ct-referee did not make is never used, nor emptied.
    other = tmp_path / "other"
    other.mkdir()
    (other / "precious.txt").write_text("keep")
    for extra in ([], ["--fresh"]):
        result = cli.invoke(main, ["tournament", str(path), "-o", str(other), *extra])
        assert result.exit_code == 2
        assert "is not empty and is not a ct-referee tournament folder" in result.output
    assert (other / "precious.txt").read_text() == "keep"


@pytest.mark.process
def test_faults_are_shown_and_counted(tmp_path: Path) -> None:
    path = quitter_tournament(tmp_path)
    result = CliRunner().invoke(main, ["tournament", str(path), "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert "fault: r1-g001-s01 quitter (seat 0) crash in hand 1: exited with code 3" \
        in result.output
    assert "fault: r1-g001-s02 quitter (seat 1) crash in hand 1" in result.output
    log = tmp_path / "out" / "logs" / "r1-g001-s01" / "0-quitter.stderr"
    assert f"exited with code 3 (its stderr: {log})" in result.output and log.is_file()
    assert "\x1b" not in result.output
    table = json.loads((tmp_path / "out" / "standings.json").read_text())["standings"]
    assert [row["name"] for row in table] == ["greedy", "quitter"]
    assert table[1]["faults"]["crash"] == 2 and table[1]["wins"] == 0
    assert "crash 2" in result.output


def test_journal_drops_a_torn_line_and_appends_cleanly(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    path.write_bytes(b'{"id":"a"}\nnot json\n{"id":"b"}\n{"id":"c","pla')
    journal = Journal(path)
    assert [x["id"] for x in journal.load(lambda line: line["id"] != "b")] == ["a"]
    assert path.read_bytes() == b'{"id":"a"}\n'
    journal.append({"id": "d"})
    journal.close()
    assert path.read_bytes() == b'{"id":"a"}\n{"id":"d"}\n'
    assert [x["id"] for x in Journal(path).load(lambda line: True)] == ["a", "d"]


@pytest.mark.process
@pytest.mark.skipif(not bwrap_available(), reason="bubblewrap is not available here")
def test_the_sandbox_hides_the_output_folder(tmp_path: Path) -> None:
    out = tmp_path / "out"
    peek = tmp_path / "peek" / "peek.py"
    peek.parent.mkdir()
    tmp_path.chmod(0o755)
    peek.write_text("import os, sys\n"
                    "try:\n"
                    f"    seen = sorted(os.listdir({str(out)!r}))\n"
                    "except OSError as e:\n"
                    "    seen = type(e).__name__\n"
                    "print('seen:', seen, file=sys.stderr)\n"
                    "for line in sys.stdin:\n"
                    "    if line.startswith('chinese-ten'):\n"
                    "        print('ready peek', flush=True)\n"
                    "    elif line.startswith(('go', 'pick')):\n"
                    "        sys.exit(3)\n")
    path = tmp_path / "t.yaml"
    path.write_text(f"""\
entrants:
  - {{name: peek, command: {PY} peek/peek.py}}
  - {{name: greedy, command: {PY} {ROOT}/bots/greedy_bot.py}}
players: 2
target: 100
""")
    outcome = run(load_config(path, output=out))
    assert outcome.finished
    for match_id, seat in (("r1-g001-s01", 0), ("r1-g001-s02", 1)):
        log = (out / "logs" / match_id / f"{seat}-peek.stderr").read_text()
        assert log == "seen: FileNotFoundError\n"  # the real folder holds games/, logs/ ...
    # A bot whose folder holds the output folder, the configuration and the other entrant's
    # folder runs from a snapshot without them; one inside the output folder is refused first.
    (tmp_path / "peek.py").write_text(peek.read_text().replace(
        "print('seen:', seen, file=sys.stderr)\n",
        f"print('seen:', seen, os.path.exists({str(path)!r}), file=sys.stderr)\n"))
    path.write_text(path.read_text().replace("peek/peek.py", "peek.py"))
    outcome = run(load_config(path, output=out), fresh=True)
    assert outcome.finished
    log = (out / "logs" / "r1-g001-s01" / "0-peek.stderr").read_text()
    assert log == "seen: FileNotFoundError False\n"  # no output folder, no configuration
    (out / "bot").mkdir()
    (out / "bot" / "peek.py").write_text("")
    path.write_text(path.read_text().replace(" peek.py", f" {out}/bot/peek.py"))
    with pytest.raises(ConfigError, match=r"entrant 'peek': the bot folder .* is inside the "
                                          r"protected path"):
        run(load_config(path, output=out))


@pytest.mark.process
@pytest.mark.slow
def test_verify_a_tournament_folder_counts_only_its_records(setup: tuple[Path, str]) -> None:
    folder = setup[0].parent / "reference"
    assert (folder / "standings.json").is_file() and (folder / MARKER).is_file()
    result = CliRunner().invoke(main, ["replay", "--verify", str(folder)])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-1] == f"{MATCHES} records: {MATCHES} ok, 0 bad"
    assert "standings.json" not in result.output and MARKER not in result.output
    # Named explicitly, a file that is not a record is still reported.
    for name, problem in (("standings.json", 'not a game record (it has no "format"'),
                          (MARKER, "its format is 'ct-referee-tournament'")):
        result = CliRunner().invoke(main, ["replay", "--verify", str(folder / name)])
        assert result.exit_code == 1 and problem in result.output, result.output


def small_config(tmp_path: Path) -> Path:
    return tournament_yaml(tmp_path, {"random": f"{PY} {ROOT}/bots/random_bot.py",
                                      "greedy": f"{PY} {ROOT}/bots/greedy_bot.py"},
                           players=2, target=100, sandbox="none")


@pytest.mark.process
def test_resume_survives_corrupt_ids_and_removes_leftover_temporary_files(
    tmp_path: Path,
) -> None:
    path, out = small_config(tmp_path), tmp_path / "out"
    cli = CliRunner()
    first = cli.invoke(main, ["tournament", str(path), "-o", str(out)])
    assert first.exit_code == 0, first.output
    journal = (out / "results.jsonl").read_bytes()
    with open(out / "results.jsonl", "ab") as f:
        f.write(b'{"id": []}\n{"id": {"a": 1}}\n{"id": 7}\n')
    leftovers = [out / ".standings.json.k3j.tmp", out / ".results.jsonl.x1.tmp",
                 out / f".{MARKER}.q9.tmp", out / "games" / ".r1-g001-s01.json.z.tmp"]
    for leftover in leftovers:
        leftover.write_text("half")
    (out / "notes.tmp").write_text("mine")  # not a write_atomic leftover: kept
    again = cli.invoke(main, ["tournament", str(path), "-o", str(out)])
    assert again.exit_code == 0, again.output
    assert ", 2 already played" in again.output
    assert (out / "results.jsonl").read_bytes() == journal
    assert [p for p in leftovers if p.exists()] == []
    assert (out / "notes.tmp").read_text() == "mine"


@pytest.mark.process
def test_a_resume_trusts_lines_with_scores_and_reads_the_records_of_older_ones(
    tmp_path: Path,
) -> None:
    """A journal line carries each hand's scores: a resume needs only its record's file to be
    there. A line of an older ct-referee (no ``scores``) is checked against its record."""
    path, out = small_config(tmp_path), tmp_path / "out"
    cli = CliRunner()
    assert cli.invoke(main, ["tournament", str(path), "-o", str(out)]).exit_code == 0
    standings = (out / "standings.json").read_text()
    lines = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert [len(x["scores"]) for x in lines] == [x["hands"] for x in lines]
    for line in lines:
        del line["scores"]  # as an older ct-referee wrote them
    (out / "results.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    (out / lines[0]["record"]).unlink()  # that one is played again
    (out / "standings.json").unlink()
    again = cli.invoke(main, ["tournament", str(path), "-o", str(out)])
    assert again.exit_code == 0, again.output
    assert ", 1 already played" in again.output
    assert (out / "standings.json").read_text() == standings
    replayed = json.loads((out / "results.jsonl").read_text().splitlines()[-1])
    assert replayed["id"] == lines[0]["id"] and "scores" in replayed


def test_matches_finished_beside_a_failing_one_are_saved() -> None:
    """A match that cannot start stops the tournament, but every match that finished is still
    saved, in order. In-process players, ordered by events: m0 finishes first; while it is
    being saved, m1 fails to start and m2 finishes."""
    from referee.bots.limits import Limits
    from referee.bots.process import BotCommandError
    from referee.game.rules import Variant
    from referee.match.job import MatchJob, MatchSpec
    from referee.match.play import Player
    from referee.runners.local import ThreadRunner
    from referee.tournament.run import TournamentError, play_jobs

    gate = threading.Event()

    class Unstartable(Scripted):
        def start(self, startup_ms: float, stop: threading.Event | None = None) -> str:
            super().start(startup_ms, stop)
            raise BotCommandError("'./no-such-bot' not found")

    def entrants(*seats: Player) -> tuple[ScriptedEntrant, ...]:
        return tuple(ScriptedEntrant(f"s{i}", "-", make=lambda p=p: p)
                     for i, p in enumerate(seats))

    def job(index: int, seats: tuple[ScriptedEntrant, ...], target: int) -> MatchJob:
        spec = MatchSpec(f"m{index}", index, 1, index + 1, 1, (0, 1), "s", bytes(32))
        return MatchJob(spec, seats, Variant.CLASSIC, target, Limits(), "none", "t")

    failing = Scripted([], gate=gate)
    late = Scripted([], gate=gate)
    jobs = [job(0, entrants(Scripted([]), Scripted([])), 1),
            job(1, entrants(failing, Unstartable([], gate=gate)), 100),
            job(2, entrants(late, Scripted([])), 300)]
    saved: list[str] = []

    def on_done(done: MatchJob, record: object) -> None:
        saved.append(done.spec.id)
        if done.spec.id == "m0":
            gate.set()  # m1 and m2 start only now
            failing.closed.wait(30)
            late.closed.wait(30)

    with pytest.raises(TournamentError, match="no-such-bot"), ThreadRunner(3) as runner:
        play_jobs(runner, jobs, on_done, threading.Event())
    assert saved == ["m0", "m2"]


@pytest.mark.process
def test_a_bot_that_cannot_be_spawned_is_a_seat_fault(tmp_path: Path) -> None:
    """A command that is found but cannot be started (here: exec fails, ENOEXEC, behind the
    prlimit wrapper) is a startup fault of its seat: the other matches play on (fork EAGAIN
    at spawn: tests/test_bot.py)."""
    from referee.bots.limits import Limits
    from referee.game.rules import Variant
    from referee.match.job import MatchJob, MatchSpec
    from referee.match.play import Entrant
    from referee.runners.local import ThreadRunner
    from referee.tournament.run import play_jobs

    instant = Entrant("instant", (PY, str(ROOT / "bench" / "instant_bot.py")))
    broken = tmp_path / "broken-bot"
    broken.write_text("not a program\n")  # executable, but no #! line: exec fails
    broken.chmod(0o755)
    unspawnable = Entrant("broken", ("./broken-bot",), tmp_path)

    def job(index: int, entrants: tuple[Entrant, ...]) -> MatchJob:
        spec = MatchSpec(f"m{index}", index, 1, index + 1, 1, (0, 1), "s", bytes(32))
        return MatchJob(spec, entrants, Variant.CLASSIC, 1, Limits(move_ms=2000), "none", "t")

    saved: dict[str, dict[str, Any]] = {}
    with ThreadRunner(2) as runner:
        play_jobs(runner, [job(0, (instant, instant)), job(1, (instant, unspawnable)),
                           job(2, (instant, instant))],
                  lambda done, finished: saved.update({done.spec.id: finished.line}),
                  threading.Event())
    assert sorted(saved) == ["m0", "m1", "m2"]
    assert saved["m0"]["faults"] == [] and saved["m2"]["faults"] == []
    [fault] = saved["m1"]["faults"]
    assert (fault["seat"], fault["fault"]) == (1, "startup")
    assert "before ready" in fault["detail"]


def test_the_live_header_prints_paths_as_they_are(tmp_path: Path) -> None:
    from rich.console import Console

    from referee.cli.tournament import LiveReporter

    out = tmp_path / "out[red]x[/]"
    config = load_config(small_config(tmp_path), output=out)
    console = Console(file=io.StringIO(), force_terminal=True, width=400, color_system=None)
    reporter = LiveReporter(console)
    reporter.started(config, 2, 0, "none; the seatings of a set never at once")
    reporter.close()
    shown = console.file.getvalue()  # type: ignore[attr-defined]
    assert f"  output:    {out}\n" in shown


def test_the_live_table_leaves_out_an_entrant_left_out(tmp_path: Path) -> None:
    """An entrant the pre-flight left out (its first benched fault says so) has no row in the
    live table, even where the fallback's play would rate it near the top."""
    from rich.console import Console

    from referee.cli.tournament import LiveReporter
    from referee.match.job import MatchSpec
    from referee.tournament.ratings import MatchResult, Standings

    config = load_config(small_config(tmp_path), output=tmp_path / "out")
    console = Console(file=io.StringIO(), force_terminal=True, width=120, color_system=None)
    reporter = LiveReporter(console)
    reporter.started(config, 2, 0, "none; the seatings of a set never at once")
    spec = MatchSpec("r1-g001-s01", 0, 1, 1, 1, (0, 1), "s", bytes(32))
    detail = "left out: did not start in the pre-flight: startup: exited with code 3"
    reporter.fault(spec, "broken", {"seat": 1, "fault": "startup", "hand": 1, "detail": detail})
    table = Standings(["broken", "random", "greedy"])
    table.add(MatchResult(("broken", "random", "greedy"), (300, 100, 50), (1, 2, 3), 2))
    reporter.match_done(spec, None, 1, table)
    assert reporter.live is not None
    drawn = io.StringIO()
    Console(file=drawn, width=120, color_system=None).print(reporter.live.renderable)
    reporter.close()
    rows = [line.split()[1] for line in drawn.getvalue().splitlines()
            if line.strip()[:1].isdigit() and len(line.split()) > 2]
    assert rows == ["random", "greedy"], drawn.getvalue()


def test_the_header_is_short_labelled_lines(tmp_path: Path) -> None:
    """What an organiser reads first: what is played, how it is judged, how the bots run,
    where it goes; one short line each (it was one line of 322 characters)."""
    from rich.console import Console

    from referee.cli.tournament import PlainReporter

    config = load_config(small_config(tmp_path), output=tmp_path / "out")
    console = Console(file=io.StringIO(), width=80)
    PlainReporter(console).started(config, 2, 1, "bwrap (bwrap, seccomp); each bot a uid of "
                                   "its own; the seatings of a set never at once")
    lines = console.file.getvalue().splitlines()  # type: ignore[attr-defined]
    assert lines[0] == "t: 2 entrants, 2 matches, 1 already played", lines
    labels = [line.split(":")[0].strip() for line in lines[1:] if line[2] != " "]
    assert labels == ["played", "deals", "judged", "stops", "sandbox", "faults", "clock",
                      "bots", "running", "output"], lines
    # each limit in words: max_faults 0 is no limit (it read as "no fault allowed")
    assert "  faults:    no limit (max_faults 0: no entrant is disqualified)" in lines, lines
    assert not any("max faults" in line for line in lines), lines
    assert "  played:    round-robin, 1 round: 2-player matches to 100 points" in lines
    assert "  sandbox:   bwrap (bwrap, seccomp)" in lines
    assert "             each bot a uid of its own" in lines
    assert "  running:   concurrency 1; the seatings of a set never at once" in lines
    assert all(len(line) <= 80 for line in lines if not line.startswith("  output:")), lines


def test_a_cluster_header_says_its_protection_is_weaker(tmp_path: Path) -> None:
    """On a cluster the header has no ``sealed:`` nor uid line (no snapshot travels, each
    worker gives its bots their uids): it says so in words instead of dropping them."""
    from rich.console import Console

    from referee.cli.tournament import PlainReporter

    path = small_config(tmp_path)
    path.write_text(path.read_text().replace("sandbox: none", "sandbox: bwrap"))
    config = load_config(path, output=tmp_path / "out")
    shown = {}
    for where in (None, "on the Dask scheduler tcp://head:8786"):
        console = Console(file=io.StringIO(), width=80)
        sandbox = ("bwrap (resolved on each worker); the seatings of a set never at once"
                   if where else "bwrap (bwrap, seccomp); each bot a uid of its own; sealed: "
                   "2 folders snapshotted; the seatings of a set never at once")
        PlainReporter(console, where=where).started(config, 2, 0, sandbox)
        shown[where] = console.file.getvalue()  # type: ignore[attr-defined]
    local, cluster = shown.values()
    assert "weaker" not in local and "sealed: 2 folders" in local
    lines = cluster.splitlines()
    at = lines.index("  sandbox:   bwrap (resolved on each worker)")
    said = " ".join(line.strip() for line in lines[at + 1:at + 5])
    assert said == ("weaker than on one machine: the entrants are not sealed (each worker runs "
                    "their folders as they are on its disk, a change made during the run "
                    "included), and each bot's uid is as each worker can (docs/cluster.md)"), lines
    assert lines[at + 5].startswith("  faults:")
    assert all(len(line) <= 80 for line in lines[at:at + 5]), lines
    config = load_config(small_config(tmp_path), output=tmp_path / "out")  # sandbox: none
    console = Console(file=io.StringIO(), width=80)
    PlainReporter(console, where="on a cluster").started(config, 2, 0, "none (resolved on "
                                                         "each worker); the seatings")
    assert "weaker" not in console.file.getvalue()  # type: ignore[attr-defined]


@pytest.mark.process
def test_an_unwritable_output_folder_is_a_one_line_error(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder\n")
    config = tmp_path / "t.yaml"
    config.write_text(
        "name: t\nentrants:\n"
        f"  - {{name: a, command: [{PY}, {ROOT / 'bots' / 'random_bot.py'}]}}\n"
        f"  - {{name: b, command: [{PY}, {ROOT / 'bots' / 'greedy_bot.py'}]}}\n"
        "players: 2\ntarget: 50\nsandbox: none\n")
    result = subprocess.run([*CLI, "tournament", str(config), "-o", str(blocker / "out")],
                            capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert "error: cannot write" in result.stderr


@pytest.mark.process
def test_a_closed_output_pipe_does_not_end_the_tournament(tmp_path: Path) -> None:
    """``ct-referee tournament t.yaml | head -1``: the tournament plays on to the end."""
    path = small_config(tmp_path)
    proc = subprocess.Popen([*CLI, "tournament", str(path), "-o", str(tmp_path / "out")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.readline().startswith("t: 2 entrants")
    proc.stdout.close()  # what head does after its first line
    err = proc.stderr.read()
    assert proc.wait(timeout=120) == 0, err
    assert "note: the output stopped being read" in err
    assert "Traceback" not in err and "Exception ignored" not in err
    assert (tmp_path / "out" / "standings.json").is_file()
    assert journal_lines(tmp_path / "out") == 2


# -- the pre-flight and the fault limit ----------------------------------------------------------

BROKEN = "import sys; print('boom: no model file', file=sys.stderr); sys.exit(3)"


def three(tmp_path: Path, third: str, extra: str = "") -> Path:
    path = tmp_path / "t.yaml"
    path.write_text(f"""\
entrants:
  - {{name: random, command: {PY} {ROOT}/bots/random_bot.py}}
  - {{name: greedy, command: {PY} {ROOT}/bots/greedy_bot.py}}
  - name: third
    command: {third}
players: 2
target: 100
sandbox: none
{extra}""")
    return path


@pytest.mark.process
def test_an_entrant_that_cannot_start_is_left_out_with_its_stderr(tmp_path: Path) -> None:
    path = three(tmp_path, json.dumps([PY, "-c", BROKEN]))
    result = CliRunner().invoke(main, ["tournament", str(path), "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    # (how it ended, 'exited with code 3' or 'closed its output', depends on the machine's load)
    assert "warning: third did not start in the pre-flight: startup: " in result.output
    assert " before ready\n" in result.output
    assert "boom: no model file" in result.output and "left out" in result.output
    out = tmp_path / "out"
    lines = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    third = [line for line in lines if "third" in line["players"]]
    assert len(lines) == 6 and len(third) == 4  # the schedule stays whole
    for line in third:  # no process: a startup fault at once, the fallback plays the seat
        (fault,) = line["faults"]
        seat = line["players"].index("third")
        assert fault["seat"] == seat and fault["fault"] == "startup"
        assert fault["detail"].startswith("left out: did not start in the pre-flight: ")
        assert not (out / "logs" / line["id"] / f"{seat}-third.stderr").exists()
    doc = json.loads((out / "standings.json").read_text())
    assert [row["name"] for row in doc["standings"]][-1] == "third"
    assert doc["left_out"]["third"].startswith("did not start in the pre-flight: startup")
    assert doc["standings"][-1]["left_out"] == doc["left_out"]["third"]
    page = (out / "report" / "data.js").read_text()
    assert '"third":"preflight/third.stderr"' in page
    assert "boom: no model file" in (out / "preflight" / "third.stderr").read_text()


@pytest.mark.process
def test_preflight_keep_plays_it_and_it_loses_by_fault(tmp_path: Path) -> None:
    path = three(tmp_path, json.dumps([PY, "-c", BROKEN]), "preflight: keep\n")
    result = CliRunner().invoke(main, ["tournament", str(path), "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert "plays all the same" in result.output
    doc = json.loads((tmp_path / "out" / "standings.json").read_text())
    assert doc["standings"][-1]["name"] == "third"
    assert doc["standings"][-1]["faults"]["startup"] == 4 and "left_out" not in doc
    details = [f["detail"] for x in (tmp_path / "out" / "results.jsonl").read_text().splitlines()
               for f in json.loads(x)["faults"]]
    assert details and not any(d.startswith("left out") for d in details)


@pytest.mark.process
def test_max_faults_disqualifies_and_the_fallback_plays_on(tmp_path: Path) -> None:
    faulty = json.dumps([PY, str(ROOT / "tests" / "bots" / "faulty.py"), "garbage", "1"])
    path = three(tmp_path, faulty, "max_faults: 2\n")
    result = CliRunner().invoke(main, ["tournament", str(path), "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert "warning: third is disqualified after 2 faults (max_faults 2)" in result.output
    out = tmp_path / "out"
    # in the order they were played (a group's seatings: in an order the deal secret draws)
    lines = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    third = [line for line in lines if "third" in line["players"]]
    details = [f["detail"] for line in third for f in line["faults"]]
    assert len(third) == 4 and len(details) == 4
    # Its second fault is in its first set (both seatings fault): from its next set on, its
    # seat has no process, whatever the order the matches finished in.
    benched = [d.startswith("disqualified: after 2 faults") for d in details]
    assert benched == [False, False, True, True]
    row = next(r for r in json.loads((out / "standings.json").read_text())["standings"]
               if r["name"] == "third")
    assert row["disqualified"].startswith("after 2 faults (max_faults 2), the last in r1-")
    assert "disqualified" in (out / "report" / "data.js").read_text()


@pytest.mark.process
def test_the_report_is_written_as_matches_end(tmp_path: Path) -> None:
    stop = threading.Event()

    class StopAfterASet(Reporter):  # a match shows once every seating of its set has ended
        def match_done(self, spec: object, result: object, done: int, table: object) -> None:
            if done == 2:
                stop.set()

    config = load_config(small_config(tmp_path), output=tmp_path / "out",
                         overrides={"rounds": 2})
    outcome = run(config, reporter=StopAfterASet(), stop=stop, pages=Refresher)
    assert not outcome.finished and outcome.done == 2
    assert (tmp_path / "out" / "report" / "index.html").is_file()
    text = (tmp_path / "out" / "report" / "data.js").read_text()
    page = json.loads(text[len("window.CT_REPORT = "):-2])
    assert page["final"] is False and page["matches"] == 2
    assert "provisional" in page["headline"]
    assert "standings.csv" not in page["files"]  # not written yet: no link that leads nowhere
    ids = [json.loads(x)["id"] for x in
           (tmp_path / "out" / "results.jsonl").read_text().splitlines()]
    assert len(ids) == 2 and ids[0][:-4] == ids[1][:-4]  # one set
    assert all(i in (tmp_path / "out" / "report" / "matches" / "0.js").read_text() for i in ids)


@pytest.mark.process
def test_the_fallback_follows_the_deal_secret_and_records_verify(tmp_path: Path) -> None:
    """An entrant left out by the pre-flight: its seat is the fallback's in every match. Two
    tournaments with other deal secrets: the fallback's moves in the same match ids differ (its
    generator is keyed by the secret, not the match id an opponent could guess); every record
    verifies and replays."""
    path = three(tmp_path, json.dumps([PY, "-c", BROKEN]))
    moves: dict[str, dict[str, list[str]]] = {}
    for name, secret in (("one", bytes(32)), ("two", bytes(range(32)))):
        out = tmp_path / name
        assert run(load_config(path, output=out), deal_secret=secret).finished
        moves[name] = {}
        for text in (out / "results.jsonl").read_text().splitlines():
            line = json.loads(text)
            if "third" in line["players"]:
                seat = line["players"].index("third")
                record = read_record(out / line["record"])
                moves[name][line["id"]] = [t["play"] for h in record["hands"]
                                           for t in h["turns"] if t["seat"] == seat]
                assert {t["by"] for h in record["hands"] for t in h["turns"]
                        if t["seat"] == seat} == {"fallback"}
        result = CliRunner().invoke(main, ["replay", "--verify", str(out)])
        assert result.exit_code == 0, result.output
        assert result.output.count("ok ") == 6 and "BAD" not in result.output
        some = next(iter(sorted(moves[name])))
        told = CliRunner().invoke(main, ["replay", str(out / "games" / f"{some}.json.gz")])
        assert told.exit_code == 0 and "(fallback)" in told.output, told.output
    assert moves["one"].keys() == moves["two"].keys() and len(moves["one"]) == 4
    assert all(moves["one"][k] != moves["two"][k] for k in moves["one"])


# -- the final table on a narrow terminal ---------------------------------------------------------

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def on_a_terminal(argv: list[str], columns: int, cwd: Path) -> str:
    """What ``argv`` writes to a pseudo-terminal ``columns`` wide (rich reads ``COLUMNS``),
    control sequences taken out."""
    master, slave = pty.openpty()
    env = dict(os.environ, COLUMNS=str(columns), LINES="40", TERM="xterm")
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave,
                            cwd=cwd, env=env)
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    assert proc.wait(timeout=120) == 0, b"".join(chunks).decode(errors="replace")
    return ANSI.sub("", b"".join(chunks).decode()).replace("\r", "")


@pytest.mark.process
@pytest.mark.parametrize("columns", [80, 60])
def test_the_final_table_stays_readable_on_a_narrow_terminal(tmp_path: Path,
                                                             columns: int) -> None:
    """At 80 columns the table was squeezed until unreadable (``sig…``, ``33.…``, a verdict on
    four lines): now columns are left out, first to last, and every cell stays whole."""
    from referee.web.folder import pair_text

    path = tmp_path / "t.yaml"
    path.write_text(f"""\
name: narrow
entrants:
  - {{name: random, command: {PY} {ROOT}/bots/random_bot.py}}
  - {{name: greedy, command: {PY} {ROOT}/bots/greedy_bot.py}}
  - {{name: greedy-b, command: {PY} {ROOT}/bots/greedy_bot.py}}
players: 2
target: 100
sandbox: none
concurrency: 2
""")
    shown = on_a_terminal([*CLI, "tournament", str(path), "-o", "out"], columns, tmp_path)
    table = shown.split("narrow: final standings", 1)[1].split("\nstandings: ", 1)[0]
    lines = table.splitlines()[1:]
    assert all(len(line) <= columns for line in lines), lines
    assert "…" not in table, table
    head = next(line for line in lines if line.lstrip().startswith("#"))
    assert head.split()[:3] == ["#", "name", "mu-3σ"] and head.rstrip().endswith("vs next"), head
    doc = json.loads((tmp_path / "out" / "standings.json").read_text())
    verdicts = {p["upper"]: pair_text(p, 240, short=True, confidence=0.95) for p in doc["pairs"]}
    for row in doc["standings"]:  # each row on one line, its name and verdict whole
        [line] = [x for x in lines if x.split()[:2] == [str(row["rank"]), row["name"]]]
        assert f"{row['score']:.2f}" in line.split(), line
        assert line.rstrip().endswith(verdicts.get(row["name"], "")), line
    said = " ".join(table.split())
    assert "vs next: the verdict on the next row at confidence 0.95" in said
    assert "Left out at this width: mu, sigma, " in said and "No faults." in said


@pytest.mark.process
@pytest.mark.parametrize("columns", [80, 60])
def test_long_lines_wrap_under_their_label_on_a_terminal(tmp_path: Path, columns: int) -> None:
    """On a terminal of 80 columns the header's long lines (the running line, the sandbox's,
    a long title or path) wrapped to column 0, under the labels: now each wraps under its own
    text (the labels' column, 13), the title under itself (2), and a fault line under the
    text after ``fault: `` (7); nothing is lost in the wrapping."""
    path = quitter_tournament(tmp_path)
    title = "a-tournament-whose-name-is-long-" + "n" * 38
    path.write_text(f"name: {title}\n" + path.read_text())
    out = "out-" + "x" * 70
    shown = on_a_terminal([*CLI, "tournament", str(path), "-o", out, "-j", "2", "--affinity"],
                          columns, tmp_path)
    lines = shown.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("a-tournament"))
    end = next(i for i, line in enumerate(lines) if line.startswith("  output:"))
    while end + 1 < len(lines) and lines[end + 1].startswith(" " * 13):
        end += 1
    header = lines[start:end + 1]
    assert all(len(line) <= columns for line in header), header
    assert header[1].startswith("  ") and not header[1].startswith("   "), header
    assert "".join(header[:2]).replace(" ", "").startswith(title + ":2entrants"), header
    label = re.compile(r"  [a-z]+: +")
    for line in header[2:]:
        assert line.startswith(" " * 13) or (label.match(line)
                                             and label.match(line).end() == 13), header  # type: ignore[union-attr]
    said = " ".join(line.strip() for line in header)
    assert "concurrency 2; the seatings of a set never at once, each match on one CPU" in said
    assert "at confidence 0.95" in said
    output = header.index(next(line for line in header if line.startswith("  output:")))
    assert "".join(header[output:]).replace(" ", "") == f"output:{tmp_path / out}", header
    assert any(line.startswith(" " * 13) for line in header[output + 1:]), header
    # each fault line wraps under its text (the progress bar may share its first line)
    faults = [i for i, line in enumerate(lines) if "fault: r1-" in line]
    assert len(faults) == 2, shown
    for i in faults:
        first = lines[i][lines[i].index("fault: "):]
        rest = []
        for line in lines[i + 1:]:
            if not line.startswith(" " * 7) or line.startswith(" " * 8):
                break
            rest.append(line)
        assert len(first) <= columns and all(len(line) <= columns for line in rest), lines
        assert "".join([first, *(line[7:] for line in rest)]).replace(" ", "") == (
            first.split(" in hand")[0] + " in hand 1: exited with code 3 (its stderr: "
            + f"{out}/logs/{first.split()[1]}/{int(first.split('seat ')[1][0])}-quitter.stderr)"
        ).replace(" ", ""), lines


def test_a_wide_character_name_is_cut_by_cells_not_characters() -> None:
    """A name of double-width characters gives way by the cells it takes: the table fills the
    width (cut by characters, it was cut to half the room: 24 cells of 40)."""
    import io

    from rich.cells import cell_len
    from rich.console import Console

    from referee.cli.standings import standings_table
    from referee.tournament.ratings import MatchResult, Standings

    names = ["猫" * 20, "dog"]
    table = Standings(names)
    table.add(MatchResult(tuple(names), (10, 5), (1, 2), hands=1))
    for width in (40, 50):
        buf = io.StringIO()
        Console(file=buf, width=width).print(standings_table(table.standings(), width=width))
        lines = buf.getvalue().splitlines()
        assert max(cell_len(line) for line in lines) == width, lines
