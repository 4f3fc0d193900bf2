"""A classic-BPF seccomp filter, generated in pure Python, for bubblewrap's ``--seccomp FD``.

It answers ``EPERM`` (never kills) for calls that open side channels between sandboxes (locks,
inotify, every way to evict a page or ask whether one is cached) and for calls no game bot needs;
calls a runtime should fall back from (Linux AIO, ``openat2``, ``O_DIRECT``, socket families but
unix and inet) answer as a kernel without them would. Which calls and why, and what remains:
docs/security.md, "What stops it", "The disk and the kernel surface" and "What remains".
"""

from __future__ import annotations

import errno
import os
import platform
import struct

AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}

# Calls refused outright, by name; numbers per architecture below.
DENIED = (
    "flock", "ptrace", "process_vm_readv", "process_vm_writev", "mount", "umount2",
    "unshare", "setns", "keyctl", "add_key", "request_key", "bpf", "perf_event_open",
    "userfaultfd", "kexec_load", "kexec_file_load", "init_module", "finit_module",
    "delete_module", "reboot", "swapon", "swapoff", "pivot_root", "chroot",
    "io_uring_setup", "io_uring_enter", "io_uring_register", "name_to_handle_at",
    "open_by_handle_at", "inotify_init", "inotify_init1", "inotify_add_watch",
    "fanotify_init", "fanotify_mark", "open_tree", "move_mount", "fsopen", "fsconfig",
    "fsmount", "fspick", "mount_setattr", "acct", "quotactl", "syslog", "vhangup",
    "settimeofday", "adjtimex", "clock_adjtime", "clock_settime", "sethostname",
    "setdomainname", "kcmp", "move_pages", "migrate_pages", "lookup_dcookie", "uselib",
    "iopl", "ioperm",
    # the page cache as memory (a bot marks pages of a file, a later bot reads the marks):
    # evicting (fadvise64's DONTNEED, process_madvise) and asking (mincore, cachestat); and
    # readahead, which only prefetches (as a read does) but no game bot needs. madvise is
    # judged by its advice (MADV_OK), preadv2/pwritev2 by their flags (RWF_NOWAIT)
    "fadvise64", "mincore", "readahead", "cachestat", "process_madvise",
    # the CPUs it may run on (affinity: a match's bots share one; widened, a bot on move
    # would take a share of another match's CPU, whose bots cannot move away)
    "sched_setaffinity",
)
NOT_THERE = (
    # Linux AIO: io_submit with RWF_NOWAIT asks "is it cached?" exactly, and io_setup takes
    # from the host-wide fs.aio-max-nr pool; ENOSYS, as on a kernel without CONFIG_AIO, so
    # a program falls back (glibc's aio_* use threads, not these calls)
    "io_setup", "io_destroy", "io_submit", "io_cancel", "io_getevents", "io_pgetevents",
    # openat2's flags are in a struct seccomp cannot read (O_DIRECT, below): ENOSYS, so
    # that libc falls back to openat, whose flags it can
    "openat2",
)
"""Calls answered ``ENOSYS``: a kernel without them, to which programs fall back."""

