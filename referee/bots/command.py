"""The bubblewrap command line of one bot (:func:`build_argv`): its namespaces, the runtime
shown from memory (:mod:`referee.bots.view`), ``/proc``'s masks, its own folders at ``/ct/N``,
what it must see empty, its environment and seccomp filter (docs/security.md, *What a bot
sees*)."""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from referee.bots import image
from referee.bots.policy import (
    BASE_PATH,
    KERNEL_FOLDERS,
    PROC_HIDDEN,
    SANDBOX_UID,
    SYSTEM_DIRS,
    Privilege,
    SandboxError,
    SandboxPolicy,
)
from referee.bots.probing import Capabilities, _subuid_bwrap, _subuid_setpriv
from referee.bots.resolve import Binds, bot_binds, check_readable, which, within
from referee.bots.runtime import SYSTEM_TOPS
from referee.bots.seccomp import seccomp_fd
from referee.bots.subids import user_namespace
from referee.bots.view import NEUTRAL, View, ViewError, runtime_view

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


def _seccomp_fd() -> int:
    return seccomp_fd()
