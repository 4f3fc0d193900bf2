"""What a bot may use, as plain data: the sandbox mode asked for (:class:`SandboxMode`), the clock
and resources of every bot of a match (:class:`Limits`) and the rlimits of an unsandboxed bot
process (:class:`Rlimits`). No probing here, and nothing of the sandbox: it imports these
(:meth:`referee.bots.policy.SandboxPolicy.of`), and what the machine can do is worked out where
the bots start (:class:`referee.bots.process.Launcher`).

>>> SandboxMode.parse("auto"), SandboxMode.AUTO.strict(), SandboxMode.NONE.strict()
(<SandboxMode.AUTO: 'auto'>, <SandboxMode.BWRAP: 'bwrap'>, <SandboxMode.NONE: 'none'>)
>>> Limits(memory_mb=256).rlimits()
Rlimits(memory_mb=256, file_mb=64)
"""

from __future__ import annotations

import resource
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

__all__ = ["GATE", "Limits", "Rlimits", "SandboxMode"]

GATE = 'IFS= read -r _ || exit 111; exec "$@"'
"""The launcher: waits for one line on stdin (a sandboxed bot's cgroup is ready, an
unsandboxed bot's rlimits are set), then execs the rest."""


class SandboxMode(StrEnum):
    """Where bots run: in the hardened sandbox (``bwrap``), without it (``none``), or in it where
    it works (``auto``: a single match or a check falls back to none with a warning, a
    tournament refuses to; see :meth:`strict`)."""

    AUTO = "auto"
    BWRAP = "bwrap"
    NONE = "none"

    @classmethod
    def parse(cls, value: object) -> SandboxMode:
        """The mode named ``value``.

        :raises ValueError: for any other value, saying which are known.
        """
        for member in cls:
            if value == member.value:
                return member
        raise ValueError(f"unknown sandbox mode: {value!r} (use auto, bwrap or none)")

    def strict(self) -> SandboxMode:
        """This mode with ``auto`` taken as ``bwrap``: a tournament never falls back to running
        its bots unsandboxed without being told to."""
        return SandboxMode.NONE if self is SandboxMode.NONE else SandboxMode.BWRAP


_GATE = ["/bin/sh", "-c", GATE, "ct-referee-gate"]
"""Waits for one line on stdin, then execs its arguments: holds the child while its limits are
set by pid. A shell reads a pipe a byte at a time, so the bot's input starts after that line."""


@dataclass(frozen=True)
class Rlimits:
    """Resource limits of a bot process (and of everything it starts): no core files, files up
    to ``file_mb`` MiB, a data size (heap and private writable mappings, ``RLIMIT_DATA``) of
    ``memory_mb`` MiB (0: unlimited). Not the address space: Java and Node reserve far more
    of it than they use."""

    memory_mb: int = 0
    file_mb: int = 64

    def pairs(self) -> list[tuple[int, int]]:
        """``(resource, bytes)`` for each limit set."""
        limits = [(resource.RLIMIT_CORE, 0)]
        if self.file_mb > 0:
            limits.append((resource.RLIMIT_FSIZE, self.file_mb << 20))
        if self.memory_mb > 0:
            limits.append((resource.RLIMIT_DATA, self.memory_mb << 20))
        return limits

    def wrap(self, argv: Sequence[str], *, prlimit: str | None) -> tuple[list[str], bool]:
        """The command line that runs ``argv`` under these limits: behind the ``prlimit``
        wrapper (path given) or else the gate; and whether it is the gate, which
        :meth:`apply` must then release."""
        if prlimit:
            names = {resource.RLIMIT_CORE: "core", resource.RLIMIT_FSIZE: "fsize",
                     resource.RLIMIT_DATA: "data"}
            return [prlimit, *(f"--{names[k]}={v}" for k, v in self.pairs()), "--", *argv], False
        return [*_GATE, *argv], True

    def apply(self, pid: int) -> None:
        """Set the limits on the running process ``pid`` (held at the gate)."""
        for key, value in self.pairs():
            resource.prlimit(pid, key, (value, value))


@dataclass(frozen=True)
class Limits:
    """Clock and resource limits for every bot of a match."""

    startup_ms: int = 10_000
    """Until the bot's ``ready``."""
    move_ms: int = 1_000
    """Per answer."""
    bank_ms: int = 0
    """Extra time per match, drawn on by answers that run past ``move_ms``."""
    memory_mb: int = 512
    """Memory per bot in MiB, ``/tmp`` and ``/dev/shm`` included where a memory cgroup counts
    them (else the data size of each process, ``RLIMIT_DATA``); 0: none."""
    pids: int = 64
    """Processes and threads per sandboxed bot (0: no limit)."""
    cpus: float = 1.0
    """CPU cores per sandboxed bot (0: no limit)."""
    tmp_mb: int = 64
    """Size of a sandboxed bot's private ``/tmp`` and of its ``/dev/shm``, in MiB each."""
    file_mb: int = 64
    """Largest file a bot may write, in MiB (0: no limit)."""
    stderr_cap: int = 1 << 20
    """Bytes of each bot's stderr kept."""

    def rlimits(self) -> Rlimits:
        """The rlimits of an unsandboxed bot under these limits."""
        return Rlimits(self.memory_mb, self.file_mb)
