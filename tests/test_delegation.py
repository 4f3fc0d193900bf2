"""A referee that is not root limits its bots with the cgroups delegated to its user (issue 37):
it finds them itself (:mod:`referee.bots.delegation`), on cgroup v1 and v2, or it says which
limit is weaker and the one command that fixes it.

Real where the machine allows: root's ``ct-referee sandbox --delegate USER``, then the probes
and a tournament of hostile bots run by a fresh user with a subordinate range
(:class:`test_subuid.Organiser`), on the v1 hierarchies; the v2 delegation mechanics (the
kernel's common-ancestor rule, its no-internal-process rule, ``cgroup.kill``) on the machine's
own v2 hierarchy through its ``hugetlb`` controller, where it offers one and systemd does not
run it. The files the referee writes on v2, and systemd's scope, on a fake hierarchy."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import pwd
import secrets
import shutil
import subprocess
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_subuid import INSTANT, PATH, SYSTEM_PY, Organiser

from conftest import BOTS, CLI, ROOT
from referee.bots.cgroups import Cgroup, CgroupLayout, find_layout
from referee.bots.delegation import (
    LEAF,
    DelegationError,
    delegate,
    delegate_v2,
    delegated_layout,
    home_name,
    own_cgroups,
    systemd_delegation,
    systemd_runs,
    weaker_limits,
)
from referee.league.page import render

ATTACKER = BOTS / "hostile" / "attacker.py"


# -- finding the subtree, on fake hierarchies ---------------------------------------------------


def test_own_cgroups_reads_v1_and_v2_lines() -> None:
    text = "12:cpu,cpuacct:/a\n4:memory:/process_api/x\n7:blkio:/\n0::/user.slice/s.scope\n"
    assert own_cgroups(text) == {"cpu": "/a", "cpuacct": "/a", "memory": "/process_api/x",
                                 "io": "/", "": "/user.slice/s.scope"}


def test_a_v1_subtree_is_used_only_when_it_is_the_users(tmp_path: Path) -> None:
    """Root's ``<mount>/ct-referee-USER`` where the user owns it; else the user's own group (a
    login manager's delegation); a controller without either is named, with the fix. A bot's
    group is made inside the subtree, its limits written there."""
    mounts = {c: tmp_path / c for c in ("memory", "pids", "cpu")}
    for mount in mounts.values():
        mount.mkdir()
    (mounts["memory"] / "ct-referee-alice").mkdir()
    (mounts["cpu"] / "user" / "alice").mkdir(parents=True)
    layout = CgroupLayout(v1=dict(mounts))
    me = os.geteuid()
    got = delegated_layout(layout, uid=me, user="alice", proc_cgroup="3:cpu:/user/alice\n",
                           systemd=False)
    assert got.home == {"memory": mounts["memory"] / "ct-referee-alice",
                        "cpu": mounts["cpu"] / "user" / "alice"}
    assert got.where("memory") == "v1" and got.where("pids") is None
    assert got.missing["pids"] == (f"v1 at {mounts['pids']}, but no subtree of it is alice's "
                                   f"({mounts['pids']}/ct-referee-alice: missing)")
    assert got.fixes["pids"].startswith("as root: ")
    assert got.fixes["pids"].endswith(" sandbox --delegate alice")
    assert weaker_limits(got) == (
        "processes: no cgroup, RLIMIT_NPROC only (counted per uid)",
        f"to fix: {got.fixes['pids']}")
    # a folder of another uid is not the referee's
    other = delegated_layout(layout, uid=me + 1, user="alice", proc_cgroup="3:cpu:/user/alice",
                             systemd=False)
    assert other.home == {}
    assert other.missing["memory"].endswith("ct-referee-alice: not alice's)")
    group = Cgroup.create("bot-x", memory_mb=64, pids=16, cpu_cores=0.5, layout=got)
    try:
        assert group.dirs == {"memory": mounts["memory"] / "ct-referee-alice" / "bot-x",
                              "cpu": mounts["cpu"] / "user" / "alice" / "bot-x"}
        assert (group.dirs["memory"] / "memory.limit_in_bytes").read_text() == str(64 << 20)
        assert (group.dirs["cpu"] / "cpu.cfs_quota_us").read_text() == "50000"
        assert not any((m / "ct-referee").exists() for m in mounts.values())
    finally:
        group.remove()


V2_MOUNTINFO = "26 25 0:23 / {root} rw,nosuid,nodev,noexec,relatime - cgroup2 cgroup2 rw\n"


def fake_v2(root: Path, where: str, procs: str = "") -> Path:
    """A fake v2 hierarchy at ``root`` offering memory, pids, cpu and io, and a cgroup
    ``where`` in it (its files as the kernel shows them); returns the cgroup."""
    (root / "cgroup.controllers").write_text("cpuset cpu io memory hugetlb pids rdma\n")
    (root / "cgroup.subtree_control").write_text("")
    group = root / where
    group.mkdir(parents=True)
    (group / "cgroup.controllers").write_text("cpu io memory pids\n")
    for name in ("cgroup.subtree_control", "cgroup.threads"):
        (group / name).write_text("")
    (group / "cgroup.procs").write_text(procs)
    return group


@pytest.mark.process  # systemctl, asked about the unmarked scope
def test_a_systemd_scope_delegated_to_the_referee_is_made_ready(tmp_path: Path) -> None:
    """``systemd-run --user --scope -p Delegate=yes``: the scope, marked by systemd
    (``user.delegate``), gets its processes moved into ``session`` and the controllers enabled
    for its children; each bot's group is made beside ``session``. Unmarked, under systemd, a
    cgroup the user owns is left alone (a terminal's scope is the user's too): the fix is to
    start the referee in a delegated scope."""
    scope = fake_v2(tmp_path, "user.slice/user@1000.service/app.slice/run-r1.scope", "4242\n")
    layout = find_layout(V2_MOUNTINFO.format(root=tmp_path))
    me = os.geteuid()
    own = "0::/user.slice/user@1000.service/app.slice/run-r1.scope\n"
    bare = delegated_layout(layout, uid=me, user="alice", proc_cgroup=own, systemd=True)
    assert bare.home == {} and bare.fixes["memory"] == (
        "start the referee with systemd-run --user --scope -p Delegate=yes ct-referee ...")
    assert "is not delegated to alice" in bare.missing["cpu"]
    try:
        os.setxattr(scope, "user.delegate", b"1")
    except OSError as err:
        pytest.skip(f"no user xattrs on {tmp_path}: {err}")
    got = delegated_layout(layout, uid=me, user="alice", proc_cgroup=own, systemd=True)
    assert got.v2_controllers == ("memory", "pids", "cpu", "io") and got.missing == {}
    assert set(got.home.values()) == {scope}
    assert (scope / LEAF / "cgroup.procs").read_text() == "4242"  # moved before enabling
    assert (scope / "cgroup.subtree_control").read_text() == "+memory +pids +cpu +io"
    group = Cgroup.create("bot-x", memory_mb=256, pids=32, cpu_cores=1.5, layout=got)
    leaf = scope / "bot-x"
    assert set(group.dirs.values()) == {leaf}
    assert (leaf / "memory.max").read_text() == str(256 << 20)
    assert (leaf / "pids.max").read_text() == "32" and (leaf / "cpu.max").read_text() == \
        "150000 100000"
    assert not (tmp_path / "ct-referee").exists()  # a root referee's place, untouched
    assert (tmp_path / "cgroup.subtree_control").read_text() == ""
    # a second referee process in the scope finds it from its session
    again = delegated_layout(layout, uid=me, user="alice",
                             proc_cgroup=own.strip() + f"/{LEAF}\n", systemd=True)
    assert set(again.home.values()) == {scope} and again.missing == {}


def test_a_v2_subtree_root_handed_over_and_the_process_outside_it(tmp_path: Path) -> None:
    """Without systemd: inside ``<mount>/ct-referee-USER/session`` the subtree is used; a
    process outside it is told that it cannot enter alone and what to run; a subtree that does
    not offer cpu names it."""
    home = fake_v2(tmp_path, "ct-referee-alice")
    (home / "cgroup.controllers").write_text("memory pids\n")
    layout = find_layout(V2_MOUNTINFO.format(root=tmp_path))
    me = os.geteuid()
    inside = delegated_layout(layout, uid=me, user="alice", proc_cgroup=f"0::/ct-referee-alice/"
                              f"{LEAF}\n", systemd=False)
    assert inside.v2_controllers == ("memory", "pids")
    assert inside.where("cpu") is None and "does not offer it" in inside.missing["cpu"]
    assert inside.fixes["cpu"].endswith(" sandbox --delegate alice")
    outside = delegated_layout(layout, uid=me, user="alice", proc_cgroup="0::/\n",
                               systemd=False)
    assert outside.home == {}
    assert outside.missing["memory"] == (f"v2: {home} is alice's, but this process is outside "
                                         f"it (in /): on cgroup v2 a process enters a "
                                         f"delegated subtree only by root's hand")
    assert "again (it moves alice's running processes in)" in outside.fixes["memory"]
    nothing = delegated_layout(layout, uid=me + 1, user="bob", proc_cgroup="0::/\n",
                               systemd=False)
    assert nothing.missing["pids"] == "v2: no cgroup v2 subtree is bob's (the referee is in /)"


def test_weaker_limits_name_each_limit_and_one_fix() -> None:
    assert weaker_limits(CgroupLayout(v1={c: Path("/x") for c in ("memory", "pids", "cpu")})) \
        == ()
    lines = weaker_limits(CgroupLayout(missing={"memory": "m", "cpu": "c"},
                                       fixes={"memory": "as root: X", "cpu": "as root: X"}))
    assert lines[0].startswith("memory: no cgroup, RLIMIT_DATA only (") and \
        "memfd, /dev/shm and /tmp are not counted" in lines[0]
    assert lines[1].startswith("processes: ") and lines[2].startswith("CPU: no cgroup, no limit")
    assert lines[3] == ("to fix: as root: X; mount cgroup2 (or the v1 controller) on "
                        "/sys/fs/cgroup")


def test_the_league_page_names_the_weaker_limits() -> None:
    page = render({"name": "l", "live": True, "rows": [],
                   "limits": ["CPU: no cgroup, no limit <b>", "to fix: as root: X"]})
    assert ("<p class=bad>Weaker bot limits here: CPU: no cgroup, no limit &lt;b&gt;; to fix: "
            "as root: X.</p>") in page
    assert "Weaker bot limits" not in render({"name": "l", "live": True, "rows": []})


@pytest.mark.process
def test_with_systemd_root_writes_a_drop_in_for_the_users_systemd(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where systemd runs v2, the user's systemd delegates; root's one command adds cpu and
    io to what it delegates (many give a user memory and pids only) and reloads systemd."""
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    (bin_ / "systemctl").write_text(f"#!/bin/sh\necho \"$@\" >> {tmp_path}/called\n")
    (bin_ / "systemctl").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_}:{os.environ['PATH']}")
    mount = tmp_path / "cgroup"
    manager = mount / "user.slice/user-1000.slice/user@1000.service"
    manager.mkdir(parents=True)
    (manager / "cgroup.controllers").write_text("memory pids\n")
    pw = pwd.struct_passwd(("alice", "x", 1000, 1000, "", "/home/alice", "/bin/sh"))
    lines = systemd_delegation(pw, mount, tmp_path / "units")
    drop_in = tmp_path / "units" / "user@1000.service.d" / "ct-referee-delegate.conf"
    assert drop_in.read_text() == "[Service]\nDelegate=memory pids cpu io\n"
    assert (tmp_path / "called").read_text() == "daemon-reload\n"
    assert lines[0] == f"wrote {drop_in} (Delegate=memory pids cpu io)"
    assert "systemctl restart user@1000.service" in lines[1]
    assert lines[2].startswith("alice starts the referee with: systemd-run --user --scope -p "
                               "Delegate=yes ct-referee ...")
    (manager / "cgroup.controllers").write_text("cpu io memory pids\n")
    assert systemd_delegation(pw, mount, tmp_path / "units")[0] == \
        "alice's systemd delegates cpu io memory pids already"


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to hand a folder to another user")
def test_root_hands_each_v1_hierarchy_a_folder_once_and_names_a_release_agent(
        tmp_path: Path) -> None:
    """On v1 (a fake one): one folder a hierarchy (co-mounted controllers once), the user's; a
    second run changes nothing; a hierarchy with a ``release_agent`` is named (the user may
    have root run it on its own groups' paths)."""
    nobody = pwd.getpwnam("nobody")
    cpu, memory = tmp_path / "cpu,cpuacct", tmp_path / "memory"
    for mount in (cpu, memory):
        mount.mkdir()
    (memory / "release_agent").write_text("/sbin/agent\n")
    layout = CgroupLayout(v1={"memory": memory, "cpu": cpu, "io": cpu})
    for _ in range(2):
        lines = delegate("nobody", layout, systemd=False)
        assert lines == [f"v1 cpu,io: {cpu}/ct-referee-nobody is nobody's",
                         f"v1 memory: {memory}/ct-referee-nobody is nobody's",
                         f"note: {memory} has a release_agent (/sbin/agent): nobody may have "
                         f"root run it on the paths of its own groups"]
    for mount in (cpu, memory):
        st = (mount / "ct-referee-nobody").stat()
        assert (st.st_uid, st.st_gid, st.st_mode & 0o7777) == (nobody.pw_uid, nobody.pw_gid,
                                                                0o755)


