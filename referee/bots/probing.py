"""What this machine's sandbox can do: bubblewrap, user namespaces, seccomp, setpriv,
subordinate uids and the cgroup controllers, each with how to enable it
(:func:`capabilities`, probed once per process; ``ct-referee sandbox`` shows it)."""

from __future__ import annotations

import contextlib
import functools
import os
import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from referee.bots.cgroups import IO, IO_READ_BPS, IO_READ_IOPS, CgroupLayout, find_layout
from referee.bots.delegation import NO_CONTROLLER, delegated_layout, weaker_limits
from referee.bots.policy import BASE_PATH, BOT_UIDS, SANDBOX_UID, _run
from referee.bots.resolve import which
from referee.bots.seccomp import native_arch, seccomp_filter
from referee.bots.subids import SubIds, mine, user_namespace
from referee.bots.uids import allocate


@dataclass(frozen=True)
class Check:
    """One protection of this machine: whether it works, what it is, how to enable it."""

    name: str
    ok: bool
    detail: str
    enable: str = ""


@dataclass(frozen=True)
class Capabilities:
    """What this machine supports (see :func:`capabilities`)."""

    checks: tuple[Check, ...]
    layout: CgroupLayout
    root: bool

    def ok(self, name: str) -> bool:
        """Whether the check ``name`` passed."""
        return any(c.ok for c in self.checks if c.name == name)

    @property
    def works(self) -> bool:
        """Whether a sandbox can be built here at all (in some mode)."""
        userns = self.ok("userns") and self.ok("disable-userns")
        return self.ok("bwrap") and (userns or self.ok("setpriv"))

    def cgroup_ok(self, controller: str) -> bool:
        """Whether a cgroup ``controller`` can be used."""
        return self.ok(f"cgroup {controller}")

    def weaker(self) -> tuple[str, ...]:
        """The bot limits weaker here than a cgroup's, a line each, and a last line saying
        what to run to fix them; none where every limit holds
        (:func:`referee.bots.delegation.weaker_limits`)."""
        return weaker_limits(self.layout)

    def summary(self) -> str:
        """One line: the protections in force, and what is missing."""
        if not self.works:
            return "no sandbox (" + "; ".join(
                f"{c.name}: {c.detail}" for c in self.checks[:4] if not c.ok) + ")"
        on = ["bwrap", "seccomp" if self.ok("seccomp") else "", *(
            f"cgroup {c}" for c in ("memory", "pids", "cpu") if self.cgroup_ok(c))]
        limits = [f"rlimit {r}" for c, r in (("memory", "data"), ("pids", "nproc"))
                  if not self.cgroup_ok(c)]
        if not self.cgroup_ok("cpu"):
            limits.append("no cpu limit")
        on.append("files in memory")
        return ", ".join(x for x in [*on, *limits] if x)


def probe_capabilities(uid: int = 65534, gid: int = 65534) -> Capabilities:
    """Probe bwrap (version, user namespaces, ``--disable-userns``), seccomp, setpriv and the
    cgroup controllers, each with what it is and how to enable it."""
    root = os.geteuid() == 0
    bwrap = shutil.which("bwrap", path=BASE_PATH)
    version = _run([bwrap, "--version"]).stdout.strip() if bwrap else ""
    nums = tuple(int(n) for n in re.findall(r"\d+", version)[:3])
    checks = [Check("bwrap", bool(bwrap) and nums >= (0, 8, 0), version or "bwrap not found",
                    "apt-get install bubblewrap (0.8.0 or later, for --disable-userns)")]
    user: dict[str, object] = {"user": uid, "group": gid, "extra_groups": []} if root else {}
    base = ["--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin",
            "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64"]
    for name, extra, enable in (
            ("userns", [], "sysctl kernel.unprivileged_userns_clone=1 and "
                           "user.max_user_namespaces>0; on Ubuntu also "
                           "kernel.apparmor_restrict_unprivileged_userns=0"),
            ("disable-userns", ["--disable-userns"], "bubblewrap 0.8.0 or later")):
        done = _run([bwrap, "--unshare-all", "--unshare-user", *extra, *base, "--", "true"],
                    **user) if bwrap else None
        ok = done is not None and done.returncode == 0
        detail = "works" if ok else (done.stderr.strip().splitlines() or ["fails"])[-1] \
            if done else "bwrap missing"
        checks.append(Check(name, ok, detail, enable))
    sec = Check("seccomp", False, "no Seccomp line in /proc/self/status",
                "a kernel with CONFIG_SECCOMP_FILTER")
    with contextlib.suppress(OSError, ValueError):
        seccomp_filter()
        if "Seccomp:" in Path("/proc/self/status").read_text():
            sec = Check("seccomp", True, f"filter for {native_arch()}")
    checks.append(sec)
    setpriv = shutil.which("setpriv", path=BASE_PATH)
    checks.append(Check("setpriv", bool(setpriv) and root,
                        (setpriv or "setpriv not found") if root else "the referee is not root",
                        "apt-get install util-linux" if root else "run the referee as root"))
    if not root:
        checks.append(_probe_subuid(bwrap, base))
    layout = find_layout() if root else delegated_layout(find_layout())  # its own subtree
    for c in ("memory", "pids", "cpu"):
        where = layout.where(c)
        if where is None:
            checks.append(Check(f"cgroup {c}", False, layout.missing[c],
                                layout.fixes.get(c, NO_CONTROLLER)))
        else:
            at = f"{layout.home[c]} (delegated)" if c in layout.home else \
                layout.v1[c] if where == "v1" else layout.v2
            checks.append(Check(f"cgroup {c}", True, f"{where} at {at}"))
    checks.append(io_check(layout, root, any(c.ok for c in checks if c.name in
                                             ("cgroup memory", "cgroup pids", "cgroup cpu"))))
    return Capabilities(tuple(checks), layout, root)


