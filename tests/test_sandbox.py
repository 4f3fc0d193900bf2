"""The hardened sandbox against hostile bots, through the real referee (:func:`play_match`
with the default sandbox): each attack of ``referee/bots/probes/attacks.py`` in a bot of its own
(``tests/bots/hostile/attacker.py``), asserted refused, and faulted as it should be."""

from __future__ import annotations

import dataclasses
import os
import shutil
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import referee.bots.process as procmod
from conftest import tournament_yaml
from referee.bots.limits import Limits
from referee.bots.policy import SandboxPolicy
from referee.bots.probes.attacks import ATTACKS
from referee.bots.probing import capabilities
from referee.bots.seccomp import SYSCALLS, seccomp_filter
from referee.game.rules import Deal
from referee.match.play import Entrant, play_match

ROOT = Path(__file__).resolve().parent.parent
ATTACKER = ROOT / "tests" / "bots" / "hostile" / "attacker.py"
INSTANT = ROOT / "bench" / "instant_bot.py"
CAPS = capabilities()
pytestmark = [pytest.mark.process,
              pytest.mark.skipif(not CAPS.works, reason=f"no sandbox here: {CAPS.summary()}")]


def needs_cgroup(controller: str) -> Any:
    return pytest.mark.skipif(not CAPS.cgroup_ok(controller),
                              reason=f"no {controller} cgroup here (rlimits only)")


class World:
    """An attacker's folder, a victim's folder (with a bot), a config file, an output folder."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="ct-hostile-", dir="/var/tmp"))
        self.attacker = self.root / "attacker"
        self.victim = self.root / "victim"
        self.output = self.root / "out"
        for d in (self.root, self.attacker, self.victim, self.output):
            d.mkdir(exist_ok=True)
            d.chmod(0o755)
        shutil.copy(ATTACKER, self.attacker / "attacker.py")
        (self.attacker / "private.txt").write_text("0600\n")
        (self.attacker / "private.txt").chmod(0o600)
        (self.victim / "bot.py").write_text("STRATEGY = 'secret'\n")
        (self.output / "results.jsonl").write_text('{"id": "m0"}\n')
        self.config = self.root / "t.yaml"
        self.config.write_text("name: t\n")
        (self.attacker / "peek").symlink_to(self.output)  # dangles in the sandbox


@pytest.fixture
def world(monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    w = World()
    env = {"SIBLING": w.victim, "OUTPUT": w.output, "CONFIG": w.config,
           "PRIVATE": w.attacker / "private.txt", "REFEREE_PID": os.getpid()}
    for key, value in env.items():  # the referee's env: the sandbox must not pass it on
        monkeypatch.setenv(f"CT_PROBE_{key}", str(value))
    monkeypatch.setenv("CT_PROBE_SECRET", uuid.uuid4().hex)
    saved = procmod.prepare

    def prepare(argv: Any, workdir: Path, *, policy: SandboxPolicy, **kw: Any) -> Any:
        """The world's paths reach the probe through its (cleared) environment; the secret
        is the referee's own and stays out."""
        env = tuple((k, v) for k, v in os.environ.items()
                    if k.startswith("CT_PROBE_") and k != "CT_PROBE_SECRET")
        return saved(argv, workdir, policy=dataclasses.replace(policy, env=env), **kw)

    monkeypatch.setattr(procmod, "prepare", prepare)
    yield w
    shutil.rmtree(w.root, ignore_errors=True)


DEFAULT = Limits()


def play(world: World, attack: str, limits: Limits = DEFAULT, *,
         tag: str = "m", sandbox: str = "bwrap") -> tuple[dict[str, Any], str]:
    """One match, attacker against an instant bot; the record and the attacker's stderr."""
    logs = world.root / "logs" / tag
    attacker = Entrant("attacker", (sys.executable, "attacker.py", attack), world.attacker)
    instant = Entrant("instant", (sys.executable, str(INSTANT)))
    record = play_match(tag, [attacker, instant], lambda k: Deal.from_seed(2, f"h:{k}"),
                        target=1, limits=limits, launcher=procmod.Launcher.resolve(sandbox, limits),
                        logs_dir=logs,
                        hidden=(world.output,))
    err = logs / "0-attacker.stderr"
    return record, err.read_text() if err.exists() else ""


@pytest.mark.parametrize("attack", ["remount", "umount", "output", "referee_proc", "rewrite",
                                    "read", "locks", "pagecache", "pid1", "escape",
                                    "affinity", "aio", "sockets", "odirect"])
def test_attack_is_refused(world: World, attack: str) -> None:
    record, err = play(world, attack)
    assert f"refused {attack}" in err, err
    assert record["faults"] == []  # refused, and the bot plays on
    assert (world.victim / "bot.py").read_text() == "STRATEGY = 'secret'\n"


