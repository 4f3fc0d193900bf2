"""``ct-referee sandbox`` names each hostile probe by its whole first sentence, and says
whether the per-bot disk io limit is available (the ``cgroup io`` line)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from conftest import CLI
from referee.bots.cgroups import IO, CgroupLayout, find_layout
from referee.bots.probes.attacks import ATTACKS
from referee.bots.probing import io_check
from referee.cli.sandbox import probe_summary


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_each_probe_is_described_by_a_whole_sentence(name: str) -> None:
    summary = probe_summary(ATTACKS[name].__doc__)
    assert summary.endswith("."), summary          # `pagecache` used to end "the marks a bot"
    assert "\n" not in summary and "  " not in summary


def test_a_summary_wrapped_over_two_source_lines_is_joined() -> None:
    doc = "Evict the page cache: the marks a bot\n    leaves for a later bot.\n\n    More."
    assert probe_summary(doc) == "Evict the page cache: the marks a bot leaves for a later bot."
    assert probe_summary(None) == ""


# -- the disk io limit's line ---------------------------------------------------------------


@pytest.mark.process
def test_the_command_says_whether_the_disk_io_limit_is_available() -> None:
    """The real ``ct-referee sandbox --no-probes`` has a ``cgroup io`` line beside the other
    controllers': OK where a root referee finds a blkio (v1) or io (v2) controller and a disk
    to limit, NO (with why) otherwise; never what decides the exit status."""
    done = subprocess.run([CLI, "sandbox", "--no-probes", "--ascii"], capture_output=True,
                          text=True, timeout=120, check=False)
    lines = done.stdout.splitlines()
    io = [line for line in lines if line.split()[1:3] == ["cgroup", "io"]]
    assert len(io) == 1, done.stdout
    names = [line.split()[1] + " " + line.split()[2] for line in lines
             if line.split()[1:2] == ["cgroup"]]
    assert names == ["cgroup memory", "cgroup pids", "cgroup cpu", "cgroup io"], names
    layout = find_layout()
    expected = os.geteuid() == 0 and layout.where(IO) is not None and bool(layout.devices)
    mark, detail = io[0].split(None, 3)[0], io[0].split(None, 3)[3]
    assert mark == ("OK" if expected else "NO"), io[0]
    if expected:
        assert "64 MiB/s and 400 requests/s a bot" in detail, detail
        assert all(dev in detail for dev in layout.devices), detail
        assert ("blkio" in detail) == (layout.where(IO) == "v1"), detail
    elif layout.where(IO) is None:
        assert "(to enable:" in detail, detail
    caps_ok = "no working sandbox" not in done.stdout
    assert done.returncode == (0 if caps_ok else 1), done.stdout  # io never decides it


def test_the_io_line_on_each_kind_of_machine(tmp_path: Path) -> None:
    v2 = CgroupLayout(v2=tmp_path, v2_controllers=("memory", "io"), devices=("8:0", "254:0"))
    ok = io_check(v2, root=True)
    assert ok.ok and ok.name == "cgroup io"
    assert ok.detail == f"v2 at {tmp_path}: 64 MiB/s and 400 requests/s a bot, on disks 8:0, 254:0"
    assert not io_check(v2, root=False).ok
    assert "the referee is not root" in io_check(v2, root=False).detail
    none = CgroupLayout(v2=tmp_path, missing={"io": "no cgroup v1 blkio hierarchy"})
    assert not io_check(none, root=True).ok and io_check(none, root=True).enable
    diskless = CgroupLayout(v1={"io": tmp_path})
    assert "no disk backs a mount" in io_check(diskless, root=True).detail
    assert "no memory, pids or cpu" in io_check(v2, root=True, cgroups=False).detail
