"""The attacks (stdlib only: it runs inside the sandbox, under any Python 3.8+).

``python attacks.py NAME`` runs one attack and prints ``refused NAME`` or ``ALLOWED NAME:
what``. Paths of the world to attack come from ``CT_PROBE_*`` environment variables (not
arguments: the sandbox binds every folder a command line names). ``memory``, ``sharedmem``,
``shm``, ``tmp`` and ``forks`` are judged by the referee (a memory fault; the pids limit) as
well.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import mmap
import os
import socket
import struct
import subprocess
import sys
import time
from collections.abc import Callable

libc = ctypes.CDLL(None, use_errno=True)
MS_REMOUNT, MS_BIND, MNT_DETACH = 32, 4096, 2


def _env(name: str) -> str:
    return os.environ.get(f"CT_PROBE_{name}", "/nonexistent")


def _call(f: Callable[..., object], *args: object) -> str | None:
    """``None`` if the call failed, else ``"ok"``."""
    try:
        r = f(*args)
    except OSError:
        return None
    return None if isinstance(r, int) and r < 0 else "ok"


def _read(path: str) -> str | None:
    try:
        with open(path, "rb") as f:
            return f"read {path}: {f.read(40)!r}"
    except OSError:
        return None


def remount() -> str | None:
    """Remount the bot's folder read-write, write on the host."""
    here = os.getcwd().encode()
    got = [_call(libc.mount, None, here, None, MS_REMOUNT | MS_BIND, None),
           _call(libc.mount, b"none", b"/tmp", b"tmpfs", 0, None)]
    try:
        with open(os.path.join(os.path.dirname(__file__), "written"), "w") as f:
            f.write("x")
        got.append("wrote beside the probes")
    except OSError:
        pass
    return ", ".join(g for g in got if g) or None


def umount() -> str | None:
    """Unmount /tmp, /proc or a hidden folder to see what is below."""
    got = [p for p in (b"/tmp", b"/proc", b"/dev/shm") if _call(libc.umount2, p, MNT_DETACH)]
    return f"unmounted {got}" if got else None


def output() -> str | None:
    """Read the live records in the output folder (also through a symlink in its folder)."""
    link = os.path.join(os.getcwd(), "peek", "results.jsonl")  # peek -> the output folder
    return (_read(os.path.join(_env("OUTPUT"), "results.jsonl")) or _listing(_env("OUTPUT"))
            or _read(link))


def _listing(path: str) -> str | None:
    try:
        return f"listed {path}: {os.listdir(path)}"
    except OSError:
        return None


def referee_proc() -> str | None:
    """Read the referee's command line, environment or memory through /proc."""
    secret = os.environ.get("CT_PROBE_SECRET", "")
    found = []
    for pid in (p for p in os.listdir("/proc") if p.isdigit()):
        for name in ("environ", "cmdline", "mem"):
            try:
                with open(f"/proc/{pid}/{name}", "rb") as f:
                    data = f.read(1 << 16)
            except OSError:
                continue
            if name == "mem" or (secret and secret.encode() in data):
                found.append(f"{pid}/{name}")
    ppid = _read(f"/proc/{_env('REFEREE_PID')}/environ")
    return ", ".join(found + ([ppid] if ppid else [])) or None


def rewrite() -> str | None:
    """Rewrite another entrant's bot, or its own."""
    for path in (os.path.join(_env("SIBLING"), "bot.py"), sys.argv[0]):
        try:
            with open(path, "a") as f:
                f.write("# owned\n")
            return f"wrote {path}"
        except OSError:
            pass
    return None


def read() -> str | None:
    """Read other entrants' folders, the tournament YAML, a 0600 file, the referee's env."""
    got = [_read(os.path.join(_env("SIBLING"), "bot.py")), _listing(_env("SIBLING")),
           _read(_env("CONFIG")), _read(_env("PRIVATE")), _read("/etc/shadow"),
           _listing("/root/.ssh"), _read("/root/.bashrc")]
    if "CT_PROBE_SECRET" in os.environ:
        got.append("the referee's environment")
    return ", ".join(g for g in got if g) or None


def locks() -> str | None:
    """Byte-range locks (and friends) on a shared read-only file: a channel between bots."""
    with open(sys.argv[0]) as f:
        lk = struct.pack("hhqqi", fcntl.F_RDLCK, 0, 0, 0, 0)
        tries = {"flock": lambda: fcntl.flock(f, fcntl.LOCK_SH | fcntl.LOCK_NB),
                 "lockf": lambda: fcntl.lockf(f, fcntl.LOCK_SH | fcntl.LOCK_NB),
                 "F_SETLK": lambda: fcntl.fcntl(f, fcntl.F_SETLK, lk),
                 "F_GETLK": lambda: fcntl.fcntl(f, fcntl.F_GETLK, lk),
                 "F_OFD_SETLK": lambda: fcntl.fcntl(f, 37, lk),
                 "inotify": lambda: libc.inotify_init1(0)}
        got = [k for k, t in tries.items() if _call(t)]
        errnos = {k: _errno(t) for k, t in tries.items() if k not in got}
    odd = [f"{k} failed with errno {e}" for k, e in errnos.items() if e != errno.EPERM]
    return ", ".join([*(f"{k} worked" for k in got), *odd]) or None