def test_delegating_to_no_one_or_to_root_is_refused() -> None:
    with pytest.raises(DelegationError, match="no user 'no-such-user-ct' here"):
        delegate("no-such-user-ct", CgroupLayout())
    with pytest.raises(DelegationError, match="root needs no delegation"):
        delegate(pwd.getpwuid(0).pw_name, CgroupLayout())


# -- the kernel's own v2 rules ------------------------------------------------------------------


UNIFIED_LOCK = Path("/tmp/ct-referee-test-unified.lock")
"""Held while a test changes the v2 root's ``cgroup.subtree_control`` (two test processes
would take ``hugetlb`` from each other)."""

USER_SIDE = textwrap.dedent("""\
    import json, os, subprocess, sys
    from pathlib import Path
    from referee.bots.cgroups import Cgroup, CgroupLayout
    from referee.bots.delegation import delegated_layout
    mount, other = Path(sys.argv[1]), Path(sys.argv[2])
    sys.stdin.readline()  # held until root has placed this process
    layout = delegated_layout(CgroupLayout(v2=mount, v2_controllers=("hugetlb",)),
                              systemd=False)
    out = {"self": Path("/proc/self/cgroup").read_text().strip().splitlines()[-1],
           "home": sorted(str(p) for p in layout.home.values()),
           "missing": layout.missing.get("hugetlb", ""), "fix": layout.fixes.get("hugetlb", "")}
    if layout.home:
        group = Cgroup.create("bot-t", memory_mb=0, pids=0, cpu_cores=0, layout=layout)
        child = subprocess.Popen(["sleep", "60"])
        group.attach(child.pid)
        out["child"] = Path(f"/proc/{child.pid}/cgroup").read_text().strip().splitlines()[-1]
        try:  # a subtree of the same user's, but not below the same delegation
            with open(other / "cgroup.procs", "w") as f:
                f.write(str(child.pid))
            out["across"] = "moved"
        except OSError as err:
            out["across"] = err.errno
        out["emptied"] = group.kill_all()
        child.wait()
        group.remove()
        out["removed"] = not group.dirs and not (Path(out["home"][0]) / "bot-t").exists()
    print(json.dumps(out), flush=True)
""")


