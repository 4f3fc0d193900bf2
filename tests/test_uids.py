"""One bot uid allocator per host (issue 18, attack 9): two processes never lease the same uid
at once, a killed holder's uid comes back, and a sandboxed bot holds its uid until it stops."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from conftest import PY
from referee.bots.uids import UidsExhausted, allocate, lock_dir

HOLDER = textwrap.dedent("""\
    import sys
    from pathlib import Path
    from referee.bots.uids import allocate
    lease = allocate(range(70000, 70002), Path(sys.argv[1]))
    print(lease.uid, flush=True)
    sys.stdin.readline()
""")


def holder(folder: Path) -> tuple[subprocess.Popen[str], int]:
    proc = subprocess.Popen([PY, "-c", HOLDER, str(folder)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    return proc, int(proc.stdout.readline())


@pytest.mark.process
def test_two_processes_never_hold_one_uid(tmp_path: Path) -> None:
    first, uid = holder(tmp_path)
    try:
        mine = allocate(range(70000, 70002), tmp_path)
        assert mine.uid != uid  # the other process holds its uid: this one gets the other
        with pytest.raises(UidsExhausted):
            allocate(range(70000, 70002), tmp_path)
        mine.release()
        again = allocate(range(70000, 70002), tmp_path)
        assert again.uid == mine.uid
        first.send_signal(signal.SIGKILL)  # a killed referee gives its uids back
        first.wait()
        assert allocate(range(70000, 70002), tmp_path).uid == uid
    finally:
        first.kill()
        first.wait()


def test_control_per_process_offsets_collide() -> None:
    """The old way: each process cycles over the range from its own offset, knowing nothing
    of the others: two processes that draw the same offset hand out the same uids."""
    import itertools

    uids = range(64000, 65000)
    a = itertools.islice(itertools.cycle(uids), 7, None)
    b = itertools.islice(itertools.cycle(uids), 7, None)
    assert next(a) == next(b)


@pytest.mark.skipif(os.geteuid() != 0, reason="the host-wide folder is root's")
def test_the_lock_folder_is_roots_own() -> None:
    folder = lock_dir()
    st = folder.stat()
    assert folder == Path("/run/ct-referee/uids") and st.st_uid == 0
    assert st.st_mode & 0o777 == 0o700


@pytest.mark.process
@pytest.mark.skipif(os.geteuid() != 0, reason="bots get uids of their own only from root")
def test_a_sandboxed_bot_holds_its_uid_until_it_stops() -> None:
    from referee.bots.policy import SandboxPolicy
    from referee.bots.process import Launcher, bwrap_available, start_process

    if not bwrap_available():
        pytest.skip("no sandbox here")
    bot = Path(__file__).resolve().parent.parent / "bench" / "instant_bot.py"
    process = start_process([sys.executable, str(bot)], workdir=bot.parent,
                            launcher=Launcher(SandboxPolicy()))
    lease = process.lease
    assert lease is not None and lease.held
    process.stop(0)
    assert not lease.held


def as_uid(uid: int) -> subprocess.Popen[bytes]:
    """A sleeper running as ``uid`` (a process the lock files know nothing of), once it does."""
    from referee.bots.uids import processes_of

    proc = subprocess.Popen(["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
                             "sleep", "60"])
    deadline = time.monotonic() + 10
    while proc.pid not in processes_of(uid):  # setpriv has not switched yet
        assert time.monotonic() < deadline
        time.sleep(0.01)
    return proc


@pytest.mark.process
@pytest.mark.skipif(os.geteuid() != 0, reason="only root starts processes as other uids")
def test_a_uid_in_use_is_never_leased_and_its_release_kills_what_is_left(tmp_path: Path) -> None:
    """A live process of a uid keeps it from being leased, held or not; a lease's release kills
    the processes of its uid (a root referee's bot uids are its own) and gives it back once
    they are gone."""
    from referee.bots.uids import processes_of

    squatter = as_uid(70010)
    try:
        for _ in range(20):  # from a random start: never the squatter's
            lease = allocate(range(70010, 70012), tmp_path)
            assert lease.uid == 70011
            lease.release()
        with pytest.raises(UidsExhausted):
            allocate([70010], tmp_path)
    finally:
        squatter.kill()
        squatter.wait()
    lease = allocate([70012], tmp_path)
    escaped = as_uid(70012)
    try:
        assert lease.release() == () and not lease.held
        assert escaped.wait(timeout=5) == -signal.SIGKILL and processes_of(70012) == []
        assert allocate([70012], tmp_path).uid == 70012
    finally:
        if escaped.poll() is None:
            escaped.kill()
            escaped.wait()