@pytest.mark.parametrize("attack", ["output", "read", "rewrite", "locks", "pagecache",
                                    "affinity", "aio", "sockets", "odirect"])
def test_control_without_the_sandbox_the_attack_works(world: World, attack: str) -> None:
    """The probes can fail: unsandboxed, the same attacks get through."""
    _, err = play(world, attack, sandbox="none")
    assert f"ALLOWED {attack}" in err, err


@needs_cgroup("pids")
def test_200_forks_hit_the_pids_limit(world: World) -> None:
    _, err = play(world, "forks", Limits(pids=32))
    assert "refused forks" in err, err


@needs_cgroup("memory")
@pytest.mark.parametrize("attack", ["memory", "sharedmem", "shm", "tmp"])
def test_memory_attacks_are_memory_faults(world: World, attack: str) -> None:
    limits = Limits(memory_mb=128, tmp_mb=4096 if attack in ("shm", "tmp") else 64, file_mb=0)
    record, err = play(world, attack, limits)
    assert "ALLOWED" not in err
    [fault] = record["faults"]
    assert (fault["seat"], fault["fault"]) == (0, "memory"), fault
    assert "memory limit (128 MiB) exceeded" in fault["detail"]


def host_pids_with(marker: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            try:
                if marker.encode() in Path(f"/proc/{entry}/environ").read_bytes():
                    found.append(int(entry))
            except OSError:
                continue
    return found


def test_a_double_forked_grandchild_does_not_survive_the_match(world: World,
                                                              monkeypatch: pytest.MonkeyPatch
                                                              ) -> None:
    marker = f"CTMARK{uuid.uuid4().hex}"
    monkeypatch.setenv("CT_PROBE_MARKER", marker)
    _, err = play(world, "orphan")
    assert "refused orphan" in err
    deadline = time.monotonic() + 5
    while host_pids_with(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert host_pids_with(marker) == []


@needs_cgroup("cpu")
def test_cpu_burners_are_throttled_to_their_quota(world: World) -> None:
    """setsid'd burners in one match, beside a concurrent match: the burners' cgroup is
    throttled (its CPU capped at its quota of 0.05 core), so they cannot take the neighbour's
    share; no timing is asserted."""
    from referee.bots.cgroups import PARENT

    layout = CAPS.layout
    mount = layout.v1.get("cpu") or layout.v2
    assert mount is not None
    throttled: list[int] = []
    done = threading.Event()

    def watch() -> None:  # the match's cgroups exist only while it plays
        while not done.is_set():
            for group in (mount / PARENT).glob("bot-*"):
                try:
                    quota = (group / "cpu.cfs_quota_us").read_text() if "cpu" in layout.v1 \
                        else (group / "cpu.max").read_text().split()[0]
                    stat = dict(line.split() for line in (group / "cpu.stat").read_text()
                                .splitlines())
                except OSError:
                    continue
                if quota.strip() == "5000" and int(stat["nr_throttled"]):
                    throttled.append(int(stat["nr_throttled"]))
            time.sleep(0.05)

    watcher = threading.Thread(target=watch)
    watcher.start()
    neighbour = threading.Thread(target=play, args=(world, "read"), kwargs={"tag": "n"})
    neighbour.start()
    try:
        # a low quota: on a busy host the burners' share could stay below a higher one
        _, err = play(world, "burn", Limits(cpus=0.05), tag="b")
        neighbour.join()
    finally:
        done.set()
        watcher.join()
    assert "refused burn" in err
    assert throttled and max(throttled) > 0


def test_a_bot_folder_showing_the_output_is_refused_before_play(world: World) -> None:
    from referee.tournament.config import ConfigError, load_config
    from referee.tournament.run import check_entrant_folders

    link = world.root / "entrants"
    link.mkdir()
    (link / "alice").symlink_to(world.output)  # the entrant's folder is the output folder
    shutil.copy(INSTANT, world.output / "bot.py")
    config = tournament_yaml(world.root, {
        "a": {"command": f"{sys.executable} bot.py", "workdir": "entrants/alice"},
        "b": f"{sys.executable} {INSTANT}"}, players=2, output="out")
    with pytest.raises(ConfigError, match=r"entrant 'a': the bot folder .* is inside the "
                                          r"protected path .*out'"):
        check_entrant_folders(load_config(config))


def test_a_private_bot_folder_plays_from_its_snapshot(world: World) -> None:
    """A 0700 bot folder the bots' uids cannot read: its snapshot (readable by the bot, in a
    store only the referee opens) is what the bot runs from."""
    from referee.tournament.config import load_config
    from referee.tournament.run import run

    private = world.root / "private"
    private.mkdir(mode=0o700)
    shutil.copy(INSTANT, private / "bot.py")
    (private / "bot.py").chmod(0o600)
    config = tournament_yaml(world.root, {"a": f"{sys.executable} private/bot.py",
                                          "b": f"{sys.executable} {INSTANT}"},
                             players=2, output="fresh-out", target=1)
    outcome = run(load_config(config))
    assert outcome.finished and not any(sum(s.faults.values()) for s in outcome.standings or [])


def test_seccomp_table_matches_the_kernel_headers() -> None:
    import re

    header = Path("/usr/include/x86_64-linux-gnu/asm/unistd_64.h")
    if not header.exists():
        pytest.skip("no x86_64 kernel headers here")
    defs = dict(re.findall(r"#define __NR_(\w+)\s+(\d+)\b", header.read_text()))
    for name, nr in SYSCALLS["x86_64"].items():
        if name not in defs and name in ("cachestat",):  # newer than some headers
            continue
        assert int(defs[name]) == nr, name
    assert len(seccomp_filter("x86_64")) % 8 == 0 and len(seccomp_filter("aarch64")) % 8 == 0
    assert set(ATTACKS) >= {"locks", "escape", "memory", "shm", "forks"}


V2_MOUNTINFO = """\
25 30 0:22 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw
26 25 0:23 / {root} rw,nosuid,nodev,noexec,relatime shared:8 - cgroup2 cgroup2 rw,nsdelegate
"""


def test_cgroup_v2_files_on_a_fake_hierarchy(tmp_path: Path) -> None:
    """The v2 code path (this machine may only have v1): the files written, OOM kills read."""
    from referee.bots.cgroups import Cgroup, find_layout

    (tmp_path / "cgroup.controllers").write_text("cpuset cpu io memory hugetlb pids rdma\n")
    (tmp_path / "cgroup.subtree_control").write_text("")
    (tmp_path / "ct-referee").mkdir()
    (tmp_path / "ct-referee" / "cgroup.subtree_control").write_text("")
    layout = find_layout(V2_MOUNTINFO.format(root=tmp_path))
    assert layout.v1 == {} and layout.v2 == tmp_path
    assert layout.v2_controllers == ("memory", "pids", "cpu", "io")
    group = Cgroup.create("bot-x", memory_mb=256, pids=32, cpu_cores=1.5, layout=layout)
    leaf = tmp_path / "ct-referee" / "bot-x"
    assert (leaf / "memory.max").read_text() == str(256 << 20)
    assert (leaf / "pids.max").read_text() == "32"
    assert (leaf / "cpu.max").read_text() == "150000 100000"
    assert (leaf / "cpu.weight").read_text() == "100"  # on move while it starts
    for where in (tmp_path, tmp_path / "ct-referee"):
        assert (where / "cgroup.subtree_control").read_text() == "+memory +pids +cpu +io"
    (leaf / "memory.events").write_text("low 0\nhigh 0\nmax 9\noom 2\noom_kill 2\n")
    assert group.oom_kills() == 2 and group.version("memory") == "v2"
    assert group.kill_all() and (leaf / "cgroup.kill").read_text() == "1"
    assert find_layout("").missing.keys() == {"memory", "pids", "cpu", "io"}


@pytest.mark.skipif(os.geteuid() != 0, reason="per-bot uids need a root referee")
def test_without_cgroups_rlimits_stop_forks_and_memory(world: World) -> None:
    """The fall-back where a machine has no cgroups: RLIMIT_NPROC (a uid of the bot's own)
    and RLIMIT_DATA."""
    import dataclasses

    from referee.bots.policy import SandboxPolicy
    from referee.bots.process import Launcher, start_process

    code = ("import os, time\nn = 0\nwhile n < 200:\n    try:\n        pid = os.fork()\n"
            "    except OSError as e:\n        print('stopped', e.errno, n, flush=True)\n"
            "        break\n    if pid == 0:\n        time.sleep(30)\n        os._exit(0)\n"
            "    n += 1\ntry:\n    bytearray(300 << 20)\n    print('allocated', flush=True)\n"
            "except MemoryError:\n    print('MemoryError', flush=True)\n")
    (world.attacker / "fallback.py").write_text(code)
    policy = dataclasses.replace(SandboxPolicy(), pids=16, memory_mb=256, cgroups=False)
    proc = start_process(["/usr/bin/python3", "fallback.py"], workdir=world.attacker,
                         launcher=Launcher(policy))
    try:
        assert proc.cgroup is None and "rlimit nproc" in proc.active, proc.active
        assert proc.wait_exit(60)
        out = os.read(proc.stdout, 4096).decode().split()
    finally:
        proc.stop(0)
    assert out[:2] == ["stopped", "11"] and int(out[2]) < 16, out
    assert out[3] == "MemoryError", out


@pytest.mark.parametrize("mode", ["userns", "setpriv"])
def test_every_probe_is_refused_in_both_privilege_modes(mode: str) -> None:
    """What ``ct-referee sandbox`` runs, in each way of dropping privileges, with Debian's
    Python (reachable by the bot's uid, so ``userns`` mode can run it)."""
    from referee.bots.policy import SandboxPolicy
    from referee.bots.probes.world import World as ProbeWorld
    from referee.bots.probes.world import run_attack

    if mode == "setpriv" and not CAPS.ok("setpriv"):
        pytest.skip(f"setpriv mode needs a root referee and setpriv: {CAPS.summary()}")
    if mode == "userns" and not (CAPS.ok("userns") and CAPS.ok("disable-userns")):
        pytest.skip("unprivileged user namespaces (or bwrap --disable-userns) do not work here")
    if mode == "userns" and os.geteuid() == 0:
        pytest.skip("a root referee runs its bots through setpriv only "
                    "(test_root_refuses_userns_mode)")
    if not Path("/usr/bin/python3").exists():
        pytest.skip("no /usr/bin/python3 here")
    probe_world = ProbeWorld()
    try:
        outcomes = [run_attack(probe_world, name, SandboxPolicy(mode=mode, memory_mb=128),
                               python="/usr/bin/python3") for name in ATTACKS]
    finally:
        probe_world.close()
    assert [o for o in outcomes if not o.refused] == []


@pytest.mark.skipif(os.geteuid() != 0, reason="about a root referee")
def test_root_refuses_userns_mode(tmp_path: Path) -> None:
    """A root referee's bots see their runtime from root's private folder in memory, which
    only a bwrap run as root can bind: mode ``userns`` (bwrap as the bot's uid) is refused in
    one line, before anything starts."""
    from referee.bots.policy import SandboxError, SandboxPolicy
    from referee.bots.sandbox import prepare

    (tmp_path / "bot.sh").write_text("#!/bin/sh\necho hi\n")
    with pytest.raises(SandboxError, match="'userns' does not work for a root referee"):
        prepare(["/bin/sh", "bot.sh"], tmp_path, policy=SandboxPolicy(mode="userns"))


def test_the_sandbox_command_refuses_every_probe() -> None:
    from click.testing import CliRunner

    from referee.cli import main

    result = CliRunner().invoke(main, ["sandbox", "--ascii"])
    assert result.exit_code == 0, result.output
    assert f"{len(ATTACKS)} of {len(ATTACKS)} attacks refused" in result.output
    assert "OK bwrap" in result.output and "NO " not in result.output.split("in force:")[1]


def test_the_sandbox_command_fails_without_a_sandbox(monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    import referee.cli.sandbox as cli_sandbox
    from referee.bots.probing import Capabilities, Check
    from referee.cli import main

    broken = Capabilities((Check("bwrap", False, "bwrap not found", "apt-get install "
                                 "bubblewrap"),), CAPS.layout, CAPS.root)
    monkeypatch.setattr(cli_sandbox, "capabilities", lambda: broken)
    result = CliRunner().invoke(main, ["sandbox", "--ascii"])
    assert result.exit_code == 1
    assert "NO bwrap" in result.output and "(to enable: apt-get install bubblewrap)" in \
        result.output


@pytest.mark.process
@pytest.mark.skipif(not CAPS.works or not CAPS.cgroup_ok("pids"),
                    reason=f"needs the sandbox with a pids cgroup: {CAPS.summary()}")
def test_a_fork_bomb_stopped_at_the_process_cap_leaves_a_note(tmp_path: Path) -> None:
    """A bot whose forks the process limit refused says so in its stderr file (what the
    organiser's logs and a league's refusal show): the bomb is seen, not only stopped."""
    from referee.bots.policy import SandboxPolicy
    from referee.bots.probes.world import first_line
    from referee.bots.process import Launcher, start_process

    tmp_path.chmod(0o755)
    (tmp_path / "bomb.sh").write_text(
        "#!/bin/sh\ni=0\nwhile [ $i -lt 40 ]; do sleep 30 & i=$((i+1)); done 2>/dev/null\n"
        "echo ready\nwait\n")
    (tmp_path / "bomb.sh").chmod(0o755)
    err = tmp_path / "bomb.stderr"
    proc = start_process(["/bin/sh", "bomb.sh"], workdir=tmp_path, stderr_path=err,
                         launcher=Launcher(SandboxPolicy(pids=8)))
    try:
        first_line(proc, 60)  # "ready", or the end of its output where the shell gave up
    finally:
        proc.stop(0)
    assert proc.forks_refused > 0
    assert f"reached its process limit: {proc.forks_refused} fork(s) refused" in \
        err.read_text()