def pid1() -> str | None:
    """Read what pid 1 of the sandbox says about the host: its command line (a root bwrap's
    holds every host path it binds and hides)."""
    try:
        with open("/proc/1/cmdline", "rb") as f:
            words = f.read().split(b"\0")
    except OSError:
        return None
    told = [w.decode(errors="replace") for w in words if w.startswith(b"--") or b"bwrap" in w]
    return f"pid 1 runs {' '.join(told[:6])}" if told else None


def pagecache() -> str | None:
    """Evict, inspect or prefetch the page cache of a file (its own script): the marks a bot
    leaves for a later bot of its own (a duplicate set's next seating)."""
    import mmap

    fd = os.open(sys.argv[0], os.O_RDONLY)
    mm = mmap.mmap(fd, 0, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ | mmap.PROT_WRITE)
    addr = ctypes.addressof(ctypes.c_char.from_buffer(mm))
    vec = ctypes.create_string_buffer(64)
    page = os.sysconf("SC_PAGE_SIZE")

    def nowait() -> int:
        try:
            return os.preadv(fd, [bytearray(8)], 0, 8)  # RWF_NOWAIT
        except BlockingIOError:
            return 0  # "not cached": an answer all the same

    tries = {
        "fadvise DONTNEED": lambda: os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED),
        "madvise PAGEOUT": lambda: mm.madvise(21, 0, page),
        "madvise COLD": lambda: mm.madvise(20, 0, page),
        "mincore": lambda: libc.mincore(ctypes.c_void_p(addr), page, vec),
        "readahead": lambda: libc.readahead(fd, ctypes.c_long(0), ctypes.c_size_t(page)),
        "preadv2 NOWAIT": nowait,
        "cachestat": lambda: libc.syscall(451, fd, ctypes.byref((ctypes.c_uint64 * 2)(0, page)),
                                          ctypes.byref((ctypes.c_uint64 * 5)()), 0),
    }
    got = [k for k, t in tries.items() if _call(t)]
    errnos = {k: _errno(t) for k, t in tries.items() if k not in got}
    ok = (errno.EPERM, errno.ENOSYS)  # ENOSYS: a kernel without cachestat
    odd = [f"{k} failed with errno {e}" for k, e in errnos.items() if e not in ok]
    with contextlib.suppress(BufferError):
        mm.close()
    os.close(fd)
    return ", ".join([*(f"{k} worked" for k in got), *odd]) or None


def _errno(f: Callable[[], object]) -> int:
    """The errno a failing call leaves (``OSError`` or ``-1`` and ``errno``)."""
    try:
        f()
    except OSError as e:
        return e.errno or 0
    return ctypes.get_errno()


_NR = {"x86_64": {"io_setup": 206, "io_destroy": 207, "io_getevents": 208, "io_submit": 209,
                  "io_cancel": 210, "io_pgetevents": 333, "openat2": 437, "open": 2},
       "aarch64": {"io_setup": 0, "io_destroy": 1, "io_submit": 2, "io_cancel": 3,
                   "io_getevents": 4, "io_pgetevents": 292, "openat2": 437}}
_O_DIRECT = {"x86_64": 0o40000, "aarch64": 0o200000}


def _arch() -> str:
    import platform

    machine = platform.machine()
    return {"amd64": "x86_64", "arm64": "aarch64"}.get(machine, machine)


def _syscall(nr: int, *args: object) -> int:
    """``syscall(nr, ...)``: the result, or ``-errno``."""
    libc.syscall.restype = ctypes.c_long
    r = libc.syscall(ctypes.c_long(nr), *args)
    return -ctypes.get_errno() if r == -1 else int(r)


def _judge(results: dict[str, int], refused: tuple[int, ...]) -> str | None:
    """``None`` when every call failed with an errno of ``refused``, else what got through."""
    got = [f"{k} worked" if r >= 0 else f"{k} reached the kernel (errno {-r})"
           for k, r in results.items() if r >= 0 or -r not in refused]
    return ", ".join(got) or None


