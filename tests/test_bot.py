"""Tests for :mod:`referee.bots.bot`, against real processes: the fixture bots in ``tests/bots``
(the protocol logic without processes: ``tests/test_bot_protocol.py``)."""

from __future__ import annotations

import os
import shutil
import socket
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from conftest import BOTS, GO, alive, launcher, live_processes, needs_bwrap
from referee.bots.bot import Answer, Bot, BotCrash, BotStartupError, BotTimeout
from referee.bots.process import BotCommandError, Launcher
from referee.bots.spawn import BotCommand
from referee.game.faults import Fault, Reason

pytestmark = pytest.mark.process


def misbehave(mode: str, arg: str = "", **kwargs: Any) -> Bot:
    return Bot(BotCommand.of([sys.executable, str(BOTS / "misbehave.py"), mode, arg], **kwargs))


def started(bot: Bot, startup_ms: float = 10_000) -> Bot:
    bot.start(startup_ms)
    return bot


# -- a well-behaved bot -------------------------------------------------------------------


def test_echo(tmp_path: Path) -> None:
    err = tmp_path / "logs" / "deep" / "echo.err"
    with Bot(BotCommand.of([sys.executable, BOTS / "echo.py", "echo", "1.0"],
                           stderr_path=err)) as b:
        assert b.start(10_000) == "echo 1.0"
        assert b.name == "echo 1.0" and b.pid
        assert os.getsid(b.pid) == b.pid != os.getsid(0)  # Ctrl-C does not reach it
        b.send("match id m1 seat 0")
        for _ in range(3):
            answer = b.request(GO, 1000)
            assert answer == Answer(f"ok {GO}", answer.ms, ())
            assert 0 < answer.ms < 1000
        assert b.request("pick 7c from 7h 7d ms 500", 1000).line == "ok pick 7c from 7h 7d ms 500"
        b.forfeit(Fault.TIMEOUT)
        b.forfeit(Fault.TIMEOUT)  # idempotent
    assert b.returncode == 0  # it left on quit
    assert err.read_text() == "got match id m1 seat 0\ngot forfeit timeout\n"
    with pytest.raises(BotCrash) as e:
        b.request(GO, 100)
    assert e.value.code == Reason.NOT_RUNNING


def test_bots_in_threads() -> None:
    def play(seat: int) -> list[str]:
        with started(Bot(BotCommand.of([sys.executable, BOTS / "echo.py", f"seat{seat}"]))) as b:
            return [b.request(f"go {seat} {i}", 5000).line for i in range(50)]

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(play, range(4)))
    assert results == [[f"ok go {s} {i}" for i in range(50)] for s in range(4)]






# -- faults -------------------------------------------------------------------------------


def test_timeout() -> None:
    with started(misbehave("sleep")) as b, pytest.raises(
            BotTimeout, match="no answer within 300 ms") as e:
        b.request(GO, 300)
    assert (e.value.fault, e.value.code) == (Fault.TIMEOUT, Reason.NO_ANSWER)




def test_crash_mid_hand() -> None:
    with started(misbehave("crash")) as b:
        assert b.request(GO, 5000).line == "ok"
        with pytest.raises(BotCrash, match="exited with code 3") as e:
            b.request(GO, 5000)
        assert (e.value.fault, e.value.code) == (Fault.CRASH, Reason.EXITED)
        b.send("play 0 7c")  # never raises on a dead bot
        with pytest.raises(BotCrash):
            b.request(GO, 5000)


@pytest.mark.parametrize("sandbox", ["none", pytest.param("bwrap", marks=needs_bwrap)])
def test_exit_leaving_a_child_that_holds_stdout(sandbox: str) -> None:
    with started(misbehave("orphan", launcher=launcher(sandbox))) as b:
        # a crash, not a timeout: the exit is seen though the child still holds stdout
        with pytest.raises(BotCrash, match="exited with code 4"):
            b.request(GO, 5000)
        assert b.pid
        pgid = b.pid
    t0 = time.monotonic()
    while live_processes(group=pgid) and time.monotonic() - t0 < 3.0:
        time.sleep(0.01)
    assert live_processes(group=pgid) == []






def test_exit_before_ready() -> None:
    with misbehave("exit-early") as b, pytest.raises(
            BotStartupError, match="exited with code 5 before ready") as e:
        b.start(5000)
    assert (e.value.fault, e.value.code) == (Fault.STARTUP, Reason.EXITED)






def test_bot_that_stops_reading() -> None:
    with started(misbehave("slowread")) as b:
        with pytest.raises(BotTimeout):
            b.request(GO, 200)  # now it sleeps and reads nothing more
        sender = threading.Thread(target=lambda: [  # ~1.6 MB: far more than a pipe holds
            b.send(f"play 0 7c {i:060d}") for i in range(20_000)], daemon=True)
        sender.start()
        sender.join(60)  # a deadline for a hang, not a timing: send never blocks
        assert not sender.is_alive()
        with pytest.raises(BotTimeout, match="does not read its input") as e:
            b.request(GO, 200)
        assert e.value.code == Reason.NOT_READING


