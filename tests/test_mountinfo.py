"""What a sandboxed bot's mount table (``/proc/self/mountinfo``) says about the host.

The sandbox binds the bot's folder, its runtime and the referee package at their host paths,
and a bind mount's line also names the source's path inside its file system (the fourth
field): both show the organiser's checkout, the venv, the Python install and the bot's folder
(a sealed entrant's per-match copy: the store, in the output folder). Not fixed yet: this test
lists what leaks, and fails strictly once it no longer does (``docs/security.md``, *What
remains*, says what a fix takes)."""

from __future__ import annotations

import ast
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import ROOT
from referee.bots.probes.world import first_line
from referee.bots.process import Launcher, start_process
from referee.bots.sandbox import SandboxPolicy, capabilities

CAPS = capabilities()
pytestmark = [pytest.mark.process,
              pytest.mark.skipif(not CAPS.works, reason=f"no sandbox here: {CAPS.summary()}")]
READ = "print(repr(open('/proc/self/mountinfo').read()), flush=True)\n"


@pytest.fixture
def folder() -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="ct-mountinfo-", dir="/var/tmp"))
    root.chmod(0o755)
    (root / "mi.py").write_text(READ)
    (root / "mi.py").chmod(0o644)
    yield root
    shutil.rmtree(root, ignore_errors=True)


def mount_table(folder: Path) -> list[list[str]]:
    proc = start_process([sys.executable, "mi.py"], workdir=folder,
                         launcher=Launcher(SandboxPolicy()))
    try:
        line = first_line(proc, 60)
    finally:
        proc.stop(0.5)
    text = ast.literal_eval(line)
    assert isinstance(text, str) and " - " in text, line
    return [row.split() for row in text.splitlines()]


def host_paths(rows: list[list[str]], secret: list[Path]) -> list[str]:
    """The mount points and roots (fields 5 and 4) that name one of ``secret`` or below."""
    found = []
    for row in rows:
        for path in (row[3], row[4]):
            if any(path == str(p) or path.startswith(f"{p}/") for p in secret):
                found.append(path)
    return sorted(set(found))


def test_the_table_is_the_sandboxs(folder: Path) -> None:
    """What holds today: the bot's own mounts (a fresh /proc, tmpfs /tmp and /dev/shm, the
    system folders), no /sys."""
    rows = mount_table(folder)
    points = {row[4] for row in rows}
    assert {"/", "/proc", "/tmp", "/dev/shm", "/usr"} <= points, points
    assert not any(p.startswith("/sys") for p in points), points


@pytest.mark.xfail(strict=True, reason="bind mounts show their host paths: the bot's folder, "
                                       "the venv, the Python install and the referee package")
def test_no_host_path_in_the_mount_table(folder: Path) -> None:
    rows = mount_table(folder)
    secret = [ROOT, Path(sys.prefix), Path(sys.base_prefix), folder, Path("/root")]
    assert host_paths(rows, secret) == []
