"""Attacks found by red-teaming the sandbox, each through real sandboxed processes: what a
hostile bot tried, asserted refused."""

from __future__ import annotations

import os
import select
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from referee.process import Process, start_process
from referee.sandbox import SandboxPolicy, capabilities

ROOT = Path(__file__).resolve().parent.parent
HOSTILE = ROOT / "tests" / "bots" / "hostile"
CAPS = capabilities()
pytestmark = [pytest.mark.process,
              pytest.mark.skipif(not CAPS.works, reason=f"no sandbox here: {CAPS.summary()}")]


@pytest.fixture
def folder() -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="ct-redteam-", dir="/var/tmp"))
    root.chmod(0o755)
    for name in ("pipes.py",):
        shutil.copy(HOSTILE / name, root / name)
        (root / name).chmod(0o644)
    yield root
    shutil.rmtree(root, ignore_errors=True)


def read_line(proc: Process, timeout_s: float = 60) -> str:
    """The process's first line of output (``""`` if none comes)."""
    data = b""
    deadline = time.monotonic() + timeout_s
    while b"\n" not in data and time.monotonic() < deadline:
        if select.select([proc.stdout], [], [], 0.1)[0]:
            chunk = os.read(proc.stdout, 4096)
            if not chunk:
                break
            data += chunk
    return data.decode(errors="replace").strip()


@pytest.mark.skipif(os.geteuid() != 0, reason="bots get uids of their own from a root referee")
@pytest.mark.parametrize("mode", ["auto", "userns", "setpriv"])
def test_two_bots_share_no_per_uid_pipe_budget(folder: Path, mode: str) -> None:
    """One bot holds 40 pipes of 1 MiB (10240 of the 16384 pages ``fs.pipe-user-pages-soft``
    lets a uid have); another, running at the same time, sees its own headroom whole. With a
    shared uid it would see 24: what one bot holds, the other reads (a channel between
    concurrent sandboxes, e.g. two colluding seats of one match)."""
    if Path("/proc/sys/fs/pipe-user-pages-soft").read_text().strip() != "16384":
        pytest.skip("fs.pipe-user-pages-soft is not the default here")
    if mode != "auto" and not (CAPS.ok("setpriv") if mode == "setpriv" else
                               CAPS.ok("userns") and CAPS.ok("disable-userns")):
        pytest.skip(f"sandbox mode {mode} does not work here: {CAPS.summary()}")
    python = "/usr/bin/python3" if mode == "userns" else sys.executable
    if not Path(python).exists():
        pytest.skip(f"no {python} here")
    policy = SandboxPolicy(mode=mode)
    holder = start_process([python, "pipes.py", "hold", "40"], workdir=folder, sandbox=policy)
    try:
        assert read_line(holder) == "held 40"
        measurer = start_process([python, "pipes.py", "measure"], workdir=folder,
                                 sandbox=policy)
        try:
            line = read_line(measurer)
        finally:
            measurer.stop(0.5)
    finally:
        holder.stop(0.5)
    assert line.startswith("headroom "), line
    assert int(line.split()[1]) > 40, line  # 64 unless another process shares its uid
