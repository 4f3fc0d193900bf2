"""What a sandboxed bot may use (:class:`SandboxPolicy`, plain data), how it drops its
privileges (:class:`Privilege`), and the sandbox's constants (docs/security.md)."""

from __future__ import annotations

import enum
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from referee.bots.limits import Limits

KERNEL_FOLDERS = (Path("/proc"), Path("/sys"), Path("/dev"))
"""The kernel's own file systems, which the sandbox mounts afresh: a folder in one that a
command names is bound as it is (no overlay stacks on them, no symlink fits beside them)."""
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
PROC_HIDDEN = ("sys/fs", "sys/vm", "pressure", "fs")
"""Folders of ``/proc`` shown empty: host-wide counters (dentries, inodes, files, memory
pressure) that one sandbox's activity moves and another could read."""
SANDBOX_UID = 1000
"""The uid (and gid) the bot sees inside in ``userns`` mode."""
BASE_PATH = "/usr/local/bin:/usr/bin:/bin"
BOT_UIDS = range(64000, 65000)
"""Host uids a root referee runs its bots as, each bot a uid of its own (leased from one
allocator per host, :mod:`referee.bots.uids`, for every referee and worker process): the
kernel counts some resources per uid across
namespaces (pipe buffers against ``fs.pipe-user-pages-soft``, processes against
``RLIMIT_NPROC``, pending signals, message-queue bytes), and a bot that lowers its own limit
and probes it would read what other bots of the same uid hold: a channel between sandboxes."""


class Privilege(enum.StrEnum):
    """How a sandboxed bot drops its privileges (:class:`SandboxPolicy` ``mode``); each value is
    the word a policy is written with."""

    AUTO = "auto"
    """``setpriv`` for a root referee whose bots' folders a bot's uid cannot reach (or without
    user namespaces), else ``userns``; a referee that is not root with subordinate uids
    runs its bots as ``subuid``."""
    USERNS = "userns"
    SETPRIV = "setpriv"
    SUBUID = "subuid"

    @classmethod
    def parse(cls, value: str) -> Privilege:
        """The mode called ``value``.

        :raises SandboxError: for an unknown mode.
        """
        try:
            return cls(value)
        except ValueError:
            raise SandboxError(f"unknown sandbox mode {value!r} "
                               f"(use {', '.join(m.value for m in cls)})") from None



class SandboxError(ValueError):
    """A bot that cannot be sandboxed as asked; the message is one line."""


@dataclass(frozen=True)
class SandboxPolicy:
    """What a sandboxed bot may use: plain data (a runner can send it to another process).

    Sizes in MiB, ``cpus`` in cores; 0 means no limit (``tmp_mb``: the tmpfs default). The
    memory limit counts what the bot keeps in ``/tmp`` and ``/dev/shm`` where a memory cgroup
    exists. ``uid``/``gid``: the host ids the bot runs as when the referee is root (``uid``
    only where :func:`build_argv` is called without one: :func:`prepare` gives each bot a uid
    of its own from :data:`BOT_UIDS`).
    """

    memory_mb: int = 512
    pids: int = 64
    cpus: float = 1.0
    tmp_mb: int = 64
    file_mb: int = 64
    mode: Privilege = Privilege.AUTO
    """How the bot drops its privileges (a string is parsed: :meth:`Privilege.parse`)."""
    uid: int = 65534
    gid: int = 65534
    seccomp: bool = True
    cgroups: bool = True
    env: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.mode, Privilege):
            object.__setattr__(self, "mode", Privilege.parse(self.mode))

    @classmethod
    def of(cls, limits: Limits) -> SandboxPolicy:
        """The policy of a sandboxed bot under ``limits``."""
        return cls(memory_mb=limits.memory_mb, pids=limits.pids, cpus=limits.cpus,
                   tmp_mb=limits.tmp_mb, file_mb=limits.file_mb)


def _run(argv: Sequence[str], **kw: object) -> subprocess.CompletedProcess[str]:
    kw = {"env": {"PATH": BASE_PATH}, "cwd": "/", **kw}
    try:
        done: subprocess.CompletedProcess[str] = subprocess.run(  # type: ignore[call-overload]
            list(argv), capture_output=True, text=True, timeout=10, check=False, **kw)
        return done
    except (OSError, subprocess.SubprocessError) as err:
        return subprocess.CompletedProcess(list(argv), 127, "", str(err))
