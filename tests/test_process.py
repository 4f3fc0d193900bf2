"""Tests for :mod:`referee.bots.process`: commands, the sandbox's command line, limits, spawning and
stopping, against real processes (the fixture bots in ``tests/bots``)."""

from __future__ import annotations

import logging
import os
import re
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from conftest import BOTS, GO, alive, launcher, needs_bwrap
from referee.bots import process as procmod
from referee.bots.bot import Bot, BotCrash
from referee.bots.limits import Rlimits
from referee.bots.process import (
    SCRIPT_SUFFIXES,
    BotCommandError,
    Launcher,
    PopenCall,
    SpawnError,
    describe_exit,
    resolve_command,
    resolve_sandbox,
    split_command,
    start_process,
    stderr_tail,
    which_command,
)
from referee.bots.spawn import BotCommand

# -- commands -----------------------------------------------------------------------------


def test_split_command() -> None:
    assert split_command("python3 'my bot.py' -v") == ["python3", "my bot.py", "-v"]
    assert split_command(["a", Path("b")]) == ["a", "b"]  # type: ignore[list-item]
    with pytest.raises(BotCommandError, match="empty"):
        split_command("  ")


def test_which_command(tmp_path: Path) -> None:
    script = tmp_path / "mybot"
    script.write_text("#!/bin/sh\n")
    assert which_command(["./mybot"], tmp_path) is None  # not executable
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    assert which_command(["./mybot"], tmp_path) == str(script)
    assert which_command(["sh"], tmp_path) is not None
    assert which_command(["no-such-bot-xyz"], tmp_path) is None


def test_missing_command() -> None:
    with pytest.raises(BotCommandError, match="'no-such-bot-xyz'"), \
            Bot(BotCommand.of("no-such-bot-xyz -v")) as b:
        b.start(1000)


def test_not_executable(tmp_path: Path) -> None:
    (tmp_path / "bot.py").write_text("print('ready')\n")
    with pytest.raises(BotCommandError, match="not executable"), Bot(BotCommand.of(
            "./bot.py", workdir=tmp_path)) as b:
        b.start(1000)


@pytest.mark.process
def test_relative_command(tmp_path: Path) -> None:
    script = tmp_path / "mybot"
    script.write_text(f"#!{sys.executable}\n" + (BOTS / "echo.py").read_text())
    script.chmod(0o755)
    with Bot(BotCommand.of("./mybot relative one", workdir=tmp_path)) as b:
        assert b.start(10_000) == "relative one"