def test_stderr_flood_is_capped(tmp_path: Path) -> None:
    err = tmp_path / "bot.err"
    with misbehave("stderr", stderr_path=err, launcher=Launcher(stderr_cap=100_000)) as b:
        b.start(10_000)
        assert b.request(GO, 20_000).line == "ok"  # it wrote 50 MB to stderr first
    data = err.read_bytes()
    assert data.startswith(b"e" * 100_000)
    assert data[100_000:] == b"\n[ct-referee: stderr cut at 100000 bytes]\n"


# -- stopping -----------------------------------------------------------------------------


def test_close_kills_a_bot_that_ignores_quit_and_sigterm() -> None:
    b = started(misbehave("stubborn"))
    assert b.request(GO, 5000).line == "ok"
    pid = b.pid
    assert pid
    b.close(grace_ms=200)
    assert not alive(pid)
    assert b.returncode == -9
    b.close()  # idempotent


@pytest.mark.parametrize("sandbox", ["none", pytest.param("bwrap", marks=needs_bwrap)])
def test_close_kills_the_whole_group(sandbox: str) -> None:
    b = started(misbehave("child", launcher=launcher(sandbox)))
    child = int(b.request(GO, 5000).line.split()[1])
    assert b.pid
    members = live_processes(group=b.pid)
    if sandbox == "none":  # sandboxed, the bot has a session (and a pid namespace) of its own
        assert alive(child)
        assert len(members) >= 2
    b.close(grace_ms=100)  # the leader exits on quit; its child holds stdout and stderr
    t0 = time.monotonic()
    # SIGKILL is sent to all of them; a dying pid-namespace init may take a moment to go.
    while live_processes(group=b.pid) and time.monotonic() - t0 < 3.0:
        time.sleep(0.01)
    assert live_processes(group=b.pid) == []
    assert not any(alive(pid) for pid in members)
    assert b.process and not b.process.draining


def test_memory_cap() -> None:
    with started(misbehave("memory", "20", launcher=launcher(memory_mb=100))) as b:
        assert b.request(GO, 10_000).line == "ok"
    with started(misbehave("memory", "500", launcher=launcher(memory_mb=100))) as b, \
            pytest.raises(BotCrash):
        b.request(GO, 10_000)


def test_file_size_cap(tmp_path: Path) -> None:
    with started(misbehave("bigfile", str(tmp_path / "big"),
                           launcher=launcher(file_mb=1))) as b, pytest.raises(
            BotCrash, match=r"SIGXFSZ|exited"):
        b.request(GO, 10_000)
    assert (tmp_path / "big").stat().st_size <= 1 << 20


# -- sandbox ------------------------------------------------------------------------------


@pytest.fixture
def outside_tmp() -> Iterator[Path]:
    """A scratch folder outside /tmp (the sandbox replaces /tmp with its own)."""
    with tempfile.TemporaryDirectory(dir="/var/tmp", prefix="ct-bot-test-") as name:
        Path(name).chmod(0o755)  # the sandboxed bot runs as another uid
        yield Path(name)


def probe(**kwargs: Any) -> Bot:
    return started(Bot(BotCommand.of([sys.executable, BOTS / "probe.py"],
                                      launcher=launcher("bwrap"), **kwargs)))


@needs_bwrap
def test_sandbox_hides_folders(outside_tmp: Path) -> None:
    hidden, shown = outside_tmp / "results", outside_tmp / "bots"
    for folder in (hidden, shown):
        folder.mkdir()
        (folder / "secret.txt").write_text("42\n")
    (outside_tmp / "key.txt").write_text("43\n")
    shutil.copy(BOTS / "probe.py", outside_tmp / "probe.py")
    with started(Bot(BotCommand.of(
            [sys.executable, "probe.py"], workdir=outside_tmp, launcher=launcher("bwrap"),
            hidden=[hidden, outside_tmp / "key.txt", outside_tmp / "absent"]))) as b:
        assert b.request(f"go read {shown / 'secret.txt'}", 5000).line == "yes"
        assert b.request(f"go read {hidden / 'secret.txt'}", 5000).line.startswith("no ")
        assert b.request(f"go exists {hidden / 'secret.txt'}", 5000).line.startswith("no ")
        assert b.request(f"go read {outside_tmp / 'key.txt'}", 5000).line.startswith("no ")


@needs_bwrap
def test_sandbox_outlives_the_thread_that_started_it() -> None:
    b = Bot(BotCommand.of([sys.executable, BOTS / "echo.py"], launcher=launcher("bwrap")))
    starter = threading.Thread(target=b.start, args=(10_000,))
    starter.start()
    starter.join()
    time.sleep(0.1)
    with b:
        assert b.request(GO, 5000).line == f"ok {GO}"


