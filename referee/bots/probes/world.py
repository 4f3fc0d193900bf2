"""Runs the attacks of :mod:`referee.bots.probes.attacks` in the sandbox against a scratch world
shaped like a tournament's: the attacking entrant's folder (with a 0600 file), another
entrant's folder, a configuration file and a live output folder."""

from __future__ import annotations

import dataclasses
import os
import secrets
import select
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from referee.bots.policy import SandboxPolicy
from referee.bots.process import Launcher, Process, start_process

ATTACKS_PY = Path(__file__).with_name("attacks.py")
CPU_PROBE_CORES = 0.25
"""The CPU quota the ``cpu`` probe runs under: its 4 burners get more than twice that (0.55 s
in a second) on 2 CPUs at a load below 10, unless a cgroup holds them to a quarter."""


@dataclass(frozen=True)
class AttackOutcome:
    """How one attack ended: ``refused`` or not, and what the probe or the referee saw."""

    name: str
    refused: bool
    detail: str


class World:
    """A scratch tournament tree; remove it with :meth:`close`."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="ct-probe-"))
        self.root.chmod(0o755)
        self.bot = self.root / "entrants" / "attacker"
        self.sibling = self.root / "entrants" / "victim"
        self.output = self.root / "out"
        self.config = self.root / "tournament.yaml"
        for d in (self.bot, self.sibling, self.output):
            d.mkdir(parents=True)
        for d in (self.root / "entrants", self.bot, self.sibling, self.output):
            d.chmod(0o755)
        shutil.copy(ATTACKS_PY, self.bot / "attacks.py")
        (self.bot / "private.txt").write_text("owner only\n")
        (self.bot / "private.txt").chmod(0o600)
        (self.sibling / "bot.py").write_text("STRATEGY = 'secret'\n")
        (self.output / "results.jsonl").write_text('{"id": "m1"}\n')
        self.config.write_text("name: t\n")
        (self.bot / "peek").symlink_to(self.output)  # dangles in the sandbox
        self.secret = secrets.token_hex(8)

    def env(self) -> tuple[tuple[str, str], ...]:
        """What the probe is told of the world."""
        return (("CT_PROBE_SIBLING", str(self.sibling)), ("CT_PROBE_OUTPUT", str(self.output)),
                ("CT_PROBE_CONFIG", str(self.config)),
                ("CT_PROBE_PRIVATE", str(self.bot / "private.txt")),
                ("CT_PROBE_REFEREE_PID", str(os.getpid())))

    def close(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def run_attack(world: World, name: str, policy: SandboxPolicy, *,
               timeout_s: float = 60, python: str = sys.executable) -> AttackOutcome:
    """Run attack ``name`` sandboxed under ``policy`` with interpreter ``python``; refused
    unless the probe says ``ALLOWED`` or it ends without a word and without a memory fault."""
    if name in ("shm", "tmp"):  # only the memory limit may stop it, not the tmpfs's size
        policy = dataclasses.replace(policy, tmp_mb=max(policy.tmp_mb, 4096), file_mb=0)
    if name in ("memory", "sharedmem"):  # nor the file size (a memfd's is one)
        policy = dataclasses.replace(policy, file_mb=0)
    if name == "cpu":  # a quota well below a core: no share of a busy machine reaches it
        policy = dataclasses.replace(policy, cpus=CPU_PROBE_CORES,
                                     env=(("CT_PROBE_CPUS", str(CPU_PROBE_CORES)),))
    policy = dataclasses.replace(policy, env=(*policy.env, *world.env()))
    os.environ["CT_PROBE_SECRET"] = world.secret  # the referee's own: must not leak
    try:
        proc = start_process([python, "attacks.py", name], workdir=world.bot,
                             launcher=Launcher(policy))
    finally:
        del os.environ["CT_PROBE_SECRET"]
    try:
        line = first_line(proc, timeout_s)
    finally:
        proc.stop(0.5)
    if proc.memory_fault():
        return AttackOutcome(name, True, "memory fault (the memory limit killed it)")
    if line.startswith("refused"):
        return AttackOutcome(name, True, "refused")
    return AttackOutcome(name, False, line or f"no answer ({proc.exit_status(0) or 'timed out'})")


def first_line(proc: Process, timeout_s: float = 60) -> str:
    """The process's first line of output, stripped (``""`` if none comes in ``timeout_s``)."""
    data = b""
    deadline = time.monotonic() + timeout_s
    while b"\n" not in data and time.monotonic() < deadline:
        if select.select([proc.stdout], [], [], 0.1)[0]:
            chunk = os.read(proc.stdout, 4096)
            if not chunk:
                break
            data += chunk
    return data.decode(errors="replace").strip()