SYSCALLS: dict[str, dict[str, int]] = {
    "x86_64": {
        "fcntl": 72, "flock": 73, "clone": 56, "clone3": 435, "personality": 135,
        "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311, "mount": 165,
        "umount2": 166, "unshare": 272, "setns": 308, "keyctl": 250, "add_key": 248,
        "request_key": 249, "bpf": 321, "perf_event_open": 298, "userfaultfd": 323,
        "kexec_load": 246, "kexec_file_load": 320, "init_module": 175, "finit_module": 313,
        "delete_module": 176, "reboot": 169, "swapon": 167, "swapoff": 168,
        "pivot_root": 155, "chroot": 161, "io_uring_setup": 425, "io_uring_enter": 426,
        "io_uring_register": 427, "name_to_handle_at": 303, "open_by_handle_at": 304,
        "inotify_init": 253, "inotify_init1": 294, "inotify_add_watch": 254,
        "fanotify_init": 300, "fanotify_mark": 301, "open_tree": 428, "move_mount": 429,
        "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433, "mount_setattr": 442,
        "acct": 163, "quotactl": 179, "syslog": 103, "vhangup": 153, "settimeofday": 164,
        "adjtimex": 159, "clock_adjtime": 305, "clock_settime": 227, "sethostname": 170,
        "setdomainname": 171, "kcmp": 312, "move_pages": 279, "migrate_pages": 256,
        "lookup_dcookie": 212, "uselib": 134, "iopl": 172, "ioperm": 173,
        "fadvise64": 221, "mincore": 27, "readahead": 187, "cachestat": 451,
        "process_madvise": 440, "madvise": 28, "preadv2": 327, "pwritev2": 328,
        "sched_setaffinity": 203, "io_setup": 206, "io_destroy": 207, "io_getevents": 208,
        "io_submit": 209, "io_cancel": 210, "io_pgetevents": 333, "openat2": 437,
        "open": 2, "openat": 257, "socket": 41, "socketpair": 53,
    },
    "aarch64": {  # asm-generic numbering; no inotify_init, uselib, iopl, ioperm
        "fcntl": 25, "flock": 32, "clone": 220, "clone3": 435, "personality": 92,
        "ptrace": 117, "process_vm_readv": 270, "process_vm_writev": 271, "mount": 40,
        "umount2": 39, "unshare": 97, "setns": 268, "keyctl": 219, "add_key": 217,
        "request_key": 218, "bpf": 280, "perf_event_open": 241, "userfaultfd": 282,
        "kexec_load": 104, "kexec_file_load": 294, "init_module": 105, "finit_module": 273,
        "delete_module": 106, "reboot": 142, "swapon": 224, "swapoff": 225,
        "pivot_root": 41, "chroot": 51, "io_uring_setup": 425, "io_uring_enter": 426,
        "io_uring_register": 427, "name_to_handle_at": 264, "open_by_handle_at": 265,
        "inotify_init1": 26, "inotify_add_watch": 27, "fanotify_init": 262,
        "fanotify_mark": 263, "open_tree": 428, "move_mount": 429, "fsopen": 430,
        "fsconfig": 431, "fsmount": 432, "fspick": 433, "mount_setattr": 442, "acct": 89,
        "quotactl": 60, "syslog": 116, "vhangup": 58, "settimeofday": 170, "adjtimex": 171,
        "clock_adjtime": 266, "clock_settime": 112, "sethostname": 161,
        "setdomainname": 162, "kcmp": 272, "move_pages": 239, "migrate_pages": 238,
        "lookup_dcookie": 18, "fadvise64": 223, "mincore": 232, "readahead": 213,
        "cachestat": 451, "process_madvise": 440, "madvise": 233, "preadv2": 286,
        "pwritev2": 287, "sched_setaffinity": 122, "io_setup": 0, "io_destroy": 1,
        "io_submit": 2, "io_cancel": 3, "io_getevents": 4, "io_pgetevents": 292,
        "openat2": 437, "openat": 56, "socket": 198, "socketpair": 199,
    },
}

