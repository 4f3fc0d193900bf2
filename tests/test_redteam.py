"""Attacks found by red-teaming the sandbox, each through real sandboxed processes: what a
hostile bot tried, asserted refused."""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import BOTS, ROOT
from referee.bots.policy import SandboxError, SandboxPolicy
from referee.bots.probes.world import first_line
from referee.bots.probing import capabilities
from referee.bots.process import Launcher, start_process
from referee.bots.resolve import bot_binds

HOSTILE = BOTS / "hostile"
CAPS = capabilities()
pytestmark = [pytest.mark.process,
              pytest.mark.skipif(not CAPS.works, reason=f"no sandbox here: {CAPS.summary()}")]


@pytest.fixture
def folder() -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="ct-redteam-", dir="/var/tmp"))
    root.chmod(0o755)
    for name in ("pipes.py",):
        shutil.copy(HOSTILE / name, root / name)
        (root / name).chmod(0o644)
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.mark.skipif(os.geteuid() != 0, reason="bots get uids of their own from a root referee")
@pytest.mark.parametrize("mode", ["auto", "userns", "setpriv"])
def test_two_bots_share_no_per_uid_pipe_budget(folder: Path, mode: str) -> None:
    """One bot holds 40 pipes of 1 MiB (10240 of the 16384 pages ``fs.pipe-user-pages-soft``
    lets a uid have); another, running at the same time, sees its own headroom whole. With a
    shared uid it would see 24: what one bot holds, the other reads (a channel between
    concurrent sandboxes, e.g. two colluding seats of one match)."""
    if Path("/proc/sys/fs/pipe-user-pages-soft").read_text().strip() != "16384":
        pytest.skip("fs.pipe-user-pages-soft is not the default here")
    if mode != "auto" and not (CAPS.ok("setpriv") if mode == "setpriv" else
                               CAPS.ok("userns") and CAPS.ok("disable-userns")):
        pytest.skip(f"sandbox mode {mode} does not work here: {CAPS.summary()}")
    if mode == "userns":
        pytest.skip("a root referee runs its bots through setpriv only")
    python = sys.executable
    if not Path(python).exists():
        pytest.skip(f"no {python} here")
    policy = SandboxPolicy(mode=mode)
    holder = start_process([python, "pipes.py", "hold", "40"], workdir=folder,
                           launcher=Launcher(policy))
    try:
        assert first_line(holder) == "held 40"
        measurer = start_process([python, "pipes.py", "measure"], workdir=folder,
                                 launcher=Launcher(policy))
        try:
            line = first_line(measurer)
        finally:
            measurer.stop(0.5)
    finally:
        holder.stop(0.5)
    assert line.startswith("headroom "), line
    assert int(line.split()[1]) > 40, line  # 64 unless another process shares its uid


def private_world(root: Path) -> Path:
    """``root/private`` (0700) holding ``sub`` (0755) with a readable secret and a program:
    what only root can reach."""
    sub = root / "private" / "sub"
    sub.mkdir(parents=True)
    (root / "private").chmod(0o700)
    sub.chmod(0o755)
    (sub / "secret.txt").write_text("organiser secret\n")
    (sub / "secret.txt").chmod(0o644)
    (sub / "tool").write_text("#!/bin/sh\n")
    (sub / "tool").chmod(0o755)
    return sub


@pytest.mark.skipif(os.geteuid() != 0, reason="a folder only root reaches needs a root referee")
def test_a_bots_own_env_cannot_bind_a_private_folder(folder: Path) -> None:
    """``#!FOLDER/env PRIVATE/tool``: the bot's own ``env`` is its interpreter, not the
    system's, so ``PRIVATE`` is not shown; the bot runs and cannot read the secret."""
    if not Path("/usr/bin/python3").exists():
        pytest.skip("no /usr/bin/python3 here")
    sub = private_world(folder)
    bot = folder / "bot"
    bot.mkdir(mode=0o755)
    shutil.copy(HOSTILE / "fake_env.py", bot / "fake_env.py")
    (bot / "fake_env.py").chmod(0o644)
    (bot / "env").write_text('#!/bin/sh\nexec /usr/bin/python3 "$(dirname "$2")/fake_env.py"\n')
    (bot / "run").write_text(f"#!{bot / 'env'} {sub / 'tool'}\n")
    for name in ("env", "run"):
        (bot / name).chmod(0o755)
    assert not any(p.is_relative_to(folder / "private") for p in bot_binds(["./run"], bot).all)
    policy = SandboxPolicy(env=(("CT_PROBE_PRIVATE", str(sub / "secret.txt")),))
    proc = start_process(["./run"], workdir=bot, launcher=Launcher(policy))
    try:
        line = first_line(proc)
    finally:
        proc.stop(0.5)
    assert line == "refused read", line


def test_a_bots_own_interpreter_path_must_be_public(folder: Path) -> None:
    """A ``#!`` path (or the system ``env`` given a path, or a path through a symlink of the
    bot's own) into a folder other users cannot reach is refused before the bot starts; a
    program found on PATH is not."""
    sub = private_world(folder)
    bot = folder / "bot"
    bot.mkdir(mode=0o755)
    (bot / "lnk").symlink_to(sub)  # a symlink of its own into the private folder
    for i, line in enumerate([f"#!{sub / 'tool'}", f"#!/usr/bin/env {sub / 'tool'}",
                              f"#!{bot / 'lnk' / 'tool'}"]):
        (bot / f"run{i}").write_text(line + "\n")
        (bot / f"run{i}").chmod(0o755)
        with pytest.raises(SandboxError, match="in a folder other users cannot reach"):
            bot_binds([f"./run{i}"], bot)
    (bot / "ok").write_text("#!/usr/bin/env sh\n")
    (bot / "ok").chmod(0o755)
    assert bot_binds(["./ok"], bot).exe == bot / "ok"


def test_info_lines_cannot_bloat_the_record(tmp_path: Path) -> None:
    """32 info lines of 1 KiB of control characters with every answer, for a whole match: the
    record keeps at most :data:`INFO_BUDGET` bytes of them as it writes them (JSON, six bytes a
    control character) for that seat, the other seat is untouched."""
    from referee.bots.bot import INFO_BUDGET
    from referee.game.rules import Deal
    from referee.match.play import Entrant, play_match

    bots = [Entrant("bloat", (sys.executable, str(HOSTILE / "bloat.py"))),
            Entrant("instant", (sys.executable, str(ROOT / "bench" / "instant_bot.py")))]
    record = play_match("m", bots, lambda k: Deal.from_seed(2, f"b:{k}"), target=300,
                        logs_dir=tmp_path)
    kept = [line for hand in record["hands"] for turn in hand["turns"]
            for line in turn.get("info", ())]
    assert record["faults"] == [] and len(record["hands"]) > 1
    written = [len(json.dumps(line)) - 2 for line in kept]
    assert INFO_BUDGET - 6 * 1024 < sum(written) <= INFO_BUDGET
