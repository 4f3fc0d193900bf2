"""A referee that is not root (issue 18, attack 3): each bot runs as one of the organiser's
subordinate uids (``/etc/subuid``, ``newuidmap``), never as the organiser's own uid; without
a range the referee refuses, naming the fix, unless the configuration accepts a shared uid.

The tests run the referee for real as a fresh unprivileged user (``ct-test-<random>``, made
with ``useradd`` and removed at the end) through a venv of Debian's ``/usr/bin/python3`` that
reaches this checkout and its venv's packages; where that cannot be set up (not root, no
``useradd`` or ``newuidmap``, another Python minor version, a checkout in a private folder)
they skip saying why."""

from __future__ import annotations

import json
import os
import pwd
import secrets
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import BOTS, ROOT
from referee.bots.cgroups import find_layout
from referee.bots.command import build_argv
from referee.bots.policy import BOT_UIDS, SandboxError, SandboxPolicy
from referee.bots.probing import Capabilities, Check
from referee.bots.subids import SubIds, find, fix, parse
from referee.bots.uids import processes_of

WHOAMI = BOTS / "hostile" / "whoami.py"
PIPES = BOTS / "hostile" / "pipes.py"
INSTANT = ROOT / "bench" / "instant_bot.py"
SYSTEM_PY = Path("/usr/bin/python3")
PATH = "/usr/local/bin:/usr/bin:/bin"


# -- the ranges, in process ---------------------------------------------------------------------


def test_the_ranges_exclude_other_users_and_the_root_referees_uids(tmp_path: Path) -> None:
    uid = os.geteuid()
    me = pwd.getpwuid(uid).pw_name
    subuid, subgid = tmp_path / "subuid", tmp_path / "subgid"
    subuid.write_text(f"# a comment\nother:100000:10\n{me}:100005:10\nbad line\n"
                      f"{uid}:64998:4\n")
    subgid.write_text(f"{me}:200000:20\n")
    found = find(uid, BOT_UIDS, subuid, subgid)
    assert isinstance(found, SubIds), found
    # 100005-100009 are also other's; 64998-64999 are a root referee's: left out
    assert found.uids == (*range(100010, 100015), 65000, 65001)
    assert found.gids == tuple(range(200000, 200007))
    assert found.gid(65000) == 200005
    assert found.describe() == "100010-100014,65000-65001"


def test_without_a_range_the_reason_names_the_exact_fix(tmp_path: Path) -> None:
    uid = os.geteuid()
    me = pwd.getpwuid(uid).pw_name
    (tmp_path / "subuid").write_text("other:100000:65536\nthird:231072:100\n")
    (tmp_path / "subgid").write_text(f"{me}:300000:10\n")
    why = find(uid, BOT_UIDS, tmp_path / "subuid", tmp_path / "subgid")
    assert isinstance(why, str)
    if shutil.which("newuidmap", path=PATH) and shutil.which("newgidmap", path=PATH):
        assert why == (f"user {me} has no subordinate uids in {tmp_path / 'subuid'}: as root, "
                       f"usermod --add-subuids 300010-365545 --add-subgids 300010-365545 {me} "
                       f"(or add the line {me}:300010:65536 to /etc/subuid and /etc/subgid)")
    else:
        assert why.endswith("not found: apt-get install uidmap")
    assert fix("x", parse("")) .startswith("as root, usermod --add-subuids 100000-165535 ")


def test_a_folder_the_subordinate_uid_cannot_read_is_refused_before_the_bot_starts(
        tmp_path: Path) -> None:
    """In mode ``subuid`` bwrap reaches the folders as the organiser but the bot reads them as
    "other": a bot folder (or runtime) not ``o+rx`` is refused in one line, naming the fix."""
    caps = Capabilities((Check("bwrap", True, ""), Check("subuid", True, "100000-100009")),
                        find_layout(), root=False)
    folder = tmp_path / "bot"
    folder.mkdir(mode=0o700)
    (folder / "bot.py").write_text("print('ready x')\n")
    with pytest.raises(SandboxError, match=r"the bot folder '.*/bot' is not readable by the "
                                           r"bot's uid 100003 \(mode drwx------\): chmod o\+rx"):
        build_argv([sys.executable, "bot.py"], folder, caps=caps, uid=100003,
                   policy=SandboxPolicy(mode="subuid", gid=100003))


# -- a real referee as an unprivileged user -----------------------------------------------------