# fcntl commands refused: record locks (F_GETLK too: reading a lock leaks), OFD locks,
# leases and directory notification.
F_LOCK_CMDS = (5, 6, 7, 36, 37, 38, 1024, 1025, 1026)
MADV_OK = (0, 1, 2, 3, 4, 8, 10, 11, 14, 15, 16, 17, 18, 19, 22, 23, 25)
"""madvise advice allowed: what allocators, runtimes and JITs use. ``DONTNEED`` and ``FREE``
drop a process's own pages (its mappings), never the page cache. ``WILLNEED`` (3),
``POPULATE_READ`` (22), ``POPULATE_WRITE`` (23) and ``COLLAPSE`` (25) bring pages in: of a
file mapping, into the page cache, which prefetches, harmlessly (no more than reading those
pages does: the module's docstring). Refused: ``REMOVE`` (frees a file's or shared memory's
pages), ``COLD`` and ``PAGEOUT`` (age or evict pages: would clear a mark),
``DONTNEED_LOCKED``, ``MERGEABLE``/``UNMERGEABLE`` (KSM: a timing channel), ``HWPOISON``,
``SOFT_OFFLINE``, the numbers no advice has (5 to 7) and anything newer (26 up)."""
O_DIRECT = {"x86_64": 0o40000, "aarch64": 0o200000}
"""The ``open`` flag that reads the disk without the page cache, by architecture: refused on
``open``, ``openat`` and ``fcntl(F_SETFL)`` (``EINVAL``, as a file system without it
answers). It lets a bot drive the disk at its full rate however warm the cache is (16 threads
of 4 KiB reads raised the host's read latency p90 from 1.6 ms to 36 ms); buffered reads of
cold files remain, bounded per bot by the io controller (:mod:`referee.bots.cgroups`)."""
OPEN_FLAGS_ARG = {"open": 1, "openat": 2}
"""Which argument holds the flags."""
F_SETFL = 4
SOCKET_FAMILIES = (1, 2, 10)
"""``socket``/``socketpair`` families allowed: ``AF_UNIX``, ``AF_INET``, ``AF_INET6`` (the
last two reach only the sandbox's own ``lo``). Any other (``AF_NETLINK``, ``AF_PACKET``,
``AF_VSOCK``, ``AF_ALG``, ...: kernel attack surface, and ``AF_VSOCK`` reaches a
hypervisor's host without any network interface) answers ``EAFNOSUPPORT``, as for a family
the kernel lacks."""
RWF_NOWAIT = 0x8
"""``preadv2``/``pwritev2`` flag that fails instead of waiting: it tells whether a page is
cached, exactly; refused."""
CLONE_NS_FLAGS = 0x7E020080  # NEWNS|NEWCGROUP|NEWUTS|NEWIPC|NEWUSER|NEWPID|NEWNET|NEWTIME
PERSONALITY_OK = (0x0, 0x8, 0xFFFFFFFF)  # PER_LINUX, PER_LINUX32, query
X32_SYSCALL_BIT = 0x40000000

# Classic BPF opcodes and seccomp return values.
LD_ABS_W = 0x20
JEQ_K, JGE_K, JSET_K = 0x15, 0x35, 0x45
RET_K = 0x06
RET_ALLOW = 0x7FFF0000
RET_ERRNO = 0x00050000
OFF_NR, OFF_ARCH = 0, 4


def _arg_lo(index: int) -> int:
    """The offset of the low 32 bits of argument ``index`` in ``struct seccomp_data``."""
    little = struct.pack("=H", 1) == b"\x01\x00"
    return 16 + 8 * index + (0 if little else 4)


def native_arch() -> str:
    """The seccomp architecture name of this machine (``x86_64`` or ``aarch64``)."""
    machine = platform.machine()
    return {"amd64": "x86_64", "arm64": "aarch64"}.get(machine, machine)


class _Program:
    """A classic BPF program being written: instructions whose jumps name labels, resolved to
    offsets by :meth:`assemble`."""

    def __init__(self) -> None:
        # (code, k, jump-if-true label, jump-if-false label); None: fall through.
        self.prog: list[tuple[int, int, str | None, str | None]] = []
        self.labels: dict[str, int] = {}

    def op(self, code: int, k: int, jt: str | None = None, jf: str | None = None) -> None:
        self.prog.append((code, k, jt, jf))

    def label(self, name: str) -> None:
        self.labels[name] = len(self.prog)

    def assemble(self) -> bytes:
        """The packed ``struct sock_filter`` instructions.

        :raises ValueError: for a jump farther than 255 instructions.
        """
        out = bytearray()
        for pc, (code, k, jt, jf) in enumerate(self.prog):
            offsets = [0 if to is None else self.labels[to] - pc - 1 for to in (jt, jf)]
            if not all(0 <= o <= 255 for o in offsets):
                raise ValueError(f"jump out of range at instruction {pc}")
            out += struct.pack("=HBBI", code, offsets[0], offsets[1], k)
        return bytes(out)


def seccomp_filter(arch: str | None = None) -> bytes:
    """The filter for ``arch`` as packed ``struct sock_filter`` instructions.

    :raises ValueError: for an architecture without a syscall table.
    """
    arch = arch or native_arch()
    if arch not in SYSCALLS:
        raise ValueError(f"no seccomp syscall table for architecture {arch!r}")
    p = _Program()
    _by_number(p, arch, SYSCALLS[arch])
    _by_argument(p, arch, SYSCALLS[arch])
    return p.assemble()


