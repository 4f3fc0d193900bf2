"""The kernel surface a sandboxed bot keeps, through real sandboxed processes: Linux AIO,
``openat2``, ``O_DIRECT`` and socket families other than unix and inet refused, what a bot
needs still working; and the io controller's per-bot disk limit."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from referee.bots.cgroups import (
    IO,
    IO_READ_IOPS,
    Cgroup,
    CgroupLayout,
    block_devices,
    find_layout,
)
from referee.bots.policy import SandboxPolicy
from referee.bots.probes.world import first_line
from referee.bots.probing import capabilities
from referee.bots.process import Launcher, start_process

CAPS = capabilities()
needs_sandbox = pytest.mark.skipif(not CAPS.works, reason=f"no sandbox here: {CAPS.summary()}")

SURFACE = r'''
import ctypes, errno, os, socket, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
NR = {"x86_64": (206, 437), "aarch64": (0, 437)}[os.uname().machine]
def call(nr, *a):
    r = libc.syscall(ctypes.c_long(nr), *a)
    return "ok" if r >= 0 else errno.errorcode[ctypes.get_errno()]
def sock(family, kind=socket.SOCK_STREAM):
    try:
        socket.socket(family, kind).close()
        return "ok"
    except OSError as e:
        return errno.errorcode[e.errno]
out = {"io_setup": call(NR[0], 8, ctypes.byref(ctypes.c_ulong(0))),
       "openat2": call(NR[1], -100, b"surface.py", struct.pack("=QQQ", 0, 0, 0), 24),
       "AF_UNIX": sock(socket.AF_UNIX), "AF_INET": sock(socket.AF_INET),
       "AF_INET6": sock(socket.AF_INET6), "AF_VSOCK": sock(40),
       "AF_NETLINK": sock(16, socket.SOCK_RAW)}
a, b = socket.socketpair()
a.sendall(b"x")
out["socketpair"] = "ok" if b.recv(1) == b"x" else "lost"
try:
    os.close(os.open("surface.py", os.O_RDONLY | os.O_DIRECT))
    out["O_DIRECT"] = "ok"
except OSError as e:
    out["O_DIRECT"] = errno.errorcode[e.errno]
with open("surface.py") as f:
    out["open"] = "ok" if f.read(6) == "\nimpor" else "short"
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen()
c = socket.create_connection(s.getsockname())
out["lo"] = "ok"
print(" ".join(f"{k}={v}" for k, v in out.items()), flush=True)
'''


@pytest.fixture
def folder() -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="ct-kernel-", dir="/var/tmp"))
    root.chmod(0o755)
    (root / "surface.py").write_text(SURFACE)
    (root / "surface.py").chmod(0o644)
    yield root
    shutil.rmtree(root, ignore_errors=True)


def surface(folder: Path, policy: SandboxPolicy | None) -> dict[str, str]:
    proc = start_process([sys.executable, "surface.py"], workdir=folder,
                         launcher=Launcher(policy))
    try:
        line = first_line(proc, 60)
    finally:
        proc.stop(0.5)
    return dict(word.split("=") for word in line.split())


@pytest.mark.process
@needs_sandbox
@pytest.mark.parametrize("mode", ["auto", "setpriv"])
def test_the_refused_calls_answer_as_a_kernel_without_them(folder: Path, mode: str) -> None:
    """AIO and ``openat2``: ENOSYS (libc falls back to ``openat``); ``O_DIRECT``: EINVAL;
    AF_VSOCK and AF_NETLINK: EAFNOSUPPORT. Unix sockets, inet on the sandbox's ``lo``, and
    plain opens work."""
    if mode == "setpriv" and not CAPS.ok("setpriv"):
        pytest.skip("setpriv mode needs a root referee")
    got = surface(folder, SandboxPolicy(mode=mode))
    assert got == {"io_setup": "ENOSYS", "openat2": "ENOSYS", "AF_UNIX": "ok", "AF_INET": "ok",
                   "AF_INET6": got["AF_INET6"], "AF_VSOCK": "EAFNOSUPPORT",
                   "AF_NETLINK": "EAFNOSUPPORT", "socketpair": "ok", "O_DIRECT": "EINVAL",
                   "open": "ok", "lo": "ok"}, got
    assert got["AF_INET6"] in ("ok", "EAFNOSUPPORT")  # a kernel without IPv6 says so itself


@pytest.mark.process
def test_control_unsandboxed_the_calls_reach_the_kernel(folder: Path) -> None:
    got = surface(folder, None)
    assert got["io_setup"] == "ok" and got["openat2"] == "ok", got
    assert got["AF_NETLINK"] == "ok", got
    assert got["O_DIRECT"] in ("ok", "EINVAL"), got  # EINVAL: a file system without it


def io_reason() -> str | None:
    layout = CAPS.layout
    if os.geteuid() != 0:
        return "the io controller needs a root referee"
    if layout.where(IO) is None:
        return f"no io controller here ({layout.missing.get(IO)})"
    if not layout.devices:
        return "no block device backs a mount here"
    return None


@pytest.mark.process
@needs_sandbox
@pytest.mark.skipif(io_reason() is not None, reason=str(io_reason()))
def test_a_bots_reads_are_held_to_its_io_limit(folder: Path) -> None:
    """A sandboxed bot runs in a cgroup whose io controller holds every disk of the layout to
    :data:`IO_READ_IOPS` reads a second, read back from the kernel's own file. What that does
    to a bot reading a cold file as hard as it can, and to the host beside it, is measured by
    bench/io_pressure.py."""
    proc = start_process([sys.executable, "-c", "import time; time.sleep(60)"], workdir=folder,
                         launcher=Launcher(SandboxPolicy()))
    try:
        assert proc.cgroup is not None and IO in proc.cgroup.dirs, proc.active
        assert "cgroup io" in " ".join(proc.active), proc.active
        v1 = proc.cgroup.version(IO) == "v1"
        throttle = proc.cgroup.dirs[IO] / ("blkio.throttle.read_iops_device" if v1 else "io.max")
        held = {line.split()[0]: line.split()[1:] for line in throttle.read_text().splitlines()}
        in_group = proc.pid in proc.cgroup.pids()
    finally:
        proc.stop(0.5)
    assert in_group
    assert sorted(held) == sorted(CAPS.layout.devices), held
    iops = [str(IO_READ_IOPS)] if v1 else [f"riops={IO_READ_IOPS}"]
    assert all(set(iops) <= set(words) for words in held.values()), held


def test_block_devices_are_whole_disks(tmp_path: Path) -> None:
    """A partition counts as its disk; tmpfs and proc (no block device) as none."""
    sysblock = tmp_path / "dev" / "block"
    disk = tmp_path / "devices" / "vda"
    (disk / "vda1").mkdir(parents=True)
    (disk / "dev").write_text("254:0\n")
    (disk / "vda1" / "dev").write_text("254:1\n")
    (disk / "vda1" / "partition").write_text("1\n")
    (tmp_path / "devices" / "dm-0").mkdir()
    sysblock.mkdir(parents=True)
    (sysblock / "254:0").symlink_to(disk)
    (sysblock / "254:1").symlink_to(disk / "vda1")
    (sysblock / "253:0").symlink_to(tmp_path / "devices" / "dm-0")
    mountinfo = ("27 1 254:1 / / rw - ext4 /dev/vda1 rw\n"
                 "28 27 0:25 / /tmp rw - tmpfs tmpfs rw\n"
                 "29 27 253:0 / /srv rw - ext4 /dev/mapper/x rw\n"
                 "30 27 254:1 /home /home rw - ext4 /dev/vda1 rw\n")
    assert block_devices(mountinfo, sysblock) == ("253:0", "254:0")
    assert block_devices("", sysblock) == ()


def test_io_max_on_a_fake_v2_hierarchy(tmp_path: Path) -> None:
    (tmp_path / "ct-referee").mkdir()
    for where in (tmp_path, tmp_path / "ct-referee"):
        (where / "cgroup.subtree_control").write_text("")
    layout = CgroupLayout(v2=tmp_path, v2_controllers=("memory", "pids", "cpu", "io"),
                          devices=("254:0",))
    group = Cgroup.create("bot-io", memory_mb=0, pids=0, cpu_cores=0, layout=layout,
                          io_bps=1 << 20, io_iops=100)
    leaf = tmp_path / "ct-referee" / "bot-io"
    assert (leaf / "io.max").read_text() == "254:0 rbps=1048576 wbps=1048576 riops=100 wiops=100"
    assert group.io_devices == ("254:0",) and group.version(IO) == "v2"
    assert (tmp_path / "cgroup.subtree_control").read_text() == "+memory +pids +cpu +io"
    unlimited = Cgroup.create("bot-free", memory_mb=0, pids=0, cpu_cores=0, layout=layout,
                              io_bps=0, io_iops=0)
    assert IO not in unlimited.dirs and unlimited.io_devices == ()


def test_the_layout_finds_blkio() -> None:
    mountinfo = ("38 31 0:35 / /sys/fs/cgroup/blkio rw - cgroup cgroup rw,blkio\n"
                 "39 31 0:36 / /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids\n")
    layout = find_layout(mountinfo)
    assert layout.where(IO) == "v1" and layout.v1[IO] == Path("/sys/fs/cgroup/blkio")
    assert IO in find_layout("").missing
