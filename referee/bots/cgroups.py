"""Per-bot cgroups (memory, pids, cpu; io where present) on cgroup v1 and v2, without systemd.

A root referee: v1, one directory per controller hierarchy, ``<mount>/ct-referee/<name>``; v2,
one directory ``<mount>/ct-referee/<name>`` with the controllers enabled in
``cgroup.subtree_control`` of the root and of ``ct-referee`` (a root-owned subtree the referee
owns; the root cgroup is exempt from the no-internal-process rule, a nested one is not). A
referee that is not root makes them in the subtree delegated to it (:attr:`CgroupLayout.home`,
found by :mod:`referee.bots.delegation`; ``docs/security.md``, *Limits without root*).
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

CONTROLLERS = ("memory", "pids", "cpu")
IO = "io"
"""The disk controller, used where the machine has it (v1 ``blkio``, v2 ``io``) and never
required: its limits are written best-effort (a device it refuses is left unlimited)."""
IO_READ_BPS = 64 << 20
IO_READ_IOPS = 400
"""A bot's disk limits, per block device backing a mount (reads and writes alike): 64 MiB/s
and 400 requests a second. A bot reads from the disk only what is not cached (its runtime
cold, its own files once); past these it waits, so that no bot takes a shared disk from the
host and its neighbours (``docs/security.md``, *The disk*)."""
PARENT = "ct-referee"
CFS_PERIOD_US = 100_000
ON_MOVE = {True: 1024, False: 100}
"""A bot's CPU weight while on move: the default (v1 ``cpu.shares``, v2 ``cpu.weight``)."""
OFF_MOVE = {True: 2, False: 1}
"""A bot's CPU weight while not on move: the least each version takes (1/512 of the default
on v1, 1/100 on v2)."""


@dataclass(frozen=True)
class CgroupLayout:
    """Where each controller lives: ``v1`` maps controller to its hierarchy's mount point;
    ``v2`` is the unified mount when it offers a controller; ``missing`` lists the rest with
    a reason each."""

    v1: dict[str, Path] = field(default_factory=dict)
    v2: Path | None = None
    v2_controllers: tuple[str, ...] = ()
    missing: dict[str, str] = field(default_factory=dict)
    devices: tuple[str, ...] = ()
    """The block devices (``major:minor``, whole disks) backing the mounts: what the io
    controller limits."""
    home: dict[str, Path] = field(default_factory=dict)
    """Where each controller's bot groups are made when it is not ``<mount>/ct-referee`` (a
    root referee's): the subtree delegated to a referee that is not root, its controllers
    already enabled there (:func:`referee.bots.delegation.delegated_layout`)."""
    fixes: dict[str, str] = field(default_factory=dict)
    """For a controller of :attr:`missing`, what to run to have it (when it is not the
    machine's own matter)."""

    def where(self, controller: str) -> str | None:
        """``v1``, ``v2`` or ``None`` for ``controller``."""
        if controller in self.v1:
            return "v1"
        if controller in self.v2_controllers:
            return "v2"
        return None

    def parent(self, controller: str) -> Path:
        """The folder a bot's group of ``controller`` is made in.

        :raises KeyError: for a controller not limited here.
        """
        if controller in self.home:
            return self.home[controller]
        mount = self.v1.get(controller) or (self.v2 if controller in self.v2_controllers
                                            else None)
        if mount is None:
            raise KeyError(controller)
        return mount / PARENT


def find_layout(mountinfo: str | None = None) -> CgroupLayout:
    """Read ``/proc/self/mountinfo`` and report where memory, pids and cpu can be limited."""
    if mountinfo is None:
        try:
            mountinfo = Path("/proc/self/mountinfo").read_text()
        except OSError:
            mountinfo = ""
    v1: dict[str, Path] = {}
    v2: Path | None = None
    for line in mountinfo.splitlines():
        left, _, right = line.partition(" - ")
        parts, fs = left.split(), right.split()
        if len(parts) < 5 or len(fs) < 3:
            continue
        if fs[0] == "cgroup":
            for opt in fs[2].split(","):
                if opt in CONTROLLERS:
                    v1.setdefault(opt, Path(parts[4]))
                elif opt == "blkio":
                    v1.setdefault(IO, Path(parts[4]))
        elif fs[0] == "cgroup2":
            v2 = Path(parts[4])
    v2_ctrls: tuple[str, ...] = ()
    if v2 is not None:
        with contextlib.suppress(OSError):
            offered = (v2 / "cgroup.controllers").read_text().split()
            v2_ctrls = tuple(c for c in (*CONTROLLERS, IO) if c in offered and c not in v1)
    missing = {}
    for c in CONTROLLERS:
        if c not in v1 and c not in v2_ctrls:
            missing[c] = (f"no cgroup v1 hierarchy with {c} and the v2 hierarchy "
                          f"({v2 or 'not mounted'}) does not offer it: mount one "
                          f"(mount -t cgroup2 none /sys/fs/cgroup) or enable it in the kernel")
    if IO not in v1 and IO not in v2_ctrls:
        missing[IO] = ("no cgroup v1 blkio hierarchy and the v2 hierarchy does not offer io: "
                       "a bot's disk reads are not limited")
    return CgroupLayout(v1=v1, v2=v2, v2_controllers=v2_ctrls, missing=missing,
                        devices=block_devices(mountinfo))


