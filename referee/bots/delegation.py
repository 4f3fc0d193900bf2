"""Cgroups for a referee that is not root: the subtree delegated to its user, found by itself.

Two ways to have one (``docs/security.md``, *Limits without root*):

- cgroup v2 where systemd runs: the referee started by ``systemd-run --user --scope -p
  Delegate=yes ct-referee ...`` runs in a scope that the user's systemd hands over to it;
- anywhere else (cgroup v1, or v2 without systemd): root runs ``ct-referee sandbox --delegate
  USER`` once (:func:`delegate`), which makes ``<mount>/ct-referee-USER`` in each hierarchy,
  the user's, and on v2 moves the user's running processes into it: the kernel lets a user
  move a process only where it may write the ``cgroup.procs`` of the common ancestor of where
  the process is and where it goes, so a process outside the subtree cannot enter it alone.

On v2 the delegated cgroup holds no process of its own once controllers are enabled in it (the
no-internal-process rule): the referee moves its processes into ``<subtree>/session``, enables
the controllers in the subtree's ``cgroup.subtree_control``, and makes each bot's group beside
``session`` (:func:`delegated_layout`). On v1 a process may be moved by a user whose euid is
the process's uid: the referee writes its bots' launchers (its own uid until they exec bwrap)
into groups it makes under ``<mount>/ct-referee-USER``.
"""

from __future__ import annotations

import contextlib
import errno
import os
import pwd
import subprocess
from collections.abc import Iterable
from pathlib import Path

from referee.bots.cgroups import CONTROLLERS, IO, CgroupLayout

LEAF = "session"
"""The leaf a delegated v2 subtree's own processes live in (the referee's, and on a subtree
root handed over, the user's shells): the subtree itself may hold none once it distributes."""
WANTED = (*CONTROLLERS, IO)
V2_FILES = ("cgroup.procs", "cgroup.threads", "cgroup.subtree_control")
"""What a v2 delegation chowns besides the folder (the kernel's cgroup-v2 document,
*Delegation*): the limits in the folder stay root's (they spend the parent's resources)."""
SYSTEMD_RUN = "systemd-run --user --scope -p Delegate=yes"
DROP_IN = "ct-referee-delegate.conf"
ATTEMPTS = 50
"""How often the referee moves its subtree's processes into :data:`LEAF` and enables the
controllers before it gives up (a process forked meanwhile lands in the subtree itself)."""


class DelegationError(Exception):
    """Root's delegation cannot be done; the message is one line."""


def home_name(user: str) -> str:
    """The folder root hands ``user`` in each hierarchy (under its mount point)."""
    return f"ct-referee-{user}"


def systemd_runs() -> bool:
    """Whether systemd is the machine's init (``sd_booted``: ``/run/systemd/system``)."""
    return Path("/run/systemd/system").is_dir()


def fix_command(user: str) -> str:
    """The one command root runs to delegate ``user`` its cgroups: root's own ``ct-referee``,
    never the user's (root would run code the user may change)."""
    return f"as root: ct-referee sandbox --delegate {user}"


def _user(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def _write(path: Path, value: str) -> None:
    with open(path, "w") as f:
        f.write(value)


def own_cgroups(text: str | None = None) -> dict[str, str]:
    """``/proc/self/cgroup`` (or ``text``) as controller to path: ``""`` for v2's line, each v1
    controller of a hierarchy's line (``blkio`` as ``io``)."""
    if text is None:
        try:
            text = Path("/proc/self/cgroup").read_text()
        except OSError:
            text = ""
    found: dict[str, str] = {}
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        names = ["" if parts[0] == "0" and not parts[1] else n for n in parts[1].split(",")]
        for name in names:
            found.setdefault(IO if name == "blkio" else name, parts[2])
    return found


def _ours(path: Path, uid: int, files: Iterable[str] = ()) -> bool:
    """Whether ``path`` is a folder ``uid`` owns and may write (and each of ``files`` in it)."""
    try:
        if path.stat().st_uid != uid or not os.access(path, os.W_OK | os.X_OK):
            return False
    except OSError:
        return False
    return all(os.access(path / f, os.W_OK) for f in files)


def _v1_home(mount: Path, controller: str, uid: int, user: str,
             own: dict[str, str]) -> tuple[Path | None, str]:
    """The folder a v1 hierarchy's bot groups go in: root's delegation, else this process's
    own group where it is ``uid``'s (a login manager's delegation); or why there is none."""
    home = mount / home_name(user)
    if _ours(home, uid):
        return home, ""
    mine = own.get(controller)
    if mine is not None and mine != "/" and _ours(mount / mine.lstrip("/"), uid):
        return mount / mine.lstrip("/"), ""
    state = "missing" if not home.exists() else "not " + user + "'s"
    return None, f"v1 at {mount}, but no subtree of it is {user}'s ({home}: {state})"


def _delegate_mark(base: Path, uid: int) -> bool:
    """Whether systemd delegated ``base``: its ``user.delegate`` attribute (systemd 251 and
    later), else the unit's ``Delegate`` property (``systemctl --user show``)."""
    with contextlib.suppress(OSError):
        if os.getxattr(base, "user.delegate") == b"1":
            return True
    if not base.name.endswith((".scope", ".service")):
        return False
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin",
           "XDG_RUNTIME_DIR": os.environ.get("XDG_RUNTIME_DIR", f"/run/user/{uid}")}
    try:
        done = subprocess.run(["systemctl", "--user", "show", "--property=Delegate", "--value",
                               base.name], capture_output=True, text=True, timeout=10,
                              check=False, env=env)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0 and done.stdout.strip() == "yes"