def aio() -> str | None:
    """Use Linux AIO: an io_submit with RWF_NOWAIT asks whether a page is cached, and io_setup
    takes from the host-wide fs.aio-max-nr pool."""
    nr = _NR.get(_arch(), {})
    ctx = ctypes.c_ulong(0)
    results = {"io_setup": _syscall(nr["io_setup"], 128, ctypes.byref(ctx))}
    fd = os.open(sys.argv[0], os.O_RDONLY)
    buf = ctypes.create_string_buffer(4096)
    # struct iocb (little-endian): data, key, rw_flags, opcode, prio, fd, buf, nbytes, offset,
    # reserved2, flags, resfd; IOCB_CMD_PREAD with RWF_NOWAIT
    iocb = struct.pack("=QIiHhIQQqQII", 0, 0, 0x8, 0, 0, fd, ctypes.addressof(buf), 8, 0, 0,
                       0, 0)
    cb = ctypes.create_string_buffer(iocb, len(iocb))
    cbs = (ctypes.c_void_p * 1)(ctypes.addressof(cb))
    results["io_submit"] = _syscall(nr["io_submit"], ctx, 1, cbs)
    events = ctypes.create_string_buffer(32 * 4)
    zero = struct.pack("=qq", 0, 0)
    results["io_getevents"] = _syscall(nr["io_getevents"], ctx, 0, 1, events, zero)
    results["io_pgetevents"] = _syscall(nr["io_pgetevents"], ctx, 0, 1, events, zero, None)
    results["io_cancel"] = _syscall(nr["io_cancel"], ctx, cb, events)
    results["io_destroy"] = _syscall(nr["io_destroy"], ctx)
    os.close(fd)
    return _judge(results, (errno.ENOSYS, errno.EPERM))


def sockets() -> str | None:
    """Open sockets of families a game bot has no use for: AF_VSOCK (a hypervisor's host,
    whatever the network namespace), AF_NETLINK, AF_PACKET, AF_ALG, AF_KEY, AF_BLUETOOTH."""
    families = {"AF_VSOCK": 40, "AF_NETLINK": 16, "AF_PACKET": 17, "AF_ALG": 38, "AF_KEY": 15,
                "AF_BLUETOOTH": 31}
    results = {}
    for name, family in families.items():
        for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM, socket.SOCK_RAW,
                     socket.SOCK_SEQPACKET):
            try:
                socket.socket(family, kind).close()
                results[name] = 0
                break
            except OSError as e:  # the first family-level answer is what counts
                results[name] = -(e.errno or 0)
                if e.errno != errno.ESOCKTNOSUPPORT and e.errno != errno.EPROTONOSUPPORT:
                    break
    pair = (ctypes.c_int * 2)()
    r = libc.socketpair(families["AF_VSOCK"], socket.SOCK_STREAM, 0, pair)
    results["socketpair AF_VSOCK"] = -ctypes.get_errno() if r < 0 else 0
    return _judge(results, (errno.EAFNOSUPPORT,))


def odirect() -> str | None:
    """Read its own file with O_DIRECT (open, openat, fcntl F_SETFL, openat2): the disk at its
    full rate, past the page cache, starving the host's reads."""
    arch = _arch()
    flag = _O_DIRECT.get(arch, 0o40000)
    path = os.path.abspath(sys.argv[0])
    nr = _NR.get(arch, {})
    results: dict[str, int] = {}

    def opened(f: Callable[[], int]) -> int:
        try:
            fd = f()
        except OSError as e:
            return -(e.errno or 0)
        if fd >= 0:
            os.close(fd)
        return fd

    results["openat"] = opened(lambda: os.open(path, os.O_RDONLY | flag))
    if "open" in nr:
        results["open"] = _syscall(nr["open"], path.encode(), os.O_RDONLY | flag)
        if results["open"] >= 0:
            os.close(results["open"])
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.fcntl(fd, fcntl.F_SETFL, flag)
        results["fcntl F_SETFL"] = 0 if fcntl.fcntl(fd, fcntl.F_GETFL) & flag else -errno.EINVAL
    except OSError as e:
        results["fcntl F_SETFL"] = -(e.errno or 0)
    os.close(fd)
    how = struct.pack("=QQQ", os.O_RDONLY | flag, 0, 0)
    results["openat2"] = _syscall(nr["openat2"], -100, path.encode(), how, len(how))
    if results["openat2"] >= 0:
        os.close(results["openat2"])
    return _judge(results, (errno.EINVAL, errno.ENOSYS))