class Organiser:
    """A fresh user with a subordinate range, a venv it can run, and a folder of its own."""

    def __init__(self) -> None:
        why = self._why_not()
        if why:
            pytest.skip(why)
        self.name = f"ct-test-{secrets.token_hex(4)}"
        lines = parse(Path("/etc/subuid").read_text()) + parse(Path("/etc/subgid").read_text())
        # past every range, at a random place: two test runs at once take different ranges
        self.first = max([200000, *(first + count for _, first, count in lines)]) + \
            1000 * secrets.randbelow(100000)
        self.count = 1000
        span = f"{self.first}-{self.first + self.count - 1}"
        # -r: a system user gets no subordinate ids of its own; the range below is the one
        made = subprocess.run(["useradd", "-r", "-M", "-d", "/nonexistent", "-s",
                               "/usr/sbin/nologin", self.name], capture_output=True, text=True,
                              check=False)
        if made.returncode != 0:
            pytest.skip(f"useradd failed: {made.stderr.strip()[:200]}")
        self.root = Path(tempfile.mkdtemp(prefix="ct-subuid-", dir="/var/tmp"))
        try:
            subprocess.run(["usermod", "--add-subuids", span, "--add-subgids", span, self.name],
                           check=True, capture_output=True)
            self.uid = pwd.getpwnam(self.name).pw_uid
            self.root.chmod(0o755)
            self.python = self._venv()
            shutil.chown(self.root, self.name)
            tried = self.run(str(self.python), "-c", "import referee.cli")
            if tried.returncode != 0:
                pytest.skip(f"{self.name} cannot import this checkout (a private folder "
                            f"above it?): {tried.stderr.strip()[-200:]}")
        except BaseException:
            self.close()
            raise

    @staticmethod
    def _why_not() -> str:
        if os.geteuid() != 0:
            return "needs root to make a user"
        missing = [p for p in ("useradd", "usermod", "userdel", "runuser", "newuidmap",
                               "newgidmap", "bwrap", "unshare") if not shutil.which(p)]
        if missing:
            return f"missing {', '.join(missing)} (apt-get install uidmap bubblewrap)"
        if not SYSTEM_PY.exists():
            return f"no {SYSTEM_PY}"
        version = subprocess.run([str(SYSTEM_PY), "-c", "import sys; print(sys.version_info[:2])"],
                                 capture_output=True, text=True, check=False).stdout.strip()
        if version != str(sys.version_info[:2]):
            return f"{SYSTEM_PY} is {version}, these tests run {sys.version_info[:2]}"
        return ""

    def _venv(self) -> Path:
        """A venv of the system Python whose ``.pth`` adds this venv's packages and the
        checkout (the tests' Python may live in a folder the user cannot reach)."""
        venv = self.root / "venv"
        subprocess.run([str(SYSTEM_PY), "-m", "venv", "--without-pip", str(venv)], check=True)
        site = Path(sysconfig.get_paths(vars={"base": str(venv), "platbase": str(venv)}
                                        )["purelib"])
        paths = dict.fromkeys([sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"],
                               str(ROOT)])
        (site / "ct-referee.pth").write_text("".join(f"{p}\n" for p in paths))
        return venv / "bin" / "python"

    def run(self, *argv: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
        """``argv`` as the user, in a clean environment (no ``XDG_RUNTIME_DIR``)."""
        return subprocess.run(["runuser", "-u", self.name, "--", "env", "-i", f"PATH={PATH}",
                               "HOME=/nonexistent", "LANG=C.UTF-8", *argv], capture_output=True,
                              text=True, check=False, cwd="/", timeout=timeout)

    def cli(self, *argv: str) -> subprocess.CompletedProcess[str]:
        return self.run(str(self.python), "-c", "from referee.cli import main; main()", *argv)

    def bot(self, name: str) -> Path:
        folder = self.root / name
        folder.mkdir(mode=0o755)
        shutil.copy(WHOAMI, folder / "whoami.py")
        shutil.copy(INSTANT, folder / "instant_bot.py")
        secret = folder / "secret.txt"
        secret.write_text(f"the organiser's secret for {name}\n")
        secret.chmod(0o600)
        return folder

    def own(self) -> None:
        subprocess.run(["chown", "-R", f"{self.name}:", str(self.root)], check=True)

    def config(self, **extra: object) -> Path:
        lines = ["entrants:\n"]
        for name in ("alice", "bob"):
            if not (self.root / name).exists():
                self.bot(name)
            lines.append(f"  - {{name: {name}, command: {SYSTEM_PY} whoami.py, "
                         f"workdir: {name}}}\n")
        keys: dict[str, object] = {"players": 2, "target": 1, "output": "out",
                                   "preflight": "keep"}
        lines += [f"{k}: {json.dumps(v)}\n" for k, v in (keys | extra).items()]
        config = self.root / "t.yaml"
        config.write_text("".join(lines))
        self.own()
        return config

    def close(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)
        subprocess.run(["userdel", self.name], capture_output=True, check=False)
        for table in ("/etc/subuid", "/etc/subgid"):  # userdel may leave the range
            path = Path(table)
            lines = path.read_text().splitlines(keepends=True)
            kept = [line for line in lines if not line.startswith(f"{self.name}:")]
            if kept != lines:
                path.write_text("".join(kept))
        shutil.rmtree(f"/tmp/ct-referee-{getattr(self, 'uid', -1)}", ignore_errors=True)
        # its runtime trees and snapshots in memory (hundreds of MiB a user): no one else's
        shutil.rmtree(f"/dev/shm/ct-referee-{getattr(self, 'uid', -1)}", ignore_errors=True)


@pytest.fixture
def organiser() -> Iterator[Organiser]:
    user = Organiser()
    yield user
    user.close()


def said(log: Path) -> dict[str, str]:
    """What the whoami bot said about itself: its first word to the rest of the line."""
    return {line.split(" ", 1)[0]: line.split(" ", 1)[1]
            for line in log.read_text().splitlines() if " " in line}


@pytest.mark.process
@pytest.mark.slow
def test_each_bot_runs_as_a_subordinate_uid_of_its_own(organiser: Organiser) -> None:
    """A tournament run by the user: in every match the two bots are two different host uids
    of the user's range, never the user's own, with no groups, no capabilities, no-new-privs,
    seccomp and the rlimits; the header says so."""
    done = organiser.cli("tournament", str(organiser.config()))
    shown = done.stdout + done.stderr
    assert done.returncode == 0, shown
    span = range(organiser.first, organiser.first + organiser.count)
    assert f"each bot a subordinate uid of its own: {span[0]}-{span[-1]}" in shown
    matches = sorted(p for p in (organiser.root / "out" / "logs").iterdir()
                     if p.name.startswith("r"))
    assert len(matches) == 2
    for match in matches:
        seen = [said(log) for log in sorted(match.glob("*.stderr"))]
        assert len(seen) == 2, match
        uids = [int(s["HOSTUID"].split()[0]) for s in seen]
        assert uids[0] != uids[1] and all(u in span and u != organiser.uid for u in uids), uids
        for s in seen:
            assert s["GROUPS"] == "[]"  # the organiser's groups are gone
            assert s["CAPS"] == " ".join(["0000000000000000"] * 3)
            assert s["NNP"] == "1 SECCOMP 2"
            # no cgroups for a referee that is not root: the rlimits, set as the bot's uid
            assert s["LIMITS"] == f"nproc=64 data={512 << 20} fsize={64 << 20} core=0"


DRIVER = textwrap.dedent("""\
    import sys
    from pathlib import Path
    from referee.bots.process import Launcher
    from referee.bots.policy import SandboxPolicy
    from referee.game.rules import Deal
    from referee.match.play import Entrant, play_match
    folder, logs, mode = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
    bots = [Entrant(n, ("/usr/bin/python3", "whoami.py", "secret.txt"), folder)
            for n in ("one", "two")]
    play_match("m", bots, lambda k: Deal.from_seed(2, f"h:{k}"), target=1,
               launcher=Launcher(SandboxPolicy(mode=mode)), logs_dir=logs)
""")


@pytest.mark.process
def test_a_bot_cannot_read_the_organisers_private_files(organiser: Organiser) -> None:
    """The bot folder bound live (``play``): its 0600 file, the organiser's, is refused to a
    bot on a subordinate uid; the control, the same bot on the organiser's shared uid (mode
    ``userns``, as ``bot_uids: shared`` was), reads it."""
    folder = organiser.bot("live")
    (organiser.root / "driver.py").write_text(DRIVER)
    organiser.own()
    results = {}
    for mode in ("auto", "userns"):
        logs = organiser.root / f"logs-{mode}"
        done = organiser.run(str(organiser.python), str(organiser.root / "driver.py"),
                             str(folder), str(logs), mode)
        assert done.returncode == 0, done.stderr
        results[mode] = [said(log) for log in sorted(logs.glob("*.stderr"))]
    sub, shared = results["auto"], results["userns"]
    assert len(sub) == len(shared) == 2
    assert all(s["DENIED"] == "secret.txt: Permission denied" for s in sub), sub
    assert {int(s["HOSTUID"].split()[0]) for s in sub}.isdisjoint({organiser.uid})
    assert all(s["READ"] == "secret.txt: the organiser's secret for live" for s in shared)


@pytest.mark.process
def test_without_a_range_the_referee_refuses_naming_the_fix(organiser: Organiser) -> None:
    """The user's range taken away: the tournament stops before play in one line naming the
    usermod fix and the shared-uid escape; with ``bot_uids: shared`` it plays, and says so."""
    span = f"{organiser.first}-{organiser.first + organiser.count - 1}"
    subprocess.run(["usermod", "--del-subuids", span, "--del-subgids", span, organiser.name],
                   check=True, capture_output=True)
    done = organiser.cli("tournament", str(organiser.config()))
    assert done.returncode != 0
    line = done.stderr.strip()
    assert "\n" not in line and line.startswith("error: "), done.stderr
    assert f"user {organiser.name} has no subordinate uids in /etc/subuid" in line
    assert "usermod --add-subuids " in line and f" {organiser.name} (or add the line " in line
    assert line.endswith("or accept a shared uid with bot_uids: shared")
    assert not (organiser.root / "out" / "games").exists()
    done = organiser.cli("tournament", str(organiser.config(bot_uids="shared")))
    assert done.returncode == 0, done.stderr
    assert f"every bot as uid {organiser.uid} (bot_uids: shared)" in done.stdout + done.stderr


PIPES_DRIVER = textwrap.dedent("""\
    import sys
    from pathlib import Path
    from referee.bots.probes.world import first_line
    from referee.bots.process import Launcher, start_process
    from referee.bots.policy import SandboxPolicy
    folder, mode = Path(sys.argv[1]), sys.argv[2]
    launcher = Launcher(SandboxPolicy(mode=mode))
    holder = start_process(["/usr/bin/python3", "pipes.py", "hold", "40"], workdir=folder,
                           launcher=launcher)
    try:
        assert first_line(holder) == "held 40"
        measurer = start_process(["/usr/bin/python3", "pipes.py", "measure"], workdir=folder,
                                 launcher=launcher)
        try:
            print(first_line(measurer))
        finally:
            measurer.stop(0.5)
    finally:
        holder.stop(0.5)
""")


@pytest.mark.process
def test_two_bots_share_no_per_uid_counter(organiser: Organiser) -> None:
    """Attack 3's other half: one bot holds 40 pipes of 1 MiB (10240 of the 16384 pages
    ``fs.pipe-user-pages-soft`` lets a uid have); another, running at the same time, sees its
    own headroom whole on a subordinate uid of its own. The control, both on the organiser's
    shared uid, sees 24 or less: what one bot holds, the other reads (and one bot could hold a uid's
    processes, so others fail to start)."""
    if Path("/proc/sys/fs/pipe-user-pages-soft").read_text().strip() != "16384":
        pytest.skip("fs.pipe-user-pages-soft is not the default here")
    folder = organiser.root / "pipes"
    folder.mkdir(mode=0o755)
    shutil.copy(PIPES, folder / "pipes.py")
    (organiser.root / "pipes_driver.py").write_text(PIPES_DRIVER)
    organiser.own()
    seen = {}
    for mode in ("auto", "userns"):
        done = organiser.run(str(organiser.python), str(organiser.root / "pipes_driver.py"),
                             str(folder), mode)
        assert done.returncode == 0, done.stderr
        seen[mode] = done.stdout.strip()
    assert seen["auto"].startswith("headroom ") and int(seen["auto"].split()[1]) > 40, seen
    # 24 less what the organiser's own pipes (the referee's, the driver's) hold
    assert seen["userns"].startswith("headroom ") and int(seen["userns"].split()[1]) <= 24, seen


ESCAPER = ROOT / "tests" / "bots" / "hostile" / "escaper.py"
ESCAPE_DRIVER = textwrap.dedent("""\
    import json, os, select, sys, time
    from pathlib import Path
    from referee.bots import uids
    from referee.bots.process import Launcher, start_process
    from referee.bots.policy import SandboxPolicy
    folder, mode, flag = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
    uids.CLEAR_S = 1.0
    log = flag.with_suffix(".stderr")
    proc = start_process(["/usr/bin/python3", "escaper.py", mode], workdir=folder,
                         launcher=Launcher(SandboxPolicy(mode="auto")), stderr_path=log)
    lease = proc.lease
    got = b""
    while not got.endswith(b"\\n"):
        select.select([proc.stdout], [], [], 10)
        got += os.read(proc.stdout, 100)
    deadline = time.monotonic() + 5
    while len(uids.processes_of(lease.uid)) != 2 and time.monotonic() < deadline:
        time.sleep(0.01)  # the middle process of the double fork, exiting
    report = {"uid": lease.uid, "ns": lease.namespace, "child": got.decode().strip(),
              "before": len(uids.processes_of(lease.uid))}
    flag.with_suffix(".uid").write_text(str(lease.uid))
    while mode == "foreign" and not flag.exists():  # the test starts a process of the uid
        time.sleep(0.01)
    t0 = time.monotonic()
    proc.stop(0.1)
    report |= {"stop_s": time.monotonic() - t0, "held": lease.held,
               "quarantined": list(lease.quarantined),
               "left": uids.processes_of(lease.uid), "outlived": list(proc.outlived),
               "log": log.read_text()}
    again = [uids.allocate([lease.uid]) for _ in range(1)] if not lease.held else []
    report["again"] = [a.uid for a in again]
    print(json.dumps(report))
""")


def escape(organiser: Organiser, mode: str) -> dict[str, Any]:
    """The escaper bot run and stopped by the organiser (``mode``: the escaper's, or
    ``foreign``: a sleeper, and root starts a process of the bot's uid outside its
    namespace before the stop)."""
    folder = organiser.root / "escaper"
    if not folder.exists():
        folder.mkdir(mode=0o755)
        shutil.copy(ESCAPER, folder / "escaper.py")
        (organiser.root / "escape_driver.py").write_text(ESCAPE_DRIVER)
        organiser.own()
    flag = organiser.root / f"flag-{mode}"
    argv = [str(organiser.python), str(organiser.root / "escape_driver.py"), str(folder), mode,
            str(flag)]
    if mode != "foreign":
        done = organiser.run(*argv)
        assert done.returncode == 0, done.stderr
        return dict(json.loads(done.stdout))
    driver = subprocess.Popen(
        ["runuser", "-u", organiser.name, "--", "env", "-i", f"PATH={PATH}", "HOME=/nonexistent",
         *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd="/")
    other = None
    try:
        uid_file = flag.with_suffix(".uid")
        deadline = time.monotonic() + 60
        while not uid_file.exists():
            assert driver.poll() is None, driver.communicate()
            assert time.monotonic() < deadline
            time.sleep(0.01)
        uid = uid_file.read_text()
        other = subprocess.Popen(["setpriv", f"--reuid={uid}", f"--regid={uid}",
                                  "--clear-groups", "sleep", "60"])
        while other.pid not in processes_of(int(uid)):  # setpriv has switched
            assert time.monotonic() < deadline
            time.sleep(0.01)
        flag.write_text("go")
        out, err = driver.communicate(timeout=60)
        assert driver.returncode == 0, err
        report = dict(json.loads(out))
        report["other"] = other.pid
        report["other_alive"] = other.poll() is None
        return report
    finally:
        if other is not None:
            other.kill()
            other.wait()
        if driver.poll() is None:
            driver.kill()
            driver.wait()


@pytest.mark.process
@pytest.mark.slow
def test_a_uid_is_given_back_only_once_no_process_of_it_is_left(organiser: Organiser) -> None:
    """A bot leaves a detached child behind (a new session, a double fork: out of its process
    group; a referee that is not root has no cgroup): the uid's lease is given back only once
    that child is gone, even one slow to die (256 MiB to free), made non-dumpable or not, and
    the uid can be leased again. A process of the uid outside the bot's namespace (the
    organiser's own use of its range) is not the referee's to kill: the uid is quarantined,
    still held, and it lives."""
    for mode in ("sleep", "busy", "hidden"):
        report = escape(organiser, mode)
        # bot and child, the hidden one too
        assert report["ns"] is not None and report["before"] == 2, report
        assert report["child"].endswith(f"dumpable {0 if mode == 'hidden' else 1}"), report
        assert report["left"] == [] and report["quarantined"] == [], report
        assert not report["held"] and report["again"] == [report["uid"]], report
        assert report["outlived"] == [] and "[ct-referee" not in report["log"], report
    report = escape(organiser, "foreign")
    assert report["quarantined"] == [report["other"]] and report["left"] == [report["other"]]
    assert report["held"] and report["again"] == [] and report["other_alive"], report
    assert report["outlived"] == [report["other"]]
    assert report["log"].endswith(f"[ct-referee: 1 process(es) of the bot's uid outlived it "
                                  f"(pids {report['other']}); the uid stays held, no other bot "
                                  f"gets it]\n"), report
    assert report["stop_s"] >= 1.0, report