def _v2_home(mount: Path, uid: int, user: str, own: dict[str, str],
             systemd: bool) -> tuple[Path | None, str, str]:
    """The delegated v2 cgroup this process is in (its own, or the parent of its
    :data:`LEAF`), or why there is none and the fix."""
    mine = own.get("", "/")
    here = mount / mine.lstrip("/")
    for base in ([here.parent] if here.name == LEAF else []) + [here]:
        if base == mount or not base.is_relative_to(mount):
            continue
        if _ours(base, uid, ("cgroup.procs", "cgroup.subtree_control")) and \
                (not systemd or base.name == home_name(user) or _delegate_mark(base, uid)):
            return base, "", ""
    handed = mount / home_name(user)
    if _ours(handed, uid):
        return None, (f"{handed} is {user}'s, but this process is outside it (in {mine}): on "
                      f"cgroup v2 a process enters a delegated subtree only by root's hand"), \
            (f"{fix_command(user)} again (it moves {user}'s running processes in), then start "
             f"the referee from one of them")
    if systemd:
        return None, f"the referee's cgroup ({mine}) is not delegated to {user}", \
            f"start the referee with {SYSTEMD_RUN} ct-referee ..."
    return None, f"no cgroup v2 subtree is {user}'s (the referee is in {mine})", \
        fix_command(user)


def move_all(source: Path, dest: Path) -> int:
    """Move every process of cgroup ``source`` into ``dest`` (one gone meanwhile is skipped);
    how many moved."""
    moved = 0
    try:
        pids = (source / "cgroup.procs").read_text().split()
    except OSError:
        return 0
    for pid in pids:
        try:
            _write(dest / "cgroup.procs", pid)
            moved += 1
        except OSError as err:
            if err.errno not in (errno.ESRCH, errno.ENOENT):
                raise
    return moved


def _enabled(base: Path) -> list[str]:
    """The controllers enabled in ``base/cgroup.subtree_control`` (as written, ``+c``, on a
    fake hierarchy)."""
    return [c.lstrip("+") for c in (base / "cgroup.subtree_control").read_text().split()]


def distribute(base: Path, controllers: Iterable[str]) -> tuple[tuple[str, ...], str]:
    """Make ``base`` (a v2 cgroup this process may manage) give ``controllers`` to its
    children: its processes moved into ``base/session``, the controllers it offers enabled in
    its ``cgroup.subtree_control``. Returns those enabled, and why any other is not."""
    controllers = tuple(controllers)
    try:
        offered = (base / "cgroup.controllers").read_text().split()
    except OSError as err:
        return (), f"{base}: {err.strerror}"
    want = [c for c in controllers if c in offered]
    why = ""
    try:
        (base / LEAF).mkdir(mode=0o755, exist_ok=True)
        for _ in range(ATTEMPTS):
            enabled = _enabled(base)
            todo = [c for c in want if c not in enabled]
            if not todo:
                why = ""
                break
            move_all(base, base / LEAF)
            try:
                _write(base / "cgroup.subtree_control", " ".join(f"+{c}" for c in todo))
            except OSError as err:
                if err.errno != errno.EBUSY:
                    raise
                why = f"{base} keeps processes of its own: its controllers cannot be enabled"
    except OSError as err:
        why = f"{base}: {err.strerror or err}"
    try:
        enabled = _enabled(base)
    except OSError:
        enabled = []
    got = tuple(c for c in controllers if c in enabled)
    if not why and len(got) < len(controllers):
        why = f"the delegated cgroup {base} does not offer it (it offers: " \
              f"{' '.join(offered) or 'none'})"
    return got, why