def block_devices(mountinfo: str, sys_block: Path = Path("/sys/dev/block")) -> tuple[str, ...]:
    """The whole disks (``major:minor``) backing the mounts of ``mountinfo`` (a partition
    counts as its disk: the io controller limits disks; a file system without a block device,
    tmpfs or proc, counts as none)."""
    found: set[str] = set()
    for line in mountinfo.splitlines():
        parts = line.split()
        if len(parts) < 3 or not re.fullmatch(r"\d+:\d+", parts[2]):
            continue
        dev = sys_block / parts[2]
        with contextlib.suppress(OSError):
            if not dev.exists():
                continue
            if (dev / "partition").exists():
                found.add((dev.resolve().parent / "dev").read_text().strip())
            else:
                found.add(parts[2])
    return tuple(sorted(found, key=lambda d: tuple(int(n) for n in d.split(":"))))


def _write(path: Path, value: str) -> None:
    with open(path, "w") as f:
        f.write(value)


def _v2_enable(root: Path, controllers: tuple[str, ...]) -> None:
    """Enable ``controllers`` for children of ``root`` and of ``root/ct-referee``."""
    parent = root / PARENT
    parent.mkdir(mode=0o755, exist_ok=True)
    want = " ".join(f"+{c}" for c in controllers)
    for where in (root, parent):
        enabled = (where / "cgroup.subtree_control").read_text().split()
        if any(c not in enabled for c in controllers):
            _write(where / "cgroup.subtree_control", want)


