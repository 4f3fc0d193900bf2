"""The hardened bot sandbox: bubblewrap, an unprivileged uid, seccomp, cgroups or rlimits.

A bot runs as an unprivileged host uid without capabilities (and no way to regain them), sees
the system folders, its runtime's install prefix, the referee's own package and its own
folders (all read-only), a bounded private ``/tmp`` and ``/dev/shm``, its own ``/proc``, no
network and a cleared environment, under a seccomp filter (:mod:`referee.bots.seccomp`) and a
cgroup of its own (:mod:`referee.bots.cgroups`) or, where there is none, rlimits. A root
referee shows the folders it binds through overlays at neutral names (``/ct/N``, a symlink at
each host path), so that the bot's mount table names no host path (:mod:`referee.bots.staging`).

Three ways to drop privileges (:class:`SandboxPolicy` ``mode``):

``userns``
    bwrap itself runs as the bot uid (the referee's own uid when it is not root) with
    ``--unshare-user --disable-userns --cap-drop ALL``. Every bound path must be traversable
    by that uid: bwrap resolves its sources as that uid.
``setpriv``
    (root only) bwrap runs as root without a user namespace, builds the mounts (it can reach
    a runtime under ``/root``), and execs ``setpriv``, which drops to the bot uid, clears every
    capability set and sets no-new-privs before it execs the bot. Nested user namespaces are
    refused by the seccomp filter.
``subuid``
    (a referee that is not root, with a range in ``/etc/subuid`` and ``/etc/subgid``) a user
    namespace mapping one subordinate uid and gid of the organiser is made first
    (:mod:`referee.bots.subids`), and bwrap, run as the organiser, joins it with ``--userns``
    and builds the mounts with the organiser's access to files. Inside, ``setpriv`` clears
    the supplementary groups (the organiser's, which bwrap keeps), every capability set and
    sets no-new-privs, ``prlimit`` sets the rlimits (counted for the bot's uid, not the
    organiser's), then the bot runs as the subordinate uid: it reads only what any user may.
    Nested user namespaces are refused by the seccomp filter.

``auto`` picks ``userns`` unless the referee is root and a bound path is unreachable for the
bot uid, or user namespaces do not work here; a referee that is not root picks ``subuid``
where it has subordinate ids (:func:`prepare`). The policy is plain, picklable data; what the
machine can do (:func:`capabilities`) is probed where the bot is spawned, once per process.
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import functools
import os
import re
import shutil
import stat
import subprocess
import sys
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import referee
from referee.bots import image
from referee.bots.cgroups import IO, IO_READ_BPS, IO_READ_IOPS, Cgroup, CgroupLayout, find_layout
from referee.bots.delegation import NO_CONTROLLER, delegated_layout, weaker_limits
from referee.bots.expiring import expiring
from referee.bots.limits import GATE, Limits
from referee.bots.runtime import SYSTEM_TOPS
from referee.bots.seccomp import native_arch, seccomp_fd, seccomp_filter
from referee.bots.subids import SubIds, mine, user_namespace
from referee.bots.uids import Lease, allocate, namespace_inode
from referee.bots.view import NEUTRAL, View, ViewError, runtime_view

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
ENV = ("PATH", "HOME", "LANG", "TMPDIR")
"""The only environment variables a sandboxed bot gets (with ``PWD``, set by its shell, and
``JAVA_TOOL_OPTIONS=-XX:-UsePerfData`` for ``java``, whose perf-data file needs ``flock``)."""
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


MODES = tuple(m.value for m in Privilege)


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


def _run(argv: Sequence[str], **kw: object) -> subprocess.CompletedProcess[str]:
    kw = {"env": {"PATH": BASE_PATH}, "cwd": "/", **kw}
    try:
        done: subprocess.CompletedProcess[str] = subprocess.run(  # type: ignore[call-overload]
            list(argv), capture_output=True, text=True, timeout=10, check=False, **kw)
        return done
    except (OSError, subprocess.SubprocessError) as err:
        return subprocess.CompletedProcess(list(argv), 127, "", str(err))


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


# -- what a bot may see -------------------------------------------------------------------------


LOOKUP_TTL_S = 60.0
"""How long a program found on a ``PATH`` (and what a pyenv shim runs) is remembered: a
tournament looked each entrant's up (10,000 ``which``, and as many ``pyenv which`` processes
for ``python3 bot.py`` in 10,000 folders), and every spawn looked up ``prlimit``."""


def which(prog: str, path: str | None = None) -> str | None:
    """:func:`shutil.which` of ``prog`` on ``path`` (default: ``PATH``), remembered for
    :data:`LOOKUP_TTL_S` per program and ``PATH``."""
    return _which(prog, os.environ.get("PATH") if path is None else path)


@expiring(LOOKUP_TTL_S)
def _which(prog: str, path: str | None) -> str | None:
    return shutil.which(prog, path=path)


def resolve_executable(prog: str, workdir: Path) -> Path | None:
    """The absolute path that runs for ``prog`` (relative to ``workdir`` when it has a slash,
    else on ``PATH``), symlinks kept (a venv's ``bin/python`` stays one); a pyenv shim resolves
    to ``pyenv which`` as run in ``workdir`` (once per version that selects)."""
    if "/" in prog:
        found = Path(os.path.abspath(Path(workdir, prog)))
        return found if found.is_file() else None
    exe = which(prog)
    if exe is None:
        return None
    shim = Path(exe)
    if shim.parent.name == "shims" and (shim.parent.parent / "libexec" / "pyenv").is_file():
        return _pyenv_which(str(shim), prog, _pyenv_selector(workdir), str(workdir))
    return Path(os.path.abspath(exe))


def _pyenv_selector(workdir: Path) -> tuple[str, str]:
    """What picks the version a pyenv shim runs in ``workdir`` (as ``pyenv version-file``
    finds it): ``PYENV_VERSION``, else the text of the nearest ``.python-version`` in
    ``workdir`` or a folder above it, else the global version; equal selectors, the same
    program."""
    env = os.environ.get("PYENV_VERSION")
    if env:
        return ("env", env)
    here = Path(os.path.abspath(workdir))
    for folder in (here, *here.parents):
        text = _small_file(folder / ".python-version")
        if text is not None:
            return ("file", text)
    return ("global", os.environ.get("PYENV_ROOT", ""))


def _small_file(path: Path) -> str | None:
    """The first 4 KiB of ``path`` if it is a regular file (a fifo in a bot's folder does not
    block), else ``None``."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return os.read(fd, 4096).decode("utf-8", "replace")
    except OSError:
        return None
    finally:
        os.close(fd)


@expiring(LOOKUP_TTL_S, key=lambda shim, prog, selector, workdir: (shim, prog, selector))
def _pyenv_which(shim: str, prog: str, selector: tuple[str, str], workdir: str) -> Path:
    """What a pyenv shim runs in ``workdir`` (``pyenv which``, run there once per
    ``selector``, :func:`_pyenv_selector`)."""
    pyenv = Path(shim).parent.parent / "libexec" / "pyenv"
    done = _run([str(pyenv), "which", prog], cwd=workdir,
                env={**os.environ, "PATH": os.environ.get("PATH", BASE_PATH)})
    out = done.stdout.strip() if done.returncode == 0 else ""
    return Path(os.path.abspath(out or shim))


def _install_prefix(exe: Path) -> Path:
    return exe.parent.parent if exe.parent.name == "bin" else exe.parent


def _shebang(exe: Path) -> str | None:
    """The interpreter ``exe``'s ``#!`` line names, read as the kernel does (words split at
    spaces and tabs only); after the system's ``env``, the program it runs."""
    try:
        with open(exe, "rb") as f:
            head = f.read(256)
    except OSError:
        return None
    if head[:2] != b"#!":
        return None
    line = head[2:].split(b"\n")[0].replace(b"\t", b" ").decode(errors="replace")
    words = [w for w in line.split(" ") if w]
    if len(words) > 1 and Path(words[0]).name == "env" and \
            _system(Path(os.path.realpath(words[0]))):
        return words[1]
    return words[0] if words else None


def _public(path: Path) -> bool:
    """Whether any user can traverse every folder down to ``path`` (mode bits), or it is
    inside the referee's own Python install (a bot folder's venv made from it)."""
    own = {Path(os.path.realpath(p)) for p in (sys.prefix, sys.base_prefix)}
    return reachable(path, -1, -1) or any(path.is_relative_to(p) for p in own)


def sealed_off(path: Path, *, within: bool = False) -> bool:
    """Whether only root (or the referee's own uid) can change what ``path`` holds: it and
    every folder above it are theirs (symlinks too), and none is writable by others but a
    sticky folder above it (``/tmp``). A runtime a bot's own files name must be one: an
    entrant's login could otherwise change a folder it owns (``/var/tmp/mine``) during play,
    outside the snapshot. ``shared`` data is checked the same way, and everything inside it
    too (``within``)."""
    mine = {0, os.geteuid()}
    for real in {path, Path(os.path.realpath(path))}:
        parts = [*reversed(real.parents), real]
        for part in parts:
            try:
                st = os.lstat(part)
            except OSError:
                return False
            sticky_above = part != real and st.st_mode & stat.S_ISVTX
            if st.st_uid not in mine or (st.st_mode & 0o022 and not sticky_above
                                         and not stat.S_ISLNK(st.st_mode)):
                return False
    if within:
        for top, dirs, files in os.walk(path):
            for name in (*dirs, *files):
                try:
                    st = os.lstat(os.path.join(top, name))
                except OSError:
                    return False
                if st.st_uid not in mine or (st.st_mode & 0o022 and not stat.S_ISLNK(st.st_mode)):
                    return False
    return True


def within(path: Path, folder: Path) -> bool:
    """``path.is_relative_to(folder)`` for absolute, normalised paths (no ``..``, as
    ``abspath`` and ``realpath`` give them), by string: pathlib's took a tenth of the time a
    10,000-entrant tournament spent resolving its entrants."""
    inner, outer = str(path), str(folder)
    return inner == outer or inner.startswith(outer if outer.endswith("/") else outer + "/")


def _system(path: Path) -> bool:
    text = str(path)  # string prefixes: called for every entrant of a tournament
    return any(text == d or text.startswith(d + "/") for d in SYSTEM_DIRS)


@functools.cache
def _package() -> Path:
    """The referee package's folder (bots may import the rules)."""
    return Path(referee.__file__).resolve().parent


@dataclass(frozen=True)
class Binds:
    """The folders a bot is shown: its own (``bot``: those of the files its command names,
    its program if given relative to the working folder, else its working folder) and
    runtimes (``runtime``: install prefixes of its program and ``#!`` interpreter, symlinks
    and resolved, and the referee package), with the program's path."""

    exe: Path
    bot: tuple[Path, ...]
    runtime: tuple[Path, ...]

    @property
    def all(self) -> tuple[Path, ...]:
        return (*self.bot, *self.runtime)


def bot_binds(argv: Sequence[str], workdir: Path) -> Binds:
    """What :func:`build_argv` binds for ``argv`` run in ``workdir``.

    :raises SandboxError: when the program or its ``#!`` interpreter cannot be found.
    """
    workdir = Path(os.path.abspath(workdir))
    exe = resolve_executable(argv[0], workdir)
    if exe is None:
        raise SandboxError(f"bot command not found: {argv[0]!r}")
    bot: list[Path] = []
    program = Path(os.path.abspath(Path(workdir, argv[0])))
    in_venv = program.parent.name == "bin" and (program.parent.parent / "pyvenv.cfg").exists()
    # A program given by a relative path is the bot's own, unless it is a virtual
    # environment's (a runtime: its prefix is bound as one, below).
    named = [argv[0]] if "/" in argv[0] and not argv[0].startswith("/") and not in_venv else []
    named += [a for a in argv[1:] if not a.startswith("-")]
    # ``FILE.py:FUNCTION`` (a policy for ``ct-referee bot``) names FILE.py too.
    named += [a.rpartition(":")[0] for a in named if ":" in a]
    for arg in named:
        if not arg:
            continue
        path = Path(os.path.abspath(Path(workdir, arg)))
        with contextlib.suppress(OSError):
            folder = path if path.is_dir() else path.parent if path.is_file() else None
            if folder is not None and folder not in bot:
                bot.append(folder)
    if not bot:
        bot.append(workdir)
    runtime: list[Path] = []
    # (path, trusted): the organiser's command and PATH are trusted; a path the bot's own
    # files choose (its #! line, a symlink in its folder) may only show what anyone can reach;
    # a public path's own symlinks (a venv's python, say) are the host's, not the bot's
    def inside(path: Path) -> bool:
        return any(within(path, b) for b in bot)

    paths = [(exe, True), (Path(os.path.realpath(exe)), not inside(exe))]
    interpreter = _shebang(exe)
    if interpreter:
        found = resolve_executable(interpreter, workdir)
        if found is None:
            raise SandboxError(f"interpreter {interpreter!r} (named by {str(exe)!r}) not found")
        by_path = "/" not in interpreter
        paths += [(found, by_path), (Path(os.path.realpath(found)),
                                     by_path or not inside(found))]
    for path, trusted in paths:
        prefix = _install_prefix(path)
        if _system(path) or inside(prefix) or prefix in runtime:
            continue
        if not trusted and not _public(prefix):
            raise SandboxError(f"{str(path)!r} (named by {str(exe)!r}) is in a folder other "
                               f"users cannot reach: a bot's own #! line or symlink may only "
                               f"name a runtime anyone can reach, or one on PATH")
        if not trusted and not sealed_off(prefix):
            raise SandboxError(f"{str(path)!r} (named by {str(exe)!r}) is in a folder someone "
                               f"other than root can change during play: a bot's own #! line "
                               f"or symlink may only name a runtime root owns (or the "
                               f"organiser names it in the command)")
        runtime.append(prefix)
    package = _package()  # bots may import the rules
    if not any(within(package, b) for b in (*bot, *runtime)):
        runtime.append(package)
    return Binds(exe, tuple(bot), tuple(runtime))


def check_binds(binds: Binds, *, protected: Sequence[Path] = (),
                others: Sequence[Path] = ()) -> tuple[Path, ...]:
    """The paths inside the bot's folders that it must be shown empty: a ``protected`` path
    (the output folder, the configuration) or another entrant's folder (``others``; an equal
    folder is shared, not another's) that lies inside one of them, symlinks and ``..``
    resolved, written as the sandbox sees them (pass them to :func:`build_argv` as ``hidden``).

    :raises SandboxError: for a bot folder that is, or lies inside, a protected path: it
        cannot be hidden from the bot that lives in it.
    """
    hidden: list[Path] = []
    for folder in binds.all:
        real = Path(os.path.realpath(folder))
        for path in protected:
            other = Path(os.path.realpath(path))
            if real.is_relative_to(other):
                raise SandboxError(f"the bot folder {str(folder)!r} is inside the protected path "
                                   f"{str(path)!r} (move the bot, or that path, elsewhere)")
        for path in [*protected, *others]:
            other = Path(os.path.realpath(path))
            if other != real and other.is_relative_to(real):
                seen = Path(folder) / other.relative_to(real)
                if seen not in hidden:
                    hidden.append(seen)
    return tuple(hidden)


def reachable(path: Path, uid: int, gid: int) -> bool:
    """Whether ``uid``/``gid`` (no other groups, no capabilities) can traverse every folder
    down to ``path`` and read it (mode bits only)."""
    parts = [*reversed(path.parents), path]
    for i, part in enumerate(parts):
        try:
            st = os.stat(part)
        except OSError:
            return False
        need = 1 if (stat.S_ISDIR(st.st_mode) or i < len(parts) - 1) else 4
        shift = 6 if st.st_uid == uid else 3 if st.st_gid == gid else 0
        if not (st.st_mode >> shift) & need:
            return False
    return True


# -- the command line ---------------------------------------------------------------------------


@dataclass
class Spec:
    """A built launch: run ``argv`` with ``pass_fds`` as ``user``/``group`` (``None``: as the
    referee); call ``cleanup`` once it has started."""

    argv: list[str]
    pass_fds: tuple[int, ...]
    cleanup: Callable[[], None]
    mode: Privilege
    user: int | None
    group: int | None
    uid: int
    binds: Binds | None = None
    notes: list[str] = field(default_factory=list)


def _data_fd(data: bytes) -> int:
    fd = os.memfd_create("ct-data", os.MFD_CLOEXEC)
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _pick_mode(policy: SandboxPolicy, caps: Capabilities) -> Privilege:
    """The mode a bot runs in: a root referee's bots always through ``setpriv`` (bwrap, as
    root, shows them the runtime from root's private folder in memory), else ``userns`` (or
    ``subuid``, chosen by :func:`prepare`)."""
    mode = policy.mode
    if mode is Privilege.AUTO:
        mode = Privilege.SETPRIV if caps.root else Privilege.USERNS
    elif mode is Privilege.USERNS and caps.root:
        raise SandboxError("sandbox mode 'userns' does not work for a root referee (its bots' "
                           "runtime lies in root's private folder): use 'setpriv' or 'auto'")
    if mode is Privilege.SETPRIV and not caps.root:
        raise SandboxError("sandbox mode 'setpriv' needs the referee to run as root")
    if mode is Privilege.SUBUID and (caps.root or not caps.ok("subuid")):
        why = "the referee is root" if caps.root else next(
            f"{c.detail} ({c.enable})" for c in caps.checks if c.name == "subuid")
        raise SandboxError(f"sandbox mode 'subuid' cannot work here: {why}")
    return mode


def check_readable(binds: Binds, uid: int | None = None) -> None:
    """Refuse a bot folder that the bot's uid (any bot uid, with ``None``) cannot list and read:
    a referee running as root starts bots as users of their own.

    :raises SandboxError: naming the folder and the fix.
    """
    for folder in binds.bot:
        st = os.stat(folder)
        if st.st_uid != uid and (st.st_mode & 0o005) != 0o005:
            who = "the bot's uid" if uid is None else f"the bot's uid {uid}"
            what = "runtime" if folder in binds.runtime else "bot folder"
            raise SandboxError(f"the {what} {str(folder)!r} is not readable by {who} "
                               f"(mode {stat.filemode(st.st_mode)}): chmod o+rx it")


class _Argv:
    """A bwrap command line as it is built: its arguments, the descriptors it passes (closed
    by :meth:`close` if the build fails), the folders made and bound so far."""

    def __init__(self) -> None:
        self.out = ["bwrap"]
        self.fds: list[int] = []
        self.made = {"/", "/tmp", "/dev", "/proc", "/etc"}
        self.bound: list[Path] = [Path(d) for d in SYSTEM_DIRS]
        self.seen: dict[Path, str] = {}
        """Each bound folder: where the sandbox mounts it."""
        self.tops = 0
        """How many folders are mounted at ``/ct/N`` so far."""

    def neutral(self) -> str:
        """The next neutral mount point."""
        return f"{NEUTRAL}/{self.tops}"

    def fd(self, fd: int) -> str:
        """Passes ``fd`` to bwrap; its number as an argument."""
        self.fds.append(fd)
        return str(fd)

    def close(self) -> None:
        """Closes every descriptor passed."""
        for fd in self.fds:
            with contextlib.suppress(OSError):
                os.close(fd)

    def parents(self, dest: Path) -> list[str]:
        """``--dir`` for each folder above ``dest`` (bwrap would make them 0700)."""
        args: list[str] = []
        for parent in reversed(dest.parents):
            if str(parent) in self.made or any(parent.is_relative_to(b) for b in self.bound):
                continue
            self.made.add(str(parent))
            args += ["--perms", "0755", "--dir", str(parent)]
        return args

    def seen_as(self, item: Path) -> str:
        """Where the sandbox mounts ``item`` (its own path outside the bound folders)."""
        outer = max((q for q in self.seen if within(item, q)), key=lambda q: len(q.parts),
                    default=None)
        return str(item) if outer is None else \
            str(Path(self.seen[outer]) / item.relative_to(outer))


def build_argv(argv: Sequence[str], workdir: Path, *, policy: SandboxPolicy,
               caps: Capabilities, hidden: Sequence[Path] = (), uid: int | None = None,
               binds: Binds | None = None, sources: Mapping[Path, Path] | None = None,
               limits: Sequence[str] = ()) -> Spec:
    """The bwrap command line that runs ``argv`` in ``workdir`` under ``policy``.

    ``hidden``: folders (files) inside a bound folder that the bot sees empty. ``binds``: what
    to show, resolved once before (default: :func:`bot_binds` now); ``sources``: where a bound
    folder is served from (a sealed entrant's per-match copy), by the path the bot sees.
    ``limits``: in mode ``subuid``, the ``prlimit`` command run inside, as the bot's uid,
    before the bot (``uid``/``policy.gid``: the host ids the namespace maps). The descriptors
    it opens are closed if it raises.

    :raises SandboxError: for a command that cannot be found or a mode that cannot work here.
    """
    workdir = Path(os.path.abspath(workdir))
    binds = binds or bot_binds(argv, workdir)
    sources = dict(sources or {})
    uid = policy.uid if uid is None else uid
    try:
        shown = runtime_view(binds.exe, binds.runtime, binds.bot)
    except ViewError as err:
        raise SandboxError(str(err)) from None
    mode = _pick_mode(policy, caps)
    if caps.root or mode is Privilege.SUBUID:  # the bot reads its folders as "other" (a
        check_readable(dataclasses.replace(  # snapshot's copy is the snapshot's matter)
            binds, bot=tuple(b for b in binds.bot if b not in sources)), uid)
    cmd = _Argv()
    try:
        inner = _namespaces(cmd, mode, uid, policy.gid)
        _system_mounts(cmd, inner, policy, shown)
        _bound(cmd, binds, sources)
        _hidden(cmd, argv, workdir, binds, sources, hidden)
        _environment(cmd, workdir, binds, policy, caps)
        cmd.out += ["--chdir", cmd.seen_as(workdir), "--"]
        if mode is Privilege.SETPRIV:
            cmd.out += [which("setpriv", BASE_PATH) or "setpriv", f"--reuid={uid}",
                        f"--regid={policy.gid}", "--clear-groups", "--inh-caps=-all",
                        "--bounding-set=-all", "--no-new-privs", "--"]
        elif mode is Privilege.SUBUID:
            cmd.out += [*_subuid_setpriv(), *limits]
        cmd.out += [cmd.seen_as(binds.exe), *argv[1:]]
    except BaseException:
        cmd.close()
        raise
    return Spec(cmd.out, tuple(cmd.fds), cmd.close, mode, None, None,
                uid if caps.root or mode is Privilege.SUBUID else os.getuid(), binds)


def _namespaces(cmd: _Argv, mode: Privilege, uid: int, gid: int) -> int:
    """bwrap's namespaces for ``mode``; returns the uid the bot has inside."""
    if mode is Privilege.SUBUID:
        try:
            userns = cmd.fd(user_namespace(uid, gid, SANDBOX_UID))
        except OSError as err:
            raise SandboxError(str(err)) from None
        cmd.out += _subuid_bwrap(int(userns))
        inner = SANDBOX_UID
    elif mode is Privilege.USERNS:
        cmd.out += ["--unshare-all", "--unshare-user", "--disable-userns", "--cap-drop", "ALL",
                    "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID)]
        inner = SANDBOX_UID
    else:  # root bwrap, no user namespace: name each namespace (no --unshare-user-try)
        cmd.out += ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts",
                    "--unshare-cgroup-try"]
        inner = uid
    # --as-pid-1: the bot (or setpriv, which execs it) is pid 1, not a bwrap whose command
    # line (every host path bound and hidden) any process inside could read
    cmd.out += ["--as-pid-1", "--new-session", "--die-with-parent", "--hostname", "bot"]
    return inner


def _system_mounts(cmd: _Argv, inner: int, policy: SandboxPolicy, shown: View) -> None:
    """The runtime (from memory, read-only), the users and groups, ``/proc`` (its host-wide
    counters masked), ``/dev`` and the private ``/tmp`` and ``/dev/shm``."""
    out = cmd.out
    out += ["--dev", "/dev"]  # first: a runtime or bot folder in /tmp is shown inside them
    for dest in ("/tmp", "/dev/shm"):
        out += ["--perms", "01777"]
        if policy.tmp_mb > 0:
            out += ["--size", str(policy.tmp_mb << 20)]
        out += ["--tmpfs", dest]
    for link, text in shown.links:
        out += ["--symlink", text, link]
    for i, root in enumerate(shown.roots):
        source = str(shown.tree / f"r{i}")
        if root.count("/") == 1 and root[1:] in SYSTEM_TOPS:
            out += ["--ro-bind", source, root]
        else:  # at a neutral name: the mount table names no host path
            out += [*cmd.parents(Path(cmd.neutral())), "--ro-bind", source, cmd.neutral(),
                    *cmd.parents(Path(root)), "--symlink", cmd.neutral(), root]
            cmd.tops += 1
        cmd.bound.append(Path(root))
    if "/etc" not in shown.roots:
        out += ["--perms", "0755", "--dir", "/etc"]
    passwd = (f"root:x:0:0:root:/:/usr/sbin/nologin\nbot:x:{inner}:{inner}:bot:/tmp:"
              f"/usr/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n")
    group = f"root:x:0:\nbot:x:{inner}:\nnogroup:x:65534:\n"
    for text, dest in ((passwd, "/etc/passwd"), (group, "/etc/group")):
        out += ["--perms", "0444", "--ro-bind-data", cmd.fd(_data_fd(text.encode())), dest]
    out += ["--proc", "/proc"]
    masks = image.proc_files()
    for name in sorted(image.PROC_FILES):
        if os.path.exists(f"/proc/{name}"):
            out += ["--ro-bind", str(masks / name), f"/proc/{name}"]
    for folder in PROC_HIDDEN:
        if os.path.isdir(f"/proc/{folder}"):
            out += ["--perms", "0555", "--tmpfs", f"/proc/{folder}", "--remount-ro",
                    f"/proc/{folder}"]


def _bound(cmd: _Argv, binds: Binds, sources: Mapping[Path, Path]) -> None:
    """Mounts each of the bot's own folders read-only (from its snapshot in memory where it
    has one) at ``/ct/N``, with a symlink at its host path where one fits (not inside a
    runtime's folder, which is read-only)."""
    out, seen = cmd.out, cmd.seen
    for p in sorted(binds.bot, key=lambda b: len(b.parts)):
        source = str(sources.get(p) or os.path.realpath(p))
        outer = max((q for q in seen if within(p, q)), key=lambda q: len(q.parts), default=None)
        if outer is not None:
            continue  # inside another of its folders: shown with it
        dest = cmd.neutral()
        cmd.tops += 1
        out += [*cmd.parents(Path(dest)), "--ro-bind", source, dest]
        if not any(within(p, b) for b in (*cmd.bound, *KERNEL_FOLDERS)):
            out += [*cmd.parents(p), "--symlink", dest, str(p)]
        seen[p] = dest
        cmd.bound.append(p)


def _hidden(cmd: _Argv, argv: Sequence[str], workdir: Path, binds: Binds,
            sources: Mapping[Path, Path], hidden: Sequence[Path]) -> None:
    """Shows each of ``hidden`` empty where it lies inside a bound folder (never the bot's own
    files)."""
    named = {Path(os.path.abspath(Path(workdir, a))) for a in argv}
    for item in hidden:
        item = Path(os.path.abspath(item))
        if item in named or any(b.is_relative_to(item) for b in binds.all) or \
                not any(item.is_relative_to(b) for b in binds.all):
            continue  # never hides the bot from itself; not bound: invisible anyway
        served = [src / item.relative_to(p) for p, src in sources.items()
                  if item.is_relative_to(p)]
        if served and not os.path.lexists(served[0]):
            continue  # not in the copy the folder is served from
        if item.is_dir():
            cmd.out += ["--tmpfs", cmd.seen_as(item), "--remount-ro", cmd.seen_as(item)]
        elif item.exists():  # an empty file (a device node would not open: binds are nodev)
            cmd.out += ["--perms", "0444", "--ro-bind-data", cmd.fd(_data_fd(b"")),
                        cmd.seen_as(item)]


def _environment(cmd: _Argv, workdir: Path, binds: Binds, policy: SandboxPolicy,
                 caps: Capabilities) -> None:
    """The working folder, the cleared environment and the seccomp filter."""
    out = cmd.out
    if not any(workdir.is_relative_to(b) for b in cmd.bound):
        out += [*cmd.parents(workdir), "--perms", "0755", "--dir", str(workdir)]
    path = ":".join([*(cmd.seen_as(p / "bin") for p in binds.runtime if (p / "bin").is_dir()),
                     BASE_PATH])
    out += ["--clearenv", "--setenv", "PATH", path, "--setenv", "HOME", "/tmp",
            "--setenv", "LANG", "C.UTF-8", "--setenv", "TMPDIR", "/tmp"]
    if binds.exe.name.startswith("java"):  # its perf-data file needs flock: it would warn
        out += ["--setenv", "JAVA_TOOL_OPTIONS", "-XX:-UsePerfData"]  # on stdout otherwise
    for key, value in policy.env:
        out += ["--setenv", key, value]
    if policy.seccomp and caps.ok("seccomp"):
        out += ["--seccomp", cmd.fd(_seccomp_fd())]


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


def _seccomp_fd() -> int:
    return seccomp_fd()


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