@pytest.fixture
def unified() -> Iterator[Path]:
    """The machine's v2 hierarchy, with ``hugetlb`` enabled at its root for the test (and
    disabled after, if it was not before)."""
    if os.geteuid() != 0:
        pytest.skip("needs root to make a user and hand it a cgroup")
    if systemd_runs():
        pytest.skip("systemd runs this v2 hierarchy: its root is not the test's to change")
    mount = find_layout().v2
    if mount is None or "hugetlb" not in (mount / "cgroup.controllers").read_text().split():
        pytest.skip("no v2 hierarchy offering hugetlb here")
    with open(UNIFIED_LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        before = (mount / "cgroup.subtree_control").read_text().split()
        try:
            yield mount
        finally:
            if "hugetlb" not in before:
                with contextlib.suppress(OSError):
                    (mount / "cgroup.subtree_control").write_text("-hugetlb")


def _cgroup_of(pid: int) -> str:
    return own_cgroups(Path(f"/proc/{pid}/cgroup").read_text())[""]


def _rmtree_cgroup(path: Path) -> None:
    """Remove a cgroup and those below it, their processes killed (tests only)."""
    if not path.is_dir():
        return
    for child in [p for p in path.iterdir() if p.is_dir()]:
        _rmtree_cgroup(child)
    for pid in (path / "cgroup.procs").read_text().split():
        with contextlib.suppress(OSError):
            os.kill(int(pid), 9)
    for _ in range(200):
        try:
            path.rmdir()
            return
        except OSError:
            time.sleep(0.01)


@pytest.mark.process
def test_v2_delegation_on_the_kernels_own_hierarchy(unified: Path) -> None:
    """Root hands a user ``<v2>/ct-referee-USER``: the user's running process is moved into
    its ``session``, one in a cgroup the user owns is left where it is. From there the user's
    referee makes a bot's group and moves its child into it (allowed: the common ancestor is
    the user's), cannot move it into another subtree of its own (the ancestor is the root's:
    EACCES), and empties it with ``cgroup.kill``. A process of the user started after is
    outside and told so. A cgroup handed over with a process in it (as systemd's scope is)
    gets its processes moved into ``session`` before its controllers are enabled (the
    no-internal-process rule, real)."""
    name = f"ct-dlg-{secrets.token_hex(3)}"
    made = subprocess.run(["useradd", "-r", "-M", "-d", "/nonexistent", "-s",
                           "/usr/sbin/nologin", name], capture_output=True, text=True, check=False)
    if made.returncode != 0:
        pytest.skip(f"useradd failed: {made.stderr.strip()[:200]}")
    pw = pwd.getpwnam(name)
    home, own, scope = (unified / home_name(name), unified / f"ct-test-own-{name}",
                        unified / f"ct-test-scope-{name}")
    procs: list[subprocess.Popen[str]] = []

    def as_user() -> subprocess.Popen[str]:
        proc = subprocess.Popen(
            ["runuser", "-u", name, "--", "env", "-i", f"PATH={PATH}", f"PYTHONPATH={ROOT}",
             str(SYSTEM_PY), "-c", USER_SIDE, str(unified), str(own)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            cwd="/")
        procs.append(proc)
        deadline = time.monotonic() + 30
        while not _user_pid(proc.pid, pw.pw_uid):
            assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()
            time.sleep(0.01)
        return proc

    def run(proc: subprocess.Popen[str]) -> dict[str, Any]:
        out, err = proc.communicate("go\n", timeout=60)
        assert proc.returncode == 0, err
        return dict(json.loads(out))

    try:
        if not SYSTEM_PY.exists():
            pytest.skip(f"no {SYSTEM_PY}")
        tried = subprocess.run(["runuser", "-u", name, "--", "env", "-i", f"PYTHONPATH={ROOT}",
                                str(SYSTEM_PY), "-c", "import referee"], capture_output=True,
                               text=True, check=False, cwd="/")
        if tried.returncode != 0:
            pytest.skip(f"{name} cannot import this checkout (a private folder above it?): "
                        f"{tried.stderr.strip().splitlines()[-1:]}")
        own.mkdir()  # a cgroup of the user's own (a rootless container's, say)
        for path in (own, own / "cgroup.procs"):
            os.chown(path, pw.pw_uid, pw.pw_gid)
        kept, placed = as_user(), as_user()
        kept_pid = _user_pid(kept.pid, pw.pw_uid)
        (own / "cgroup.procs").write_text(str(kept_pid))
        lines = delegate_v2(pw, unified, ("hugetlb",))
        assert lines[0] == f"v2 hugetlb: {home} is {name}'s, its processes in {home / LEAF}"
        assert _cgroup_of(_user_pid(placed.pid, pw.pw_uid)) == f"/{home.name}/{LEAF}"
        assert _cgroup_of(kept_pid) == f"/{own.name}"  # its own: not moved
        assert (home / "cgroup.subtree_control").read_text().split() == ["hugetlb"]
        assert all((home / f).stat().st_uid == pw.pw_uid for f in ("cgroup.procs",
                                                                   "cgroup.subtree_control"))
        inside = run(placed)
        assert inside["home"] == [str(home)] and inside["missing"] == ""
        assert inside["self"] == f"0::/{home.name}/{LEAF}"
        assert inside["child"] == f"0::/{home.name}/bot-t"
        assert inside["across"] == 13  # EACCES: the common ancestor is the root's
        assert inside["emptied"] and inside["removed"]
        outside = run(as_user())  # started after: in the root cgroup
        assert outside["home"] == [] and "this process is outside it (in /)" in \
            outside["missing"] and "again" in outside["fix"], outside
        # systemd's way: a cgroup handed over with the user's process in it
        scope.mkdir()
        for path in (scope, *(scope / f for f in ("cgroup.procs", "cgroup.subtree_control",
                                                  "cgroup.threads"))):
            os.chown(path, pw.pw_uid, pw.pw_gid)
        held = as_user()
        (scope / "cgroup.procs").write_text(str(_user_pid(held.pid, pw.pw_uid)))
        with pytest.raises(OSError):  # the rule itself: a process inside, no controller
            (scope / "cgroup.subtree_control").write_text("+hugetlb")
        ready = run(held)
        assert ready["home"] == [str(scope)] and ready["self"] == f"0::/{scope.name}/{LEAF}"
        assert ready["child"] == f"0::/{scope.name}/bot-t" and ready["emptied"]
        assert (scope / "cgroup.subtree_control").read_text().split() == ["hugetlb"]
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
            proc.communicate()
        for path in (home, own, scope):
            _rmtree_cgroup(path)
        subprocess.run(["userdel", name], capture_output=True, check=False)
        shutil.rmtree(f"/dev/shm/ct-referee-{pw.pw_uid}", ignore_errors=True)  # its trees


def _user_pid(runuser: int, uid: int) -> int:
    """The process of ``uid`` ``runuser`` started (0 until it has)."""
    for child in Path(f"/proc/{runuser}/task/{runuser}/children").read_text().split() \
            if Path(f"/proc/{runuser}").exists() else ():
        status = Path(f"/proc/{child}/status").read_text()
        if next(line for line in status.splitlines() if line.startswith("Uid:")).split()[1] \
                == str(uid) and "python" in Path(f"/proc/{child}/cmdline").read_text():
            return int(child)
    return 0


# -- a referee that is not root, on this machine's hierarchies ----------------------------------


@pytest.fixture
def organiser() -> Iterator[Organiser]:
    """A fresh user with a subordinate range; the cgroups it is handed removed after."""
    user = Organiser()
    try:
        yield user
    finally:
        layout = find_layout()
        for mount in {*layout.v1.values(), *([layout.v2] if layout.v2 else [])}:
            _rmtree_cgroup(mount / home_name(user.name))
        user.close()


def root_delegates(organiser: Organiser) -> str:
    """``ct-referee sandbox --delegate USER``, run as root; its output."""
    done = subprocess.run([CLI, "sandbox", "--delegate", organiser.name], capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def marks(out: str) -> dict[str, str]:
    """``ct-referee sandbox --ascii``'s lines as name (``cgroup memory``, ``sharedmem``) to OK
    or NO."""
    return {" ".join(w[1:3] if w[1] == "cgroup" else w[1:2]): w[0]
            for w in (line.split() for line in out.splitlines())
            if len(w) > 2 and w[0] in ("OK", "NO")}


@pytest.mark.process
@pytest.mark.slow
def test_the_sandbox_command_names_the_fix_and_root_applies_it(organiser: Organiser) -> None:
    """As the user, before: the cgroup lines say which controller has no subtree and the
    command to run; the weaker limits are named; shared memory, /dev/shm and /tmp get past
    the memory limit (exit 1). Root runs that command once; after, every line and every probe
    passes (exit 0). ``--delegate`` as the user itself is refused in one line."""
    before = organiser.cli("sandbox", "--ascii")
    fix = f"sandbox --delegate {organiser.name}"
    assert before.returncode == 1, before.stdout + before.stderr
    seen = marks(before.stdout)
    assert all(seen[f"cgroup {c}"] == "NO" for c in ("memory", "pids", "cpu")), before.stdout
    assert f"no subtree of it is {organiser.name}'s" in before.stdout and fix in before.stdout
    assert "weaker limits here:\n  memory: no cgroup, RLIMIT_DATA only" in before.stdout
    assert all(seen[p] == "NO" for p in ("sharedmem", "shm", "tmp")), before.stdout
    refused = organiser.cli("sandbox", "--delegate", organiser.name)
    assert refused.returncode == 1 and "--delegate is run as root" in refused.stderr
    said = root_delegates(organiser)
    assert f"memory: /sys/fs/cgroup/memory/{home_name(organiser.name)} is {organiser.name}'s" \
        in said or "memory" not in find_layout().v1, said
    after = organiser.cli("sandbox", "--ascii")
    assert after.returncode == 0, after.stdout + after.stderr
    assert "(delegated)" in after.stdout and "weaker limits" not in after.stdout
    assert [n for n, m in marks(after.stdout).items() if m == "NO"] == ["setpriv"], after.stdout
    assert marks(after.stdout)["sharedmem"] == "OK" and "memory fault" in after.stdout
    # the CPU weight on and off move, in the user's own groups
    (organiser.root / "weight.py").write_text(WEIGHT_DRIVER)
    organiser.own()
    weights = organiser.run(str(organiser.python), str(organiser.root / "weight.py"))
    assert weights.returncode == 0, weights.stderr
    cpu = find_layout().v1.get("cpu")
    if cpu is not None:
        assert weights.stdout.split() == [str(cpu / home_name(organiser.name) / "bot-w"),
                                          "2", "1024"], weights.stdout


WEIGHT_DRIVER = textwrap.dedent("""\
    from referee.bots.cgroups import Cgroup
    from referee.bots.probing import capabilities
    group = Cgroup.create("bot-w", memory_mb=64, pids=8, cpu_cores=0.5,
                          layout=capabilities().layout)
    try:
        shares = group.dirs["cpu"] / ("cpu.shares" if group.version("cpu") == "v1"
                                      else "cpu.weight")
        group.on_move(False)
        off = shares.read_text().strip()
        group.on_move(True)
        print(group.dirs["cpu"], off, shares.read_text().strip())
    finally:
        group.kill_all()
        group.remove()
""")


HOSTILE = {"sharedmem": "memory", "shm": "memory", "tmp": "memory", "forks": "refused",
           "cpu": "refused"}
"""The hostile entrants (each an attack of ``referee/bots/probes/attacks.py``) and what stops
them: the memory limit (a ``memory`` fault) or a limit the probe meets (its pids, its CPU
quota)."""
QUOTA = 0.25


def hostile_tournament(organiser: Organiser, output: str) -> Path:
    """A gauntlet of the hostile entrants, each against an honest instant bot."""
    entrants = [{"name": "honest", "command": f"{SYSTEM_PY} instant_bot.py",
                 "workdir": "honest"}]
    for name in HOSTILE:
        folder = organiser.root / name
        if not folder.exists():
            folder.mkdir(mode=0o755)
            shutil.copy(ATTACKER, folder / "attacker.py")
        entrants.append({"name": name, "command": f"{organiser.python} attacker.py {name}"
                         + (f" {QUOTA}" if name == "cpu" else ""), "workdir": name})
    honest = organiser.root / "honest"
    if not honest.exists():
        honest.mkdir(mode=0o755)
        shutil.copy(INSTANT, honest / "instant_bot.py")
    config = organiser.root / f"{output}.yaml"
    config.write_text(yaml.safe_dump({
        "name": output, "players": 2, "target": 1, "format": "gauntlet",
        "candidates": list(HOSTILE), "preflight": "off", "concurrency": 2, "output": output,
        # the memory limit alone may stop the fillers: /tmp and /dev/shm twice their size,
        # no file size limit (a memfd's is one); the attacks run before ready at a quarter
        # core: a start-up clock of a minute, so that a loaded machine never turns a limit's
        # outcome into a start-up fault (the 10 s default leaves little room at a load of 15 on
        # 2 cores, where this test was seen to fail once)
        "limits": {"memory_mb": 128, "tmp_mb": 2048, "file_mb": 0, "cpus": QUOTA, "pids": 32,
                   "startup_ms": 60_000},
        "entrants": entrants}, sort_keys=False))
    organiser.own()
    return config


def outcomes(out: Path) -> dict[str, list[str]]:
    """Each hostile entrant's outcome in every match: ``memory`` for a memory fault, else
    its stderr's verdict line (``refused NAME`` or ``ALLOWED NAME: ...``)."""
    found: dict[str, list[str]] = {name: [] for name in HOSTILE}
    for line in (out / "results.jsonl").read_text().splitlines():
        match = json.loads(line)
        for seat, name in enumerate(match["players"]):
            if name not in HOSTILE:
                continue
            faults = [f["fault"] for f in match["faults"] if f["seat"] == seat]
            log = out / "logs" / match["id"] / f"{seat}-{name}.stderr"
            verdict = [w for w in (log.read_text() if log.exists() else "").splitlines()
                       if w.startswith(("refused", "ALLOWED"))]
            found[name].append("memory" if faults == ["memory"] else
                               verdict[0] if verdict else f"faults {faults}")
    return found


@pytest.mark.process
@pytest.mark.slow
def test_hostile_bots_are_stopped_in_a_tournament_run_by_a_user_with_a_delegated_subtree(
        organiser: Organiser) -> None:
    """The teacher's case. Without a delegated subtree the header names each weaker limit
    and the command that fixes it, and 1 GiB of shared memory (a memfd and MAP_SHARED), of
    /dev/shm and of /tmp get past a 128 MiB limit. After root's one command, the same
    tournament run by the same user: each filler is a ``memory`` fault, the fork bomb meets
    its pids limit and the CPU burner (4 processes for a second) gets no more than its quota
    of a quarter core; nothing gets through."""
    control = organiser.cli("tournament", str(hostile_tournament(organiser, "control")))
    shown = control.stdout + control.stderr
    assert control.returncode == 0, shown
    assert "weaker bot limits here: memory: no cgroup, RLIMIT_DATA only" in shown
    assert f"to fix: as root: ct-referee sandbox --delegate {organiser.name}" in shown
    got = outcomes(organiser.root / "control")
    for name in ("sharedmem", "shm", "tmp"):
        assert got[name] and all(o.startswith(f"ALLOWED {name}") for o in got[name]), got
    root_delegates(organiser)
    done = organiser.cli("tournament", str(hostile_tournament(organiser, "held")))
    shown = done.stdout + done.stderr
    assert done.returncode == 0, shown
    assert "weaker bot limits" not in shown and "cgroup memory, cgroup pids, cgroup cpu" in shown
    got = outcomes(organiser.root / "held")
    assert got == {name: [HOSTILE[name] if HOSTILE[name] == "memory" else f"refused {name}"] * 2
                   for name in HOSTILE}, got


@pytest.mark.process
@pytest.mark.slow
def test_the_league_names_the_weaker_limits_on_its_terminal_and_page(
        organiser: Organiser) -> None:
    """A teacher's league without a delegated subtree says which limits are weaker, and the
    fix, in its first lines and on its page; with one, neither says anything."""
    subs = organiser.root / "subs"
    for author in ("ann", "bob"):
        (subs / author).mkdir(parents=True)
        shutil.copy(INSTANT, subs / author / "bot.py")
    for run in ("weak", "held"):
        config = organiser.root / f"{run}.yaml"
        config.write_text(yaml.safe_dump({
            "name": run, "submissions": "subs", "target": 1, "placement": 2,
            "poll_s": 0.2, "settle_s": 0.5, "output": run}))
        organiser.own()
        if run == "held":
            root_delegates(organiser)
        done = organiser.cli("league", str(config), "--max-matches", "2")
        assert done.returncode == 0, done.stdout + done.stderr
        page = (organiser.root / run / "report" / "index.html").read_text()
        if run == "weak":
            line = next(x for x in done.stdout.splitlines() if "weaker bot limits here" in x)
            assert "memory: no cgroup" in line and "CPU: no cgroup, no limit" in line
            assert line.endswith(f"sandbox --delegate {organiser.name}")
            assert "Weaker bot limits here: memory: no cgroup" in page
        else:
            assert "weaker bot limits" not in done.stdout, done.stdout
            assert "Weaker bot limits" not in page