@needs_bwrap
def test_sandbox_has_no_network() -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        # control: no sandbox
        with started(Bot(BotCommand.of([sys.executable, BOTS / "probe.py"]))) as b:
            assert b.request(f"go connect 127.0.0.1:{port}", 5000).line == "yes"
        with probe() as b:
            assert b.request(f"go connect 127.0.0.1:{port}", 5000).line.startswith("no ")
            assert b.request("go connect 1.1.1.1:53", 5000).line.startswith("no ")


@needs_bwrap
def test_sandbox_file_system(outside_tmp: Path) -> None:
    name = f"/tmp/ct-bot-test-{uuid.uuid4().hex}"
    with probe(workdir=outside_tmp) as b:
        assert b.request(f"go write {outside_tmp / 'out.txt'}", 5000).line.startswith("no ")
        assert b.request("go write here.txt", 5000).line.startswith("no ")
        assert b.request(f"go write {name}", 5000).line == "yes"
        assert b.request(f"go exists {name}", 5000).line == "yes"
        assert not os.path.exists(name)
    assert list(outside_tmp.iterdir()) == []
    with probe() as b:
        assert b.request(f"go exists {name}", 5000).line.startswith("no ")


@needs_bwrap
def test_sandbox_relative_command_under_tmp(tmp_path: Path) -> None:
    script = tmp_path / "mybot"
    script.write_text(f"#!{sys.executable}\n" + (BOTS / "echo.py").read_text())
    script.chmod(0o755)
    with Bot(BotCommand.of("./mybot boxed", workdir=tmp_path, launcher=launcher("bwrap"))) as b, \
            pytest.raises(BotCommandError, match="not readable by the bot's uid"):
        b.start(10_000)  # pytest's folders are 0700
    tmp_path.chmod(0o755)
    with Bot(BotCommand.of("./mybot boxed", workdir=tmp_path, launcher=launcher("bwrap"))) as b:
        assert b.start(10_000) == "boxed"
        assert b.request(GO, 5000).line == f"ok {GO}"







# -- a hidden folder never hides the bot from itself ---------------------------------------------


@needs_bwrap
def test_sandbox_does_not_hide_the_bots_own_folder(outside_tmp: Path) -> None:
    """Asked to hide the folder the bot lives in (or one above it), the sandbox skips it; the
    other folders asked for are still hidden."""
    bots, results = outside_tmp / "bots", outside_tmp / "results"
    for folder in (bots, results):
        folder.mkdir()
        (folder / "secret.txt").write_text("42\n")
    shutil.copy(BOTS / "probe.py", bots / "probe.py")
    for hidden in ([bots, results], [outside_tmp], [outside_tmp / "bots" / "probe.py", results]):
        with started(Bot(BotCommand.of([sys.executable, "probe.py"], workdir=bots,
                                       launcher=launcher("bwrap"), hidden=hidden))) as b:
            assert b.request(f"go read {bots / 'secret.txt'}", 5000).line == "yes"
            if results in hidden:
                assert b.request(f"go read {results / 'secret.txt'}", 5000).line.startswith("no ")
    named = outside_tmp / "data"  # a folder named on the command line is not hidden either
    named.mkdir()
    (named / "secret.txt").write_text("42\n")
    with started(Bot(BotCommand.of([sys.executable, BOTS / "probe.py", named],
                                   launcher=launcher("bwrap"), hidden=[named, results]))) as b:
        assert b.request(f"go read {named / 'secret.txt'}", 5000).line == "yes"
        assert b.request(f"go read {results / 'secret.txt'}", 5000).line.startswith("no ")


# -- a spawn that fails ---------------------------------------------------------------------------


class EagainSpawner:
    """Fails the first ``fails`` forks with EAGAIN, as a machine out of processes would."""

    def __init__(self, fails: int) -> None:
        self.fails = fails

    def run(self, popen: Any) -> Any:
        if self.fails:
            self.fails -= 1
            raise BlockingIOError(11, "Resource temporarily unavailable")
        return popen()


def test_a_failed_spawn_is_retried_once_then_a_startup_fault() -> None:
    echo = [sys.executable, BOTS / "echo.py", "again"]
    with Bot(BotCommand.of(echo, spawner=EagainSpawner(1))) as b:
        assert b.start(10_000) == "again"
    with Bot(BotCommand.of(echo, spawner=EagainSpawner(2))) as b, \
            pytest.raises(BotStartupError) as info:
        b.start(10_000)
    assert info.value.fault == Fault.STARTUP and info.value.code == Reason.SPAWN_FAILED
    assert "Resource temporarily unavailable" in info.value.detail
