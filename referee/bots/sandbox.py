"""The hardened bot sandbox: :func:`prepare` builds a bot's launch (its uid, cgroup, rlimits and
the gated bubblewrap command line). A bot runs as an unprivileged uid of its own without
capabilities, sees its runtime and its own folder from memory (read-only), a bounded private
``/tmp`` and ``/dev/shm``, its own ``/proc``, no network and a cleared environment, under a
seccomp filter and a cgroup (or rlimits).

The parts: :mod:`~referee.bots.policy` (what a bot may use, the privilege modes),
:mod:`~referee.bots.probing` (what this machine can do), :mod:`~referee.bots.resolve` (what
a command is and may be shown), :mod:`~referee.bots.command` (the bwrap command line). Why
each protection, and what remains: docs/security.md.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from referee.bots.cgroups import Cgroup
from referee.bots.command import build_argv
from referee.bots.limits import GATE
from referee.bots.policy import BASE_PATH, BOT_UIDS, Privilege, SandboxError, SandboxPolicy
from referee.bots.probing import Capabilities, capabilities, subordinate_ids
from referee.bots.resolve import Binds, which
from referee.bots.subids import SubIds
from referee.bots.uids import Lease, allocate, namespace_inode

__all__ = ["Launch", "prepare"]


# -- launching ----------------------------------------------------------------------------------

@dataclass
class Launch:
    """Everything :func:`referee.bots.process.start_process` needs to start a sandboxed bot: the
    launcher's command line (gate, prlimit, bwrap), how to run it, the cgroup to put it in,
    and the protections in force."""

    argv: list[str]
    pass_fds: tuple[int, ...]
    user: int | None
    group: int | None
    cgroup: Cgroup | None
    active: list[str]
    cleanup: Callable[[], None]
    lease: Lease | None = None
    """The bot's uid, held until the bot has stopped (:mod:`referee.bots.uids`)."""

    def popen_kwargs(self) -> dict[str, object]:
        """Keyword arguments of ``subprocess.Popen`` for the launcher."""
        ids: dict[str, object] = ({"user": self.user, "group": self.group, "extra_groups": []}
                                  if self.user is not None else {})
        return {"pass_fds": self.pass_fds, "cwd": "/", "env": {"PATH": BASE_PATH}, **ids}

    def attach(self, pid: int) -> None:
        """Put the launcher (held at the gate) into the bot's cgroup."""
        if self.cgroup is not None:
            self.cgroup.attach(pid)

    def discard(self) -> None:
        """Remove the cgroup of a launch that did not start, and give its uid back."""
        if self.cgroup is not None:
            self.cgroup.remove()
            self.cgroup = None
        if self.lease is not None:
            self.lease.release()


def prepare(argv: Sequence[str], workdir: Path, *, policy: SandboxPolicy,
            hidden: Sequence[Path] = (), caps: Capabilities | None = None,
            binds: Binds | None = None, sources: Mapping[Path, Path] | None = None) -> Launch:
    """Build the launch of ``argv`` in ``workdir``: its cgroup (made now, with its limits),
    the rlimits the cgroups do not cover, and the gated command line.

    Each bot gets a host uid of its own, leased host-wide (no per-uid counter shared by two
    bots): one of :data:`BOT_UIDS` from a root referee, else one of the organiser's
    subordinate uids where it has them (mode ``auto`` or ``subuid``).

    :raises SandboxError: see :func:`build_argv`. :raises OSError: if the cgroup cannot be made.
    """
    caps = caps or capabilities()
    # a referee that is not root has the controllers of its delegated subtree (caps.layout)
    have = {c for c in ("memory", "pids", "cpu") if policy.cgroups and caps.cgroup_ok(c)}
    uid, lease = policy.uid, None
    ids = subordinate_ids() if not caps.root and caps.ok("subuid") and \
        policy.mode in (Privilege.AUTO, Privilege.SUBUID) else None
    if caps.root:
        lease = allocate(BOT_UIDS)
        uid = lease.uid
    elif isinstance(ids, SubIds):
        lease = allocate(ids.uids)
        uid = lease.uid
        policy = dataclasses.replace(policy, mode=Privilege.SUBUID, gid=ids.gid(uid))
    limits, active_limits = _rlimits(policy, have)
    prlimit = which("prlimit", BASE_PATH)
    if prlimit is None:
        if lease is not None:
            lease.release()
        raise SandboxError("prlimit (util-linux) is missing: it sets the bot's rlimits")
    wrap = [prlimit, *(f"--{k}={v}" for k, v in limits.items()), "--"]
    inside = policy.mode is Privilege.SUBUID  # counted for the bot's uid, not the organiser's
    try:
        spec = build_argv(argv, workdir, policy=policy, caps=caps, hidden=hidden, uid=uid,
                          binds=binds, sources=sources, limits=wrap if inside else ())
    except BaseException:
        if lease is not None:
            lease.release()
        raise
    if lease is not None and inside:  # only its processes are the bot's to kill on release
        found = [namespace_inode(f"/proc/self/fd/{fd}") for fd in spec.pass_fds]
        lease.namespace = next((ns for ns in found if ns is not None), None)
    active = [f"bwrap {spec.mode}", f"uid {spec.uid}", "no network", "cleared environment"]
    if policy.seccomp and caps.ok("seccomp"):
        active.append("seccomp")
    cgroup = None
    if have:
        try:
            cgroup = Cgroup.create(f"bot-{uuid.uuid4().hex[:12]}", memory_mb=policy.memory_mb,
                                   pids=policy.pids, cpu_cores=policy.cpus, layout=caps.layout)
        except OSError:
            spec.cleanup()
            if lease is not None:
                lease.release()
            raise
        active += [f"cgroup {c} {cgroup.version(c)}" for c in sorted(cgroup.dirs)]
        if set(cgroup.dirs) != have:  # a controller that did not take: its rlimit instead
            limits, active_limits = _rlimits(policy, set(cgroup.dirs))
            wrap = [prlimit, *(f"--{k}={v}" for k, v in limits.items()), "--"]
    active += active_limits
    command = [*([] if inside else wrap), *spec.argv]
    user, group = spec.user, spec.group
    active.append("runtime in memory")
    return Launch(["/bin/sh", "-c", GATE, "ct-referee-gate", *command], spec.pass_fds, user,
                  group, cgroup, active, spec.cleanup, lease)


def _rlimits(policy: SandboxPolicy, have: set[str]) -> tuple[dict[str, int], list[str]]:
    """The rlimits of a bot whose cgroup has the controllers ``have``, and what they add to
    the protections in force."""
    limits = {"core": 0}
    active: list[str] = []
    if policy.file_mb > 0:
        limits["fsize"] = policy.file_mb << 20
    if "memory" not in have and policy.memory_mb > 0:
        limits["data"] = policy.memory_mb << 20  # not "as": Java and Node reserve more
        active.append("rlimit data")
    if "pids" not in have and policy.pids > 0:
        limits["nproc"] = policy.pids
        active.append("rlimit nproc")
    return limits, active