class Cgroup:
    """One bot's cgroup: created with limits, a pid attached, then killed and removed."""

    def __init__(self, name: str, layout: CgroupLayout) -> None:
        self.name = name
        self.layout = layout
        self.dirs: dict[str, Path] = {}  # controller -> its directory
        self._weight: int | None = None  # the open cpu.shares / cpu.weight (on_move)
        self._weights = (b"", b"")  # what to write there: on move, not on move
        self._moving: bool | None = None
        self.io_devices: tuple[str, ...] = ()  # the disks its io limits hold on

    @classmethod
    def create(cls, name: str, *, memory_mb: int, pids: int, cpu_cores: float,
               layout: CgroupLayout | None = None, io_bps: int | None = None,
               io_iops: int | None = None) -> Cgroup:
        """Create the directories and write the limits (0: no limit for that one); the disk's
        (``io_bps``, ``io_iops``; default :data:`IO_READ_BPS`, :data:`IO_READ_IOPS`) where an
        io controller is present, best-effort.

        :raises OSError: when a directory or a memory, pids or cpu limit cannot be written.
        """
        group = cls(name, layout or find_layout())
        try:
            group._make()
            group._limit(memory_mb, pids, cpu_cores)
        except OSError:
            group.remove()
            raise
        group._limit_io(IO_READ_BPS if io_bps is None else io_bps,
                        IO_READ_IOPS if io_iops is None else io_iops)
        return group

    def _make(self) -> None:
        lay = self.layout
        if lay.v2_controllers and lay.v2 is not None:
            if not lay.home:  # a root referee's: a delegated subtree has them enabled
                _v2_enable(lay.v2, lay.v2_controllers)
            path = lay.parent(lay.v2_controllers[0]) / self.name
            path.mkdir(mode=0o755)
            for c in lay.v2_controllers:
                self.dirs[c] = path
        for c in lay.v1:
            if c == IO and not lay.devices:
                continue
            path = lay.parent(c) / self.name
            if path not in self.dirs.values():
                if c not in lay.home:  # a delegated home exists, made by root
                    path.parent.mkdir(mode=0o755, exist_ok=True)
                path.mkdir(mode=0o755)
            self.dirs[c] = path

    def version(self, controller: str) -> str | None:
        """``v1``, ``v2`` or ``None`` (not limited) for ``controller``."""
        return self.layout.where(controller) if controller in self.dirs else None

    def _limit(self, memory_mb: int, pids: int, cpu_cores: float) -> None:
        if memory_mb > 0 and "memory" in self.dirs:
            d, limit = self.dirs["memory"], str(memory_mb << 20)
            if self.version("memory") == "v1":
                _write(d / "memory.limit_in_bytes", limit)
                if (d / "memory.memsw.limit_in_bytes").exists():  # no escape into swap
                    _write(d / "memory.memsw.limit_in_bytes", limit)
            else:
                _write(d / "memory.max", limit)
                if (d / "memory.swap.max").exists():
                    _write(d / "memory.swap.max", "0")
        if pids > 0 and "pids" in self.dirs:
            _write(self.dirs["pids"] / "pids.max", str(pids))
        if cpu_cores > 0 and "cpu" in self.dirs:
            d, quota = self.dirs["cpu"], int(cpu_cores * CFS_PERIOD_US)
            if self.version("cpu") == "v1":
                _write(d / "cpu.cfs_period_us", str(CFS_PERIOD_US))
                _write(d / "cpu.cfs_quota_us", str(quota))
            else:
                _write(d / "cpu.max", f"{quota} {CFS_PERIOD_US}")
        if "cpu" in self.dirs:  # the weight (on_move), held open: as a limit, it must work
            v1 = self.version("cpu") == "v1"
            weight = self.dirs["cpu"] / ("cpu.shares" if v1 else "cpu.weight")
            _write(weight, str(ON_MOVE[v1]))  # as it starts: on move
            self._weight = os.open(weight, os.O_WRONLY | os.O_CLOEXEC)
            self._weights = (str(ON_MOVE[v1]).encode(), str(OFF_MOVE[v1]).encode())

    def _limit_io(self, bps: int, iops: int) -> None:
        """Limit reads and writes on every disk of the layout to ``bps`` bytes and ``iops``
        requests a second (0: not limited); a controller that takes no device is dropped
        (``io_limited`` then says so)."""
        d = self.dirs.get(IO)
        if d is None:
            return
        limited = []
        for dev in self.layout.devices:
            try:
                if self.version(IO) == "v1":
                    for what, value in (("bps", bps), ("iops", iops)):
                        for way in ("read", "write"):
                            if value > 0:
                                _write(d / f"blkio.throttle.{way}_{what}_device", f"{dev} {value}")
                else:
                    words = [f"{k}={v}" for k, v in (("rbps", bps), ("wbps", bps),
                                                     ("riops", iops), ("wiops", iops)) if v > 0]
                    if words:
                        _write(d / "io.max", f"{dev} {' '.join(words)}")
            except OSError:
                continue
            limited.append(dev)
        self.io_devices = tuple(limited)
        if not limited or not (bps or iops):
            self.io_devices = ()
            if d not in (p for c, p in self.dirs.items() if c != IO):
                with contextlib.suppress(OSError):
                    d.rmdir()
            del self.dirs[IO]

    def on_move(self, moving: bool) -> None:
        """The group's CPU weight: the default while its bot is on move (or starting), the
        least there is while it is not (:data:`OFF_MOVE`): under contention (its opponents
        sharing a CPU with it, a busy machine) a bot not on move gets only the CPU no bot on
        move wants, so computing between its turns (pondering, or burning CPU on purpose)
        takes nothing from the bot whose clock runs. A write of a few bytes (about 1 µs);
        nothing without a cpu controller, or once the group is gone."""
        if moving is self._moving or self._weight is None:
            return
        with contextlib.suppress(OSError):  # removed meanwhile: nothing left to weigh
            os.pwrite(self._weight, self._weights[0 if moving else 1], 0)
        self._moving = moving

    def attach(self, pid: int) -> None:
        """Move process ``pid`` (all its threads) into every directory."""
        for path in sorted(set(self.dirs.values())):
            _write(path / "cgroup.procs", str(pid))

    def pids(self) -> list[int]:
        """The processes in the group (read from every directory)."""
        found: set[int] = set()
        for path in set(self.dirs.values()):
            with contextlib.suppress(OSError):
                found.update(int(p) for p in (path / "cgroup.procs").read_text().split())
        return sorted(found)

    def oom_kills(self) -> int:
        """How many processes the memory limit killed (v1 ``memory.oom_control``, v2
        ``memory.events``: the ``oom_kill`` line); 0 without a memory controller."""
        d = self.dirs.get("memory")
        if d is None:
            return 0
        name = "memory.oom_control" if self.version("memory") == "v1" else "memory.events"
        try:
            text = (d / name).read_text()
        except OSError:
            return 0
        for line in text.splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill":
                return int(value)
        return 0

    def forks_refused(self) -> int:
        """How many times the process limit refused a fork (``pids.events``: the ``max``
        line, v1 and v2); 0 without a pids controller."""
        d = self.dirs.get("pids")
        try:
            text = (d / "pids.events").read_text() if d is not None else ""
        except OSError:
            return 0
        for line in text.splitlines():
            key, _, value = line.partition(" ")
            if key == "max" and value.strip().isdigit():
                return int(value)
        return 0

    def kill_all(self, timeout: float = 5.0) -> bool:
        """SIGKILL every process in the group until it is empty (v2: ``cgroup.kill``);
        whether it emptied within ``timeout`` seconds."""
        for path in set(self.dirs.values()):
            if self.layout.v2 is not None and path.is_relative_to(self.layout.v2):
                with contextlib.suppress(OSError):
                    _write(path / "cgroup.kill", "1")
        deadline = time.monotonic() + timeout
        while True:
            left = self.pids()
            if not left:
                return True
            if time.monotonic() > deadline:
                return False
            for pid in left:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.005)

    def remove(self) -> None:
        """Remove the directories (after :meth:`kill_all`); missing ones are fine."""
        if self._weight is not None:
            os.close(self._weight)
            self._weight = None
        for path in set(self.dirs.values()):
            for _ in range(100):  # rmdir fails with EBUSY until the last task is reaped
                try:
                    path.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError as e:
                    if e.errno != errno.EBUSY:
                        break
                    time.sleep(0.01)
        self.dirs.clear()