def test_resolve_sandbox(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    assert resolve_sandbox("none") == "none"
    with pytest.raises(BotCommandError, match="'box'"):
        resolve_sandbox("box")
    monkeypatch.setattr(procmod, "bwrap_available", lambda: False)
    with pytest.raises(BotCommandError, match="bwrap"):
        resolve_sandbox("bwrap")
    procmod._warn_no_bwrap.cache_clear()
    with caplog.at_level(logging.WARNING, logger="referee.bots.process"):
        assert resolve_sandbox("auto") == "none"
        assert resolve_sandbox("auto") == "none"
    assert len([r for r in caplog.records if "bwrap" in r.message]) == 1


# -- one command resolver ---------------------------------------------------------------------


@pytest.mark.parametrize("command, message", [
    ("", "empty bot command"),
    ("   ", "empty bot command"),
    ("python3 'bot.py", "cannot split the command line: No closing quotation"),
    ('python3 "bot.py', "cannot split the command line: No closing quotation"),
    ("python3 bot.py\\", "cannot split the command line: No escaped character"),
    (["python3", "a\0b"], "NUL"),
    ("no-such-bot-xyz --go", "'no-such-bot-xyz' not found or not executable on PATH"),
    ("./bot.py", "'./bot.py' is in "),
    ("./bot.py", "but not executable: run it with its interpreter (python3 ./bot.py, say)"),
    ("bot.py", "but not executable: run it with its interpreter (python3 bot.py, say)"),
    ("./absent.py", "'./absent.py' not found or not executable in "),
    ("python3 missing.py", "'missing.py' does not exist (bot script not found: "),
    ("python3 sub/missing.js --fast", "'sub/missing.js' does not exist"),
    ("sh run.sh", "'run.sh' does not exist"),
])
def test_resolve_command_refuses_in_one_line(tmp_path: Path, command: str | list[str],
                                             message: str) -> None:
    (tmp_path / "bot.py").write_text("print('ready')\n")  # not executable
    with pytest.raises(BotCommandError) as info:
        resolve_command(command, tmp_path)
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_a_script_that_is_not_executable_is_told_its_own_interpreter(tmp_path: Path) -> None:
    (tmp_path / "bot.pl").write_text("print 'ready';\n")
    (tmp_path / "bot").write_text("#!/usr/bin/env ruby\nputs 'ready'\n")
    (tmp_path / "run.py").write_text("#!/usr/bin/python3.11 -u\nprint('ready')\n")
    for command, hint in (("./bot.pl", "(perl ./bot.pl, say)"), ("./bot", "(ruby ./bot, say)"),
                          ("./run.py", "(python3.11 -u ./run.py, say)")):
        with pytest.raises(BotCommandError, match=re.escape(hint)):
            resolve_command(command, tmp_path)


def test_a_command_in_the_virtual_environment_is_pointed_to(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")  # the environment not activated
    with pytest.raises(BotCommandError) as info:
        resolve_command("ct-referee bot x:y", tmp_path)
    assert f"write {Path(sys.executable).parent / 'ct-referee'}" in str(info.value)


def test_resolve_command_accepts(tmp_path: Path) -> None:
    (tmp_path / "bot.py").write_text("")
    (tmp_path / "weights.json").write_text("")
    assert resolve_command("python3 bot.py -v", tmp_path) == ["python3", "bot.py", "-v"]
    assert resolve_command(["python3", "bot.py", "--model=x.py"], tmp_path)[1] == "bot.py"
    assert resolve_command("python3 bot.py missing.json", tmp_path)[2] == "missing.json"
    with pytest.raises(BotCommandError, match="No closing quotation"):
        split_command("python3 'bot.py")  # a shell's own error, not a bare ValueError


def test_a_command_string_expands_a_leading_tilde_as_a_shell_would() -> None:
    home = os.path.expanduser("~")
    assert split_command("python3 ~/bot.py x~y") == ["python3", f"{home}/bot.py", "x~y"]
    assert split_command(["python3", "~/bot.py"]) == ["python3", "~/bot.py"]  # a list: as is


def test_script_suffixes_include_the_common_languages() -> None:
    for suffix in (".py", ".js", ".mjs", ".cjs", ".rb", ".pl", ".sh", ".jar", ".ts", ".lua",
                   ".php"):
        assert suffix in SCRIPT_SUFFIXES


# -- spawning -----------------------------------------------------------------------------------


class RecordingSpawner:
    """Forks on the calling thread and remembers which thread that was."""

    def __init__(self) -> None:
        self.threads: list[str] = []

    def run(self, popen: PopenCall) -> subprocess.Popen[bytes]:
        self.threads.append(threading.current_thread().name)
        return popen()


@pytest.mark.process
def test_the_spawner_is_injected() -> None:
    spawner = RecordingSpawner()
    with Bot(BotCommand.of([sys.executable, BOTS / "echo.py", "injected"], spawner=spawner)) as b:
        assert b.start(10_000) == "injected"
        assert b.request(GO, 5000).line == f"ok {GO}"
    assert spawner.threads == [threading.current_thread().name]


def test_the_default_spawner_forks_from_its_own_thread() -> None:
    seen: list[str] = []
    spawner = procmod.default_spawner()
    spawner.run(lambda: seen.append(threading.current_thread().name))  # type: ignore[arg-type]
    assert seen and seen[0].startswith("bot-spawner")


def test_a_spawner_that_cannot_fork_is_a_spawn_error(tmp_path: Path) -> None:
    class Failing:
        def run(self, popen: PopenCall) -> subprocess.Popen[bytes]:
            raise OSError("no more processes")

    with pytest.raises(SpawnError, match="cannot start bot command 'sh': no more"):
        start_process(["sh", "-c", "true"], workdir=tmp_path, spawner=Failing())


# -- limits -------------------------------------------------------------------------------------


def limits_of(pid: int) -> dict[str, str]:
    """The soft limits of a running process, by name, from ``/proc/<pid>/limits``."""
    rows = Path(f"/proc/{pid}/limits").read_text().splitlines()[1:]
    return {row[:26].strip(): row[26:47].strip() for row in rows}


@pytest.mark.process
@pytest.mark.parametrize(("wrapper", "sandbox"), [
    ("prlimit", "none"), ("gate", "none"), pytest.param("gate", "bwrap", marks=needs_bwrap)])
def test_limits_reach_the_bot(monkeypatch: pytest.MonkeyPatch, wrapper: str,
                              sandbox: str) -> None:
    """With the ``prlimit`` wrapper, and without it (the shell gate and ``resource.prlimit``
    by pid), the bot runs under its limits and reads the protocol from its first line."""
    if wrapper == "gate":
        monkeypatch.setattr(procmod, "_prlimit", lambda: None)
    elif procmod._prlimit() is None:
        pytest.skip("no prlimit here")
    with Bot(BotCommand.of([sys.executable, BOTS / "echo.py", "limited"],
             launcher=launcher(sandbox, memory_mb=300, file_mb=2))) as b:
        assert b.start(10_000) == "limited"
        assert b.pid
        limits = limits_of(b.pid)
        assert b.request(GO, 5000).line == f"ok {GO}"
        cgroup = b.process.cgroup if b.process else None
        memory = cgroup.dirs.get("memory") if cgroup else None
        cap = (memory / "memory.limit_in_bytes").read_text().strip() if memory else None
    if memory is not None:  # the sandbox's memory cgroup, not an rlimit
        assert cap == str(300 << 20)
    else:
        assert limits["Max data size"] == str(300 << 20)
    assert limits["Max file size"] == str(2 << 20)
    assert limits["Max core file size"] == "0"


@pytest.mark.process
def test_memory_cap_without_prlimit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(procmod, "_prlimit", lambda: None)
    misbehave = [sys.executable, str(BOTS / "misbehave.py"), "memory"]
    with Bot(BotCommand.of([*misbehave, "20"], launcher=launcher(memory_mb=100))) as b:
        b.start(10_000)
        assert b.request(GO, 10_000).line == "ok"
    with Bot(BotCommand.of([*misbehave, "500"], launcher=launcher(memory_mb=100))) as b:
        b.start(10_000)
        with pytest.raises(BotCrash):
            b.request(GO, 10_000)


def test_rlimits_wrap() -> None:
    argv, gated = Rlimits(memory_mb=0, file_mb=1).wrap(["bot"], prlimit="/usr/bin/prlimit")
    assert (argv, gated) == (["/usr/bin/prlimit", "--core=0", f"--fsize={1 << 20}", "--",
                              "bot"], False)
    argv, gated = Rlimits(memory_mb=5).wrap(["bot", "-v"], prlimit=None)
    assert gated and argv[0] == "/bin/sh" and argv[-2:] == ["bot", "-v"]


# -- the sandbox's command line -----------------------------------------------------------------


def test_sandbox_command_line(tmp_path: Path) -> None:
    from referee.bots.command import build_argv
    from referee.bots.policy import SandboxPolicy
    from referee.bots.probing import capabilities

    own, hidden = tmp_path / "bots", tmp_path / "bots" / "results"
    hidden.mkdir(parents=True)
    (own / "bot.py").write_text("")
    (tmp_path / "other").mkdir()
    spec = build_argv(["/usr/bin/python3", "bot.py"], own, caps=capabilities(),
                      policy=SandboxPolicy(tmp_mb=8, mode="setpriv" if os.geteuid() == 0
                                           else "userns"),
                      hidden=(hidden, own, tmp_path / "absent"))
    spec.cleanup()
    argv = spec.argv
    assert argv[0] == "bwrap" and "--die-with-parent" in argv and "--clearenv" in argv
    assert argv[argv.index("--size") + 1] == str(8 << 20)
    shown = argv[argv.index(str(own)) + 1]  # its own folder at a neutral name
    assert ["--ro-bind", str(own), shown] == argv[argv.index(str(own)) - 1:][:3]
    assert shown.startswith("/ct/") and ["--symlink", shown, str(own)] == \
        argv[argv.index(str(own), argv.index(str(own)) + 1) - 2:][:3]
    inside = f"{shown}/results"
    assert ["--tmpfs", inside, "--remount-ro"] == argv[argv.index(inside) - 1:][:3]
    assert str(tmp_path / "other") not in argv  # only the bot's own folder is bound
    assert str(tmp_path / "absent") not in argv
    assert argv[argv.index("--chdir"):argv.index("--chdir") + 3] == ["--chdir", shown, "--"]
    assert argv[-2:] == ["/usr/bin/python3", "bot.py"]


# -- a process without the protocol -------------------------------------------------------------


@pytest.mark.process
def test_process_stderr_exit_and_stop(tmp_path: Path) -> None:
    err = tmp_path / "logs" / "p.err"
    script = "echo one >&2; echo two >&2; head -c 100000 /dev/zero >&2; exit 7"
    p = start_process(["sh", "-c", script], workdir=tmp_path, stderr_path=err,
                      launcher=Launcher(stderr_cap=8))
    assert p.wait_exit(10)
    assert p.exit_status(0) == "exited with code 7"
    p.stop(0)
    p.stop(0)  # idempotent
    assert p.returncode == 7 and not p.draining
    assert err.read_bytes() == b"one\ntwo\n\n[ct-referee: stderr cut at 8 bytes]\n"
    assert stderr_tail(err, 3) == ["two", "", "[ct-referee: stderr cut at 8 bytes]"]
    assert stderr_tail(None) == [] and stderr_tail(tmp_path / "none") == []


@pytest.mark.process
def test_stop_kills_the_group(tmp_path: Path) -> None:
    p = start_process(["sh", "-c", "sleep 60 & echo $!; wait"], workdir=tmp_path)
    os.set_blocking(p.stdout, True)
    child = int(os.read(p.stdout, 100))
    assert p.exit_status(0.05) is None and alive(child)
    p.stop(0.05)
    assert p.returncode == -9
    for _ in range(300):  # SIGKILL was sent; the child may take a moment to go
        if not alive(child):
            break
        threading.Event().wait(0.01)
    assert not alive(child)


def test_describe_exit() -> None:
    assert describe_exit(3) == "exited with code 3"
    assert describe_exit(-9) == "killed by SIGKILL"
    assert describe_exit(-200) == "killed by signal 200"