def _by_number(p: _Program, arch: str, nrs: dict[str, int]) -> None:
    """The arch check, then each call decided by its number alone, or sent to the check of its
    arguments (a label of :func:`_by_argument`); any other call allowed."""
    op = p.op
    op(LD_ABS_W, OFF_ARCH)
    op(JEQ_K, AUDIT_ARCH[arch], None, "deny")
    op(LD_ABS_W, OFF_NR)
    if arch == "x86_64":
        op(JGE_K, X32_SYSCALL_BIT, "deny", None)
    for name in DENIED:
        if name in nrs:
            op(JEQ_K, nrs[name], "deny", None)
    for name in NOT_THERE:
        op(JEQ_K, nrs[name], "enosys", None)
    for name in OPEN_FLAGS_ARG:
        if name in nrs:  # aarch64 has no open
            op(JEQ_K, nrs[name], name, None)
    op(JEQ_K, nrs["socket"], "socket", None)
    op(JEQ_K, nrs["socketpair"], "socket", None)
    op(JEQ_K, nrs["fcntl"], "fcntl", None)
    op(JEQ_K, nrs["clone"], "clone", None)
    op(JEQ_K, nrs["personality"], "personality", None)
    op(JEQ_K, nrs["clone3"], "enosys", None)
    op(JEQ_K, nrs["madvise"], "madvise", None)
    op(JEQ_K, nrs["preadv2"], "rwf", None)
    op(JEQ_K, nrs["pwritev2"], "rwf", None)
    op(RET_K, RET_ALLOW)


def _by_argument(p: _Program, arch: str, nrs: dict[str, int]) -> None:
    """The calls decided by an argument, each at its label, then the shared answers."""
    op, label = p.op, p.label
    deny = RET_ERRNO | errno.EPERM
    label("madvise")
    op(LD_ABS_W, _arg_lo(2))
    for value in MADV_OK:
        op(JEQ_K, value, "allow", None)
    op(RET_K, deny)
    label("rwf")
    op(LD_ABS_W, _arg_lo(5))
    op(JSET_K, RWF_NOWAIT, "deny", None)
    op(RET_K, RET_ALLOW)
    for name, arg in OPEN_FLAGS_ARG.items():
        if name in nrs:
            label(name)
            op(LD_ABS_W, _arg_lo(arg))
            op(JSET_K, O_DIRECT[arch], "einval", None)
            op(RET_K, RET_ALLOW)
    label("socket")
    op(LD_ABS_W, _arg_lo(0))
    for family in SOCKET_FAMILIES:
        op(JEQ_K, family, "allow", None)
    op(RET_K, RET_ERRNO | errno.EAFNOSUPPORT)
    label("fcntl")
    op(LD_ABS_W, _arg_lo(1))
    for cmd in F_LOCK_CMDS:
        op(JEQ_K, cmd, "deny", None)
    op(JEQ_K, F_SETFL, None, "allow")
    op(LD_ABS_W, _arg_lo(2))
    op(JSET_K, O_DIRECT[arch], "einval", None)
    op(RET_K, RET_ALLOW)
    label("clone")
    op(LD_ABS_W, _arg_lo(0))
    op(JSET_K, CLONE_NS_FLAGS, "deny", None)
    op(RET_K, RET_ALLOW)
    label("personality")
    op(LD_ABS_W, _arg_lo(0))
    for value in PERSONALITY_OK:
        op(JEQ_K, value, "allow", None)
    label("deny")
    op(RET_K, deny)
    label("enosys")
    op(RET_K, RET_ERRNO | errno.ENOSYS)
    label("einval")
    op(RET_K, RET_ERRNO | errno.EINVAL)
    label("allow")
    op(RET_K, RET_ALLOW)


def seccomp_fd(arch: str | None = None) -> int:
    """A readable fd (a memfd, offset 0) holding :func:`seccomp_filter` for bwrap."""
    fd = os.memfd_create("ct-seccomp", os.MFD_CLOEXEC)
    os.write(fd, seccomp_filter(arch))
    os.lseek(fd, 0, os.SEEK_SET)
    return fd