def escape() -> str | None:
    """Regain privileges: capabilities, a user namespace, setuid 0, ptrace, the network."""
    got = []
    with open("/proc/self/status") as f:
        status = dict(line.split(":\t", 1) for line in f.read().splitlines() if ":\t" in line)
    for key in ("CapPrm", "CapEff", "CapBnd", "CapAmb"):
        if int(status[key], 16):
            got.append(f"{key} {status[key].strip()}")
    if status.get("NoNewPrivs", "0").strip() != "1":
        got.append("NoNewPrivs 0")
    if _call(libc.unshare, 0x10000000):
        got.append("unshare(CLONE_NEWUSER)")
    if _call(os.setuid, 0):
        got.append("setuid(0)")
    if _call(libc.ptrace, 16, 1, 0, 0):
        got.append("ptrace")
    s = socket.socket()
    s.settimeout(1)
    if _call(s.connect, ("1.1.1.1", 53)):
        got.append("network")
    return ", ".join(got) or None


def forks(count: int = 200) -> str | None:
    """Fork 200 sleeping children (a bounded fork bomb)."""
    n = 0
    for _ in range(count):
        try:
            if os.fork() == 0:
                time.sleep(30)
                os._exit(0)
        except OSError:
            break
        n += 1
    return f"forked {n}" if n >= count else None


def memory(mb: int = 2048) -> str | None:
    """Allocate 2 GiB, touched."""
    keep = [bytearray(1 << 20) for _ in range(mb)]
    return f"allocated {len(keep)} MiB"


def sharedmem(mb: int = 1024) -> str | None:
    """Hold 1 GiB of shared memory, touched: half a memfd, half an anonymous MAP_SHARED
    mapping (RLIMIT_DATA counts neither)."""
    block, half = b"x" * (1 << 20), mb // 2
    fd = os.memfd_create("fill")
    os.ftruncate(fd, half << 20)
    held = [mmap.mmap(fd, half << 20, mmap.MAP_SHARED),
            mmap.mmap(-1, (mb - half) << 20, mmap.MAP_SHARED | mmap.MAP_ANONYMOUS)]
    for region in held:
        for at in range(0, len(region), 1 << 20):
            region[at:at + (1 << 20)] = block
    return f"held {mb} MiB of shared memory"


def _fill(path: str, mb: int) -> str:
    with open(path, "wb") as f:
        block = b"x" * (1 << 20)
        for _ in range(mb):
            f.write(block)
            f.flush()
    return f"wrote {mb} MiB to {os.path.dirname(path)}"


def shm(mb: int = 1024) -> str | None:
    """Write 1 GiB into /dev/shm."""
    return _fill("/dev/shm/fill", mb)


def tmp(mb: int = 1024) -> str | None:
    """Write 1 GiB into /tmp."""
    return _fill("/tmp/fill", mb)


def cpu(count: int = 4, seconds: float = 1.0) -> str | None:
    """Burn 4 processes for a second: twice its CPU quota (``CT_PROBE_CPUS``, a quarter core)
    gets through."""
    import resource

    quota = float(os.environ.get("CT_PROBE_CPUS", "0") or 0)
    start = time.monotonic()
    for _ in range(count):
        if os.fork() == 0:
            while time.monotonic() - start < seconds:
                pass
            os._exit(0)
    with contextlib.suppress(ChildProcessError):
        while True:
            os.wait()
    wall = time.monotonic() - start
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    burned = used.ru_utime + used.ru_stime
    # a CFS quota lets quota x wall through, and each CPU may overrun it by up to a tick a
    # period (4 ms of 100 at 250 Hz: 0.08 s a second on 2 CPUs): twice the quota is past it
    if quota > 0 and burned <= 2 * quota * wall + 0.05:
        return None
    return f"burned {burned:.2f} s of CPU in {wall:.2f} s (quota {quota} cores)"


def affinity() -> str | None:
    """Widen the CPUs it may run on (with ``affinity`` a match's bots keep to one CPU: widened,
    a bot on move would take a share of another match's CPU)."""
    return _call(os.sched_setaffinity, 0, range(os.cpu_count() or 1))


def burn(count: int = 4) -> str | None:
    """Start ``count`` setsid'd, double-forked CPU burners, let them burn a second (the
    referee sees their cgroup throttled), then return (they stay)."""
    for _ in range(count):
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                while True:
                    pass
            os._exit(0)
    time.sleep(1.0)
    return None


def orphan() -> str | None:
    """Leave a double-forked setsid'd grandchild behind (its survival is judged outside)."""
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            subprocess.run(["sleep", "300"], check=False)
        os._exit(0)
    time.sleep(0.1)
    return None


ATTACKS = {f.__name__: f for f in (remount, umount, output, referee_proc, rewrite, read, locks,
                                   pagecache, pid1, escape, forks, memory, sharedmem, shm, tmp,
                                   cpu, affinity, aio, sockets, odirect)}
"""What ``ct-referee sandbox`` runs: each must come back refused."""


def main() -> None:
    name = sys.argv[1]
    got = {**ATTACKS, "burn": burn, "orphan": orphan}[name]()
    print(f"ALLOWED {name}: {got}" if got else f"refused {name}", flush=True)


if __name__ == "__main__":
    main()