def io_check(layout: CgroupLayout, root: bool, cgroups: bool = True) -> Check:
    """Whether each bot's disk reads and writes are limited here (:data:`~referee.bots.cgroups.
    IO_READ_BPS`, :data:`~referee.bots.cgroups.IO_READ_IOPS` on every disk backing a mount:
    v1 ``blkio``, v2 ``io``): never required, so a missing controller only says so.
    ``cgroups``: whether a bot gets a cgroup at all (one of memory, pids, cpu works). A
    referee that is not root has it where its user was delegated the controller
    (:attr:`CgroupLayout.home`).

    >>> from pathlib import Path
    >>> io_check(CgroupLayout(v1={"io": Path("/sys/fs/cgroup/blkio")}, devices=("254:0",)),
    ...          True).detail
    'v1 (blkio) at /sys/fs/cgroup/blkio: 64 MiB/s and 400 requests/s a bot, on disk 254:0'
    >>> io_check(CgroupLayout(missing={"io": "no io controller"}), True).ok
    False
    """
    where = layout.where(IO)
    if where is None:
        return Check(f"cgroup {IO}", False, layout.missing.get(IO, "no io controller"),
                     layout.fixes.get(IO, "mount the v1 blkio hierarchy, or let the v2 "
                                      "hierarchy offer io (optional: the disk limit is "
                                      "best-effort)"))
    name = "v1 (blkio)" if where == "v1" else "v2"
    if not root and IO not in layout.home:
        return Check(f"cgroup {IO}", False, f"{name} present, the referee is not root: a "
                     f"bot's disk reads are not limited", "run as root")
    mount = layout.home.get(IO) or (layout.v1[IO] if where == "v1" else layout.v2)
    if not layout.devices:
        return Check(f"cgroup {IO}", False, f"{name} at {mount}, but no disk backs a mount: "
                     f"nothing to limit")
    if not cgroups:
        return Check(f"cgroup {IO}", False, f"{name} at {mount}, but a bot gets no cgroup "
                     f"here (no memory, pids or cpu controller)",
                     "mount cgroup2 (or the v1 controllers) on /sys/fs/cgroup")
    disks = ("disks " if len(layout.devices) > 1 else "disk ") + ", ".join(layout.devices)
    return Check(f"cgroup {IO}", True, f"{name} at {mount}: {IO_READ_BPS >> 20} MiB/s and "
                 f"{IO_READ_IOPS} requests/s a bot, on {disks}")


def subordinate_ids() -> SubIds | str:
    """The organiser's subordinate ids its bots may use (never one of :data:`BOT_UIDS`, a root
    referee's), or why there are none, with the fix (:func:`referee.bots.subids.find`)."""
    return mine(BOT_UIDS)


def _probe_subuid(bwrap: str | None, base: Sequence[str]) -> Check:
    """Whether a bot can run as a subordinate uid: a range, the helpers, and bwrap joining
    the mapped namespace (tried once, on a leased uid)."""
    ids = subordinate_ids()
    if isinstance(ids, str):
        why, _, enable = ids.partition(": ")
        return Check("subuid", False, why, enable)
    if bwrap is None:
        return Check("subuid", False, "bwrap missing", "apt-get install bubblewrap")
    lease = None
    try:
        lease = allocate(ids.uids)
        fd = user_namespace(lease.uid, ids.gid(lease.uid), SANDBOX_UID)
        try:
            done = _run([bwrap, *_subuid_bwrap(fd), *base, "--", *_subuid_setpriv(), "true"],
                        pass_fds=(fd,))
        finally:
            os.close(fd)
    except OSError as err:
        return Check("subuid", False, str(err), "apt-get install uidmap; see docs/security.md")
    finally:
        if lease is not None:
            lease.release()
    if done.returncode != 0:
        return Check("subuid", False, (done.stderr.strip().splitlines() or ["fails"])[-1],
                     "bubblewrap 0.8.0 or later (--userns)")
    return Check("subuid", True, f"{ids.describe()} ({ids.user}'s subordinate uids)")


@functools.cache
def capabilities() -> Capabilities:
    """:func:`probe_capabilities`, once per process (it runs bwrap twice)."""
    return probe_capabilities()


def _subuid_bwrap(userns: int) -> list[str]:
    """bwrap's options in mode ``subuid``: join the mapped namespace ``userns`` as uid 0 in it
    (the organiser: the bind sources are resolved with its access), keeping only the
    capabilities :func:`_subuid_setpriv` needs."""
    return ["--userns", str(userns), "--unshare-ipc", "--unshare-pid", "--unshare-net",
            "--unshare-uts", "--unshare-cgroup-try", "--cap-drop", "ALL",
            *(a for c in ("SETUID", "SETGID", "SETPCAP") for a in ("--cap-add", f"CAP_{c}")),
            "--uid", "0", "--gid", "0"]


def _subuid_setpriv() -> list[str]:
    """What runs first inside in mode ``subuid``: become the bot's uid and gid, drop the
    organiser's supplementary groups (which bwrap keeps) and every capability, no-new-privs."""
    return [which("setpriv", BASE_PATH) or "setpriv", f"--reuid={SANDBOX_UID}",
            f"--regid={SANDBOX_UID}", "--clear-groups", "--inh-caps=-all", "--ambient-caps=-all",
            "--bounding-set=-all", "--no-new-privs", "--"]
