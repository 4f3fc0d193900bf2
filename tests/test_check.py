"""``ct-referee check`` against the starter bots and against deliberately broken bots, all run as
real subprocesses; plus :func:`referee.match.check.run_check` in-process for the report's data."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import CLI, ROOT
from referee.match.check import FAIL, PASS, SKIP, STEPS, run_check

CHECKBOTS = "tests/bots"
pytestmark = pytest.mark.process
FAST = ["--move-ms", "400", "--startup-ms", "3000", "--sandbox", "none", "--ascii"]


def check(command: str, *options: str, timeout: float = 90) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CLI, "check", command, *options], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout, check=False)


def needs(*tools: str) -> None:
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed")


# -- the starter bots pass -----------------------------------------------------------------------


@pytest.mark.parametrize("command", ["python3 bots/random_bot.py", "python3 bots/greedy_bot.py"])
def test_python_starters_pass(command: str) -> None:
    done = check(command, "--ascii")  # default sandbox (auto) and limits, as a user runs it
    assert done.returncode == 0, done.stdout + done.stderr
    assert "all 14 steps passed" in done.stdout
    assert "FAIL" not in done.stdout
    assert "median" in done.stdout and "slowest" in done.stdout and "start-up" in done.stdout


def test_javascript_starter_passes() -> None:
    needs("node")
    done = check("node bots/starter.js", "--ascii")
    assert done.returncode == 0, done.stdout + done.stderr


def test_c_starter_passes(tmp_path: Path) -> None:
    needs("cc")
    tmp_path.chmod(0o755)  # the sandboxed bot runs as another uid
    binary = tmp_path / "starter.bin"
    subprocess.run(["cc", "-O2", "-o", str(binary), str(ROOT / "bots/starter.c")], check=True,
                   timeout=60)
    done = check(str(binary), "--ascii")
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.slow
def test_rust_starter_passes(tmp_path: Path) -> None:
    needs("cargo")
    subprocess.run(["cargo", "build", "--offline", "--locked", "--release", "--quiet",
                    "--manifest-path", str(ROOT / "bots/starter-rust/Cargo.toml"),
                    "--target-dir", str(tmp_path)], check=True, timeout=300)
    done = check(str(tmp_path / "release" / "starter-rust"), "--ascii")
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.slow
def test_java_starter_passes(tmp_path: Path) -> None:
    tmp_path.chmod(0o755)  # the sandboxed bot runs as another uid
    needs("javac", "java")
    subprocess.run(["javac", "-d", str(tmp_path), str(ROOT / "bots/Starter.java")], check=True,
                   timeout=120)
    done = check(f"java -cp {tmp_path} Starter", "--ascii", "--startup-ms", "20000")
    assert done.returncode == 0, done.stdout + done.stderr


# -- broken bots fail with the right hint --------------------------------------------------------


@pytest.mark.parametrize(("bot", "hint"), [
    pytest.param("noflush", "flush stdout after each line", marks=pytest.mark.slow),
    ("unheld", "you played a card not in your hand"),
    # Read as the next answer or found between requests, as the pipe's timing has it.
    ("chatty", "that is a debug line on stdout, "),
    ("noready", "print `ready <name>` after reading `chinese-ten 1`, and flush"),
    pytest.param("nonewline", "end every line with a newline", marks=pytest.mark.slow),
    ("noquit", "exit when you read `quit`"),
])
def test_broken_bot_fails_with_hint(bot: str, hint: str) -> None:
    done = check(f"python3 {CHECKBOTS}/{bot}.py", *FAST, "--startup-ms", "1000")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "FAIL" in done.stdout
    assert hint in done.stdout, done.stdout
    assert "Traceback" not in done.stdout + done.stderr


NOFLUSH_READY = """\
import sys
sys.stdout = open(1, "w", buffering=1 << 16, closefd=False)
for line in sys.stdin:
    if line.startswith("chinese-ten"):
        print("ready late")
    if line.startswith("quit"):
        break
