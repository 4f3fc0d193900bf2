"""What a sandboxed bot's mount table (``/proc/self/mountinfo``) says about the host.

A bind mount's line names the source's path inside its file system (the fourth field) whatever
its mount point, so binding the bot's folder, its runtime and the referee package at their
host paths showed the organiser's checkout, the venv, the Python install and the bot's folder
(a sealed entrant's per-match copy: the store, in the output folder). A root referee now
serves each from a read-only overlay staged in a private mount namespace
(:mod:`referee.bots.staging`), mounted at ``/ct/N`` with root ``/``, and a symlink at the host
path; ``docs/security.md``, *What remains*, says what the bot can still read."""

from __future__ import annotations

import ast
import shutil
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
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


def mount_table(folder: Path, code: str = "mi.py", *, hidden: Sequence[Path] = (),
                sources: Mapping[Path, Path] | None = None,
                policy: SandboxPolicy | None = None) -> list[list[str]]:
    proc = start_process([sys.executable, code], workdir=folder, hidden=hidden,
                         sources=sources, launcher=Launcher(policy or SandboxPolicy()))
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


@pytest.mark.skipif(not CAPS.ok("mount table"), reason="a referee that is not root (or no "
                    "overlayfs) binds at the host paths: docs/security.md, What remains")
def test_no_host_path_in_the_mount_table(folder: Path) -> None:
    rows = mount_table(folder)
    secret = [ROOT, Path(sys.prefix), Path(sys.base_prefix), folder, Path("/root")]
    assert host_paths(rows, secret) == []


def test_control_binds_name_the_host_paths(folder: Path) -> None:
    """The control: bind mounts at the host paths (``neutral_mounts=False``, what a referee
    that is not root still does) name the bot's folder, as mount point and root."""
    rows = mount_table(folder, policy=SandboxPolicy(neutral_mounts=False))
    assert host_paths(rows, [folder]) == [str(folder)]


@pytest.mark.skipif(not CAPS.ok("mount table"), reason="a referee that is not root (or no "
                    "overlayfs) binds at the host paths: docs/security.md, What remains")
def test_a_sealed_entrants_copy_is_not_named(folder: Path) -> None:
    """A folder served from a copy (a sealed entrant's per-match copy in the store): neither
    the copy's path nor the folder's is in the table, and a hidden folder inside it is
    mounted under the neutral name; the bot still reads its files at its folder's path."""
    store = Path(tempfile.mkdtemp(prefix="ct-store-", dir="/var/tmp"))
    try:
        store.chmod(0o700)  # the store is the referee's own, as in a tournament
        copy = store / "copy"
        shutil.copytree(folder, copy)
        (copy / "secret").mkdir()
        (copy / "secret" / "x").write_text("hidden")
        (copy / "look.py").write_text(
            f"import os\nassert open({str(folder / 'mi.py')!r}).read() == {READ!r}\n"
            f"assert os.listdir({str(folder / 'secret')!r}) == []\n" + READ)
        for path in (copy, *copy.rglob("*")):
            path.chmod(0o755 if path.is_dir() else 0o644)
        (folder / "secret").mkdir()
        rows = mount_table(folder, "look.py", hidden=[folder / "secret"],
                           sources={folder: copy})
    finally:
        shutil.rmtree(store, ignore_errors=True)
    assert host_paths(rows, [ROOT, Path(sys.prefix), Path(sys.base_prefix), folder, store,
                             Path("/root"), Path("/var/tmp")]) == []
    points = {row[4] for row in rows}
    assert any(p.startswith("/ct/") and p.endswith("/secret") for p in points), points