def delegated_layout(layout: CgroupLayout, *, uid: int | None = None, user: str | None = None,
                     proc_cgroup: str | None = None, systemd: bool | None = None) -> CgroupLayout:
    """What a referee running as ``uid`` (default: this process's) may limit of ``layout``
    (:func:`referee.bots.cgroups.find_layout`): each controller in the subtree delegated to
    it, made ready (on v2, :func:`distribute`), at :attr:`CgroupLayout.home`; the others in
    ``missing``, each with its fix in ``fixes``."""
    uid = os.geteuid() if uid is None else uid
    user = user or _user(uid)
    systemd = systemd_runs() if systemd is None else systemd
    own = own_cgroups(proc_cgroup)
    home: dict[str, Path] = {}
    missing: dict[str, str] = {}
    fixes: dict[str, str] = {}
    v1: dict[str, Path] = {}
    for c, mount in layout.v1.items():
        found, why = _v1_home(mount, c, uid, user, own)
        if found is None:
            missing[c], fixes[c] = why, fix_command(user)
        else:
            v1[c], home[c] = mount, found
    v2: tuple[str, ...] = ()
    if layout.v2 is not None and layout.v2_controllers:
        base, why, fix = _v2_home(layout.v2, uid, user, own, systemd)
        if base is not None:
            v2, why = distribute(base, layout.v2_controllers)
            home.update((c, base) for c in v2)
            fix = (f"as root, let {user}'s systemd delegate them: ct-referee sandbox "
                   f"--delegate {user}") if systemd else fix_command(user)
        for c in layout.v2_controllers:
            if c not in v2:
                missing[c], fixes[c] = f"v2: {why}", fix
    for c, why in layout.missing.items():
        missing.setdefault(c, why)
    return CgroupLayout(v1=v1, v2=layout.v2, v2_controllers=v2, missing=missing,
                        devices=layout.devices, home=home, fixes=fixes)


# -- what root runs once ------------------------------------------------------------------------


def delegate(user: str, layout: CgroupLayout, *, systemd: bool | None = None,
             units: Path = Path("/etc/systemd/system"),
             processes: Path = Path("/proc")) -> list[str]:
    """As root, hand ``user`` the cgroups its referee limits bots with, in every hierarchy of
    ``layout`` that has one of memory, pids, cpu or io; returns what was done, a line each.

    v1: ``<mount>/ct-referee-USER``, the user's. v2 without systemd: the same folder, with the
    controllers enabled for its children, and the user's running processes moved into its
    ``session`` (:func:`delegate_v2`). v2 with systemd: a drop-in in ``units`` so that the
    user's systemd may delegate every controller (:func:`systemd_delegation`).

    :raises DelegationError: for an unknown user, or a folder that cannot be made.
    """
    try:
        pw = pwd.getpwnam(user)
    except KeyError:
        raise DelegationError(f"no user {user!r} here") from None
    if pw.pw_uid == 0:
        raise DelegationError("root needs no delegation")
    systemd = systemd_runs() if systemd is None else systemd
    lines = []
    try:
        for mount in sorted(set(layout.v1.values())):
            home = mount / home_name(user)
            home.mkdir(mode=0o755, exist_ok=True)
            os.chown(home, pw.pw_uid, pw.pw_gid)
            home.chmod(0o755)
            names = ",".join(c for c, m in layout.v1.items() if m == mount)
            lines.append(f"v1 {names}: {home} is {user}'s")
            agent = _read(mount / "release_agent").strip()
            if agent:  # run as root on an emptied group marked notify_on_release
                lines.append(f"note: {mount} has a release_agent ({agent}): {user} may have "
                             f"root run it on the paths of its own groups")
        if layout.v2 is not None and layout.v2_controllers:
            if systemd:
                lines += systemd_delegation(pw, layout.v2, units)
            else:
                lines += delegate_v2(pw, layout.v2, layout.v2_controllers, processes)
    except OSError as err:
        raise DelegationError(f"cannot delegate to {user}: {err}") from None
    return lines