"""


def test_a_ready_that_is_not_flushed_is_received_as_nothing(tmp_path: Path) -> None:
    (tmp_path / "bot.py").write_text(NOFLUSH_READY)
    done = check(f"python3 {tmp_path / 'bot.py'}", *FAST, "--startup-ms", "1000")
    assert done.returncode == 1, done.stdout + done.stderr
    received = next(line for line in done.stdout.splitlines() if "received:" in line)
    assert "received: nothing within " in received, done.stdout
    assert "'ready late' came out at `quit`" in received
    assert "flush stdout after each line" in done.stdout


def test_failure_shows_sent_received_expected() -> None:
    done = check(f"python3 {CHECKBOTS}/unheld.py", *FAST)
    failed = done.stdout.split("FAIL", 1)[1]
    for key in ("sent:", "received:", "expected:", "hint:"):
        assert key in failed
    assert "go hand 8c 8d 8h 8s 6c 6d 6h 6s table 2c 2d 4c 4d stock 24 ms 400" in failed


def test_info_comments_are_fine() -> None:
    out = ROOT / "tests" / "bots"
    report = run_check(["python3", str(out / "commenting.py")], workdir=ROOT, move_ms=400)
    assert report.ok, [(s.title, s.received, s.hint) for s in report.steps if not s.ok]
    assert "< info hand over" in report.transcript


def test_cards_in_upper_case_or_10_pass_with_a_warning() -> None:
    done = check(f"python3 {CHECKBOTS}/shouting.py", *FAST)
    assert done.returncode == 0, done.stdout
    assert "write cards as Ts/Ah" in done.stdout
    assert "'10" in done.stdout  # the `10` form is warned about too


def test_missing_command_is_one_line_exit_2() -> None:
    for command in ("no-such-bot-anywhere", "python3 no/such/bot.py"):
        done = check(command)
        assert done.returncode == 2
        assert done.stdout == ""
        assert len(done.stderr.strip().splitlines()) == 1
        assert "not found" in done.stderr


def test_transcript_is_written(tmp_path: Path) -> None:
    out = tmp_path / "t.txt"
    done = check("python3 bots/random_bot.py", *FAST, "--transcript", str(out))
    assert done.returncode == 0
    lines = out.read_text().splitlines()
    assert lines[:2] == ["> chinese-ten 1", "< ready random-bot 1.0"]
    assert any(line.startswith("> go ") and " table stock 24 " in line for line in lines)
    assert lines[-1] == "> quit"


# -- the report as data ---------------------------------------------------------------------------


def test_report_data() -> None:
    seen: list[str] = []
    report = run_check(["python3", "bots/random_bot.py"], workdir=ROOT,
                       on_step=lambda s: seen.append(s.title))
    assert report.ok and report.name == "random-bot 1.0"
    assert seen == [s.title for s in report.steps]
    assert all(s.status == PASS for s in report.steps)
    assert report.exit_code == 0 and report.startup_ms is not None
    assert report.median_ms is not None and report.slowest_ms is not None
    assert len(report.answer_ms) > 40
    assert "> pick 8d from 2c 2d ms 1000" in report.transcript or any(
        line.startswith("> pick ") for line in report.transcript)
    assert any(line.startswith("> take 0 ") for line in report.transcript)
    assert any(line.startswith("> take 1 ") for line in report.transcript)
    assert any(line.startswith("> hand 2 dealer 1 ") for line in report.transcript)
    assert sum(line.startswith("> end ") for line in report.transcript) == 5


def test_report_of_broken_bot_data() -> None:
    report = run_check(["python3", f"{CHECKBOTS}/unheld.py"], workdir=ROOT, move_ms=400)
    assert not report.ok
    failed = [s for s in report.steps if s.status == FAIL]
    assert failed and all(s.hint == "you played a card not in your hand" for s in failed)
    assert any("forfeit illegal" in line for line in report.transcript)


@pytest.mark.parametrize("arg", ["[/]", "[red]x", "[bold]"])
def test_brackets_in_the_command_are_printed_as_is(arg: str) -> None:
    done = check(f"python3 tests/bots/echo.py '{arg}'", *FAST)
    assert done.returncode == 1, done.stdout + done.stderr  # echo is no Chinese Ten player
    assert done.stdout.splitlines()[0].startswith(f"checking python3 tests/bots/echo.py '{arg}' ")
    assert "Traceback" not in done.stderr and "MarkupError" not in done.stderr


def test_unparsable_command_is_one_line_exit_2() -> None:
    done = check("python3 'bots/random_bot.py")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == "error: cannot split the command line: No closing quotation\n"


def test_an_unwritable_transcript_is_refused_before_the_bot_starts(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder\n")
    done = check("python3 bots/random_bot.py", "--transcript", str(blocker / "t.txt"))
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("error: cannot write the transcript ")


# -- hints follow the bot error's reason code, not its message -------------------------------------


@pytest.mark.parametrize(("mode", "received", "hint"), [
    ("garbage", "expected 'ready [name]', got 'hello referee'",
     "print `ready <name>` after reading `chinese-ten 1`, and flush; log to stderr instead"),
    ("exit-early", "exited with code 5 before ready", "it stopped before `ready`: see its stderr"),
    ("unsolicited", "'7c'", "log to stderr instead"),
])
def test_hint_keys_on_the_reason_code(mode: str, received: str, hint: str) -> None:
    bot = [sys.executable, str(ROOT / "tests" / "bots" / "misbehave.py"), mode]
    report = run_check(bot, move_ms=400, startup_ms=3000)
    failed = next(s for s in report.steps if s.status == FAIL)
    assert failed.received == received
    assert failed.hint is not None and failed.hint.startswith(hint), failed.hint


# -- every run reports the same steps, once each ------------------------------------------------


@pytest.mark.parametrize("bot", [
    # 5 s each of waits for answers that never come: the deep lane's (a failure mid-match and
    # one at start-up stay in the everyday lane: unheld, noready).
    pytest.param("noflush", marks=pytest.mark.slow), "unheld", "chatty", "noready",
    pytest.param("nonewline", marks=pytest.mark.slow), "noquit", "thirdgo", "base"])
def test_every_step_is_reported_once_in_order(bot: str) -> None:
    report = run_check(["python3", f"{CHECKBOTS}/{bot}.py"], workdir=ROOT, move_ms=400,
                       startup_ms=1500)
    assert [s.title for s in report.steps] == list(STEPS), [s.title for s in report.steps]
    assert len(STEPS) == 14


def test_a_failure_between_situations_is_its_matchs_end_step() -> None:
    report = run_check(["python3", f"{CHECKBOTS}/thirdgo.py"], workdir=ROOT, move_ms=400)
    failed = [s for s in report.steps if s.status == FAIL]
    assert failed and all(s.title.endswith("played to `end`") for s in failed)
    assert all(s.hint == "you played a card not in your hand" for s in failed)
    assert report.steps[-1].status == PASS  # quit is checked on a fresh process


def test_after_a_start_up_failure_a_fresh_process_goes_on(tmp_path: Path) -> None:
    report = run_check(["python3", f"{CHECKBOTS}/slowfirst.py", str(tmp_path / "marker")],
                       workdir=ROOT, move_ms=400, startup_ms=1500)
    assert report.steps[0].status == FAIL and report.steps[0].title == STEPS[0]
    assert [s.status for s in report.steps[1:]] == [PASS] * (len(STEPS) - 1)
    assert report.transcript.count("> chinese-ten 1") == 2


def test_a_bot_that_never_starts_is_tried_once_more_then_skipped() -> None:
    report = run_check(["python3", f"{CHECKBOTS}/noready.py"], workdir=ROOT, move_ms=400,
                       startup_ms=800)
    statuses = [s.status for s in report.steps]
    assert statuses.count(FAIL) == 2 and statuses.count(SKIP) == len(STEPS) - 2
    assert report.transcript.count("> chinese-ten 1") == 2
