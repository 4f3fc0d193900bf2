"""What a sandboxed entrant sees lies in memory: every file system it can look a name up in is a
tmpfs (or the kernel's own ``proc`` and device nodes), so no lookup and no read it makes leaves
a mark in a disk's dentry or page cache for its next seating (docs/security.md, "What a bot
sees"). Deterministic: the bot reports its mount table and the test checks which file system
each path it could probe lies on; no timing is measured."""

from __future__ import annotations

import ast
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import ROOT
from referee.bots.policy import SandboxPolicy
from referee.bots.probes.world import first_line
from referee.bots.probing import capabilities
from referee.bots.process import Launcher, start_process
from referee.bots.snapshot import Store, sealed_binds, take_snapshot

CAPS = capabilities()
pytestmark = [pytest.mark.process,
              pytest.mark.skipif(not CAPS.works, reason=f"no sandbox here: {CAPS.summary()}")]
PROBE = """import os, sys
paths = {}
for p in sys.argv[1:]:
    paths[p] = os.path.realpath(p)
print(repr((open('/proc/self/mountinfo').read(), paths, os.getcwd())), flush=True)
"""
IN_MEMORY = {"tmpfs", "proc"}
"""File systems whose lookups leave nothing behind (tmpfs: ``simple_lookup`` keeps no negative
dentry, pages always resident) or that are the sandbox's own (a fresh ``proc``)."""
PROBED = ["/usr/lib/made-up", "/usr/bin/made-up", "/etc/made-up", "/lib64/made-up",
          "/tmp/made-up", "/made-up", "/ct/made-up", "/root/made-up", "/var/made-up"]


@pytest.fixture
def folder() -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="ct-view-", dir="/var/tmp"))  # on the host's disk
    root.chmod(0o755)
    (root / "probe.py").write_text(PROBE)
    (root / "probe.py").chmod(0o644)
    yield root
    shutil.rmtree(root, ignore_errors=True)


def look(folder: Path, *extra: str) -> tuple[list[tuple[str, str, str]], dict[str, str], str]:
    """The bot's mounts (mount point, root inside its file system, type), where each probed
    path resolves, and its working folder."""
    probes = [*PROBED, str(folder / "made-up"), str(ROOT / "made-up"), sys.prefix + "/made-up",
              sys.base_prefix + "/lib/made-up", *extra]
    argv = [sys.executable, "probe.py", *probes]
    with Store() as store:  # as a tournament plays it: from its snapshot
        snap = take_snapshot(folder, store, "probe")
        proc = start_process(argv, workdir=folder, launcher=Launcher(SandboxPolicy()),
                             binds=sealed_binds(argv, folder, folder),
                             sources={folder: snap.copy})
        try:
            line = first_line(proc, 60)
        finally:
            proc.stop(0.5)
    table, paths, cwd = ast.literal_eval(line)
    mounts = []
    for row in table.splitlines():
        left, _, right = row.partition(" - ")
        fields = left.split()
        mounts.append((fields[4], fields[3], right.split()[0]))
    return mounts, paths, cwd


def superblock(mounts: list[tuple[str, str, str]], path: str) -> str:
    """The type of the file system a lookup of ``path`` reaches: the innermost mount point
    above it (the last one mounted there)."""
    best = ("", "", "")
    for mount in mounts:
        point = mount[0]
        if (path == point or path.startswith(point.rstrip("/") + "/")) and \
                len(point) >= len(best[0]):
            best = mount
    return best[2]


def test_every_lookup_reaches_a_file_system_in_memory(folder: Path) -> None:
    """The system folders, ``/etc``, the runtime (the venv, the Python install, the referee
    package), the bot's own folder and every other name: each resolves onto a tmpfs (the
    runtime tree, the bot's folder, bwrap's root) or the sandbox's own proc."""
    mounts, paths, _cwd = look(folder)
    for probe, real in paths.items():
        assert superblock(mounts, real) in IN_MEMORY, (probe, real, mounts)


def test_no_disk_file_system_is_mounted(folder: Path) -> None:
    """Every mount is a tmpfs or proc, but for the device nodes bwrap binds (a node, never a
    folder to look names up in)."""
    mounts, _paths, _cwd = look(folder)
    for point, _root, kind in mounts:
        if point.startswith("/dev/") and point.rsplit("/", 1)[1] in (
                "null", "zero", "full", "random", "urandom", "tty", "console", "pts", "ptmx",
                "mqueue", "shm"):
            continue
        assert kind in IN_MEMORY, (point, kind)


def test_the_mount_table_names_no_host_path(folder: Path) -> None:
    """The runtime and the bot's folder are mounted at ``/ct/N`` (a symlink at the host path),
    from trees whose folders are numbered: neither a mount point nor a mount's root names the
    checkout, the Python install or the bot's folder."""
    mounts, _paths, cwd = look(folder)
    secret = [str(ROOT), sys.prefix, sys.base_prefix, str(folder), "/root", "/work", "/var/tmp"]
    for point, root, _kind in mounts:
        for path in (point, root):
            assert not any(path == s or path.startswith(s + "/") for s in secret), (point, root)
    assert cwd.startswith("/ct/"), cwd


def test_the_bot_reads_its_files_at_their_host_paths(folder: Path) -> None:
    """Through the symlinks: a command naming host paths still runs (``ct-referee play`` and
    ``check``, one match each, show a bot's folder as it is on the disk: no later seating)."""
    (folder / "data.txt").write_text("hello\n")
    (folder / "data.txt").chmod(0o644)
    _mounts, paths, cwd = look(folder, str(folder / "data.txt"))
    assert paths[str(folder / "data.txt")] == f"{cwd}/data.txt"


@pytest.mark.skipif(os.geteuid() != 0, reason="the host's dentry count: any user reads it, "
                    "but the check is the same; run once")
def test_a_tournament_leaves_the_hosts_caches_alone(tmp_path: Path) -> None:
    """No cache is dropped: the host's dentry count after a sandboxed duplicate tournament is
    at least half of what it was before (a drop of the caches took it to a few thousand)."""
    from conftest import tournament_yaml
    from referee.tournament.config import load_config
    from referee.tournament.run import run

    before = int(Path("/proc/sys/fs/dentry-state").read_text().split()[0])
    config = tournament_yaml(tmp_path, {
        "a": {"command": f"{sys.executable} {ROOT / 'bots' / 'random_bot.py'}"},
        "b": {"command": f"{sys.executable} {ROOT / 'bots' / 'greedy_bot.py'}"}},
        players=2, output="out", target=100)
    run(load_config(config))
    after = int(Path("/proc/sys/fs/dentry-state").read_text().split()[0])
    assert after >= before // 2, (before, after)