def delegate_v2(pw: pwd.struct_passwd, mount: Path, controllers: Iterable[str],
                processes: Path = Path("/proc")) -> list[str]:
    """As root on a v2 hierarchy without systemd: ``<mount>/ct-referee-USER`` with
    ``controllers`` enabled for its children, it and its ``session`` the user's, and every
    process of the user (its real uid) outside it moved into ``session``, but those in a
    cgroup the user owns (its own delegations)."""
    want = tuple(controllers)
    top = (mount / "cgroup.subtree_control").read_text().split()
    if any(c not in top for c in want):  # the root cgroup is exempt from no-internal-process
        _write(mount / "cgroup.subtree_control", " ".join(f"+{c}" for c in want))
    user = pw.pw_name
    home = mount / home_name(user)
    home.mkdir(mode=0o755, exist_ok=True)
    leaf = home / LEAF
    leaf.mkdir(mode=0o755, exist_ok=True)
    for folder in (home, leaf):
        for path in (folder, *(folder / f for f in V2_FILES)):
            os.chown(path, pw.pw_uid, pw.pw_gid)
    enabled, why = distribute(home, want)
    if why:
        raise OSError(why)
    moved = 0
    for pid in _processes_of(pw.pw_uid, processes):
        where = own_cgroups(_read(processes / pid / "cgroup")).get("")
        if where is None:
            continue
        there = mount / where.lstrip("/")
        if there.is_relative_to(home) or (there != mount and _owner(there) == pw.pw_uid):
            continue
        with contextlib.suppress(OSError):  # gone meanwhile, or a kernel thread's
            _write(leaf / "cgroup.procs", pid)
            moved += 1
    return [f"v2 {','.join(enabled)}: {home} is {user}'s, its processes in {leaf}",
            f"moved {moved} running process(es) of {user} into {leaf}: a referee started from "
            f"any of them (a shell, a tmux server) uses the subtree; one started outside it "
            f"later (a new login) cannot enter it on its own (the kernel's common-ancestor "
            f"rule): run this command again then"]


def systemd_delegation(pw: pwd.struct_passwd, mount: Path, units: Path) -> list[str]:
    """As root on a v2 hierarchy run by systemd: a drop-in for the user's ``user@UID.service``
    that delegates memory, pids, cpu and io (many systems delegate only memory and pids to a
    user), and how the user then starts the referee."""
    uid, user = pw.pw_uid, pw.pw_name
    manager = mount / f"user.slice/user-{uid}.slice/user@{uid}.service"
    offered = _read(manager / "cgroup.controllers").split()
    lines = []
    if not offered or any(c not in offered for c in WANTED):
        folder = units / f"user@{uid}.service.d"
        folder.mkdir(mode=0o755, parents=True, exist_ok=True)
        (folder / DROP_IN).write_text(f"[Service]\nDelegate={' '.join(WANTED)}\n")
        reload = subprocess.run(["systemctl", "daemon-reload"], capture_output=True, text=True,
                                check=False, timeout=60)
        lines.append(f"wrote {folder / DROP_IN} (Delegate={' '.join(WANTED)})"
                     + ("" if reload.returncode == 0 else
                        f"; systemctl daemon-reload failed: {reload.stderr.strip()[:200]}"))
        lines.append(f"it holds once {user}'s systemd starts again: every session of {user}'s "
                     f"closed, or as root: systemctl restart user@{uid}.service")
    else:
        lines.append(f"{user}'s systemd delegates {' '.join(offered)} already")
    lines.append(f"{user} starts the referee with: {SYSTEMD_RUN} ct-referee ...; a league "
                 f"that outlives the login also needs: loginctl enable-linger {user}")
    return lines


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def _owner(path: Path) -> int | None:
    try:
        return path.stat().st_uid
    except OSError:
        return None


def _processes_of(uid: int, processes: Path) -> list[str]:
    """The pids whose real uid is ``uid``."""
    found = []
    for entry in os.listdir(processes):
        if not entry.isdigit():
            continue
        for line in _read(processes / entry / "status").splitlines():
            if line.startswith("Uid:"):
                if line.split()[1] == str(uid):
                    found.append(entry)
                break
    return found


WEAKER = {
    "memory": "memory: no cgroup, RLIMIT_DATA only (each process's private memory: shared "
              "memory, memfd, /dev/shm and /tmp are not counted, and a bot out of memory "
              "crashes instead of a memory fault)",
    "pids": "processes: no cgroup, RLIMIT_NPROC only (counted per uid)",
    "cpu": "CPU: no cgroup, no limit (a bot may take every core, and keeps its full weight "
           "while not on move)",
}
"""What a bot's limit falls back to without its cgroup controller."""
NO_CONTROLLER = "mount cgroup2 (or the v1 controller) on /sys/fs/cgroup"
"""The fix where the machine has no such controller at all."""


def weaker_limits(layout: CgroupLayout) -> tuple[str, ...]:
    """The limits ``layout`` leaves weaker than a cgroup's, a line each, then one line with
    what to run to fix them (none: every limit holds)."""
    weak = [c for c in CONTROLLERS if layout.where(c) is None]
    if not weak:
        return ()
    fixes = dict.fromkeys(layout.fixes.get(c, NO_CONTROLLER) for c in weak)
    return (*(WEAKER[c] for c in weak), f"to fix: {'; '.join(fixes)}")
