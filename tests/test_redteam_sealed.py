"""The red team against sealed entrants (issue 18), tried as a hostile entrant with a login of
its own on the machine would: each attack that worked, as a hostile bot under
``tests/bots/hostile/`` with a control showing it works without the protection; and the
attacks that were refused, kept as regression tests."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import test_sealed
from test_sealed import ROOT, World, needs_sandbox

from referee.bots import snapshot
from referee.bots.policy import SandboxError
from referee.bots.snapshot import Store
from referee.tournament.config import ConfigError, load_config
from referee.tournament.dispatch import TournamentError
from referee.tournament.run import run

HOSTILE = ROOT / "tests" / "bots" / "hostile"
INSTANT = ROOT / "bench" / "instant_bot.py"
PYTHON = Path("/usr/bin/python3")
world = test_sealed.world  # the fixture: an attacker, a victim, a configuration
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to own files as another uid")


# -- a #! line naming a runtime the entrant's login owns -----------------------------------------


def live_runtime(world: World, owner: int) -> Path:
    """The attacker's ``./bot`` runs through ``#!<login>/bin/python3`` (a symlink to the
    system's Python) in a folder of uid ``owner``, which holds ``live.txt``."""
    login = world.root / "login"
    (login / "bin").mkdir(parents=True, mode=0o755)
    login.chmod(0o755)
    (login / "bin" / "python3").symlink_to(PYTHON)
    (login / "live.txt").write_text("written by the login during play\n")
    for path in (login, login / "bin", login / "bin" / "python3", login / "live.txt"):
        os.lchown(path, owner, owner)
    bot = world.attacker / "bot"
    bot.write_text(f"#!{login}/bin/python3\n" + (HOSTILE / "live_runtime.py").read_text())
    bot.chmod(0o755)
    return world.write("./bot")


@pytest.mark.skipif(not PYTHON.is_file(), reason="no /usr/bin/python3")
@as_root
def test_a_shebang_runtime_another_user_owns_is_refused(world: World) -> None:
    config = live_runtime(world, owner=65534)  # the entrant's own login, say
    with pytest.raises(ConfigError) as info:
        run(load_config(config))
    text = str(info.value)
    assert "entrant 'attacker'" in text and "login/bin/python3" in text, text
    assert "someone other than root can change during play" in text and "\n" not in text
    assert not (world.output / "games").exists()


@pytest.mark.process
@needs_sandbox
@pytest.mark.skipif(not PYTHON.is_file(), reason="no /usr/bin/python3")
def test_control_a_shebang_runtime_is_bound_live(world: World) -> None:
    """The control: the same folder owned by root plays, and the sandbox binds it as it is
    (not from the snapshot): owned by the entrant's login, the login could change it during
    play."""
    shutil.copy(INSTANT, world.attacker / "instant_bot.py")
    config = live_runtime(world, owner=os.geteuid())
    run(load_config(config))
    logs = sorted((world.output / "logs").glob("*/?-attacker.stderr"))
    seen = [p.read_text() for p in logs]
    assert logs and all("written by the login during play" in s for s in seen), seen


# -- a folder too deep for the copy --------------------------------------------------------------


def deep(folder: Path, levels: int) -> None:
    here = folder
    for _ in range(levels):
        here = here / "d"
        here.mkdir()  # one level at a time: os.makedirs would recurse as deep
    (here / "x").write_text("deep\n")


def undeep(folder: Path) -> None:
    """Remove a deep chain one level at a time (``shutil.rmtree`` recurses as deep)."""
    top = folder / "d"
    while top.is_dir():
        below, spare = top / "d", folder / "d.next"
        if below.is_dir():
            below.rename(spare)
        shutil.rmtree(top)
        if spare.is_dir():
            spare.rename(top)


def played_by(world: World, name: str) -> list[str]:
    """The matches saved that seat ``name`` (a refused entrant plays none: it is sealed before
    its first match)."""
    results = world.output / "results.jsonl"
    lines = results.read_text().splitlines() if results.is_file() else []
    return [line for line in lines if name in json.loads(line)["players"]]


@pytest.mark.deep
@pytest.mark.process
@needs_sandbox
def test_a_folder_too_deep_is_refused_in_one_line(world: World, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    deep(world.attacker, 1200)
    with pytest.raises(TournamentError) as info:  # found as play starts: the run stops
        run(load_config(world.write(f"{sys.executable} snoop.py")))
    text = str(info.value)
    assert "entrant 'attacker'" in text and "more than 64 deep" in text and "\n" not in text
    assert not played_by(world, "attacker")
    # the control: without the bound the copy's recursion crashed the tournament's start
    monkeypatch.setattr(snapshot, "MAX_DEPTH", 10_000)
    try:
        with pytest.raises(RecursionError):
            snapshot.take_snapshot(world.attacker, Store(tmp_path), "attacker")
    finally:
        undeep(world.attacker)
        for copy in tmp_path.glob("ct-referee-entrants-*/attacker-*"):
            undeep(copy)


# -- a folder of many empty files ----------------------------------------------------------------


@pytest.mark.process
@needs_sandbox
def test_a_folder_of_many_empty_files_is_refused(world: World, tmp_path: Path) -> None:
    """Empty files weigh nothing against ``snapshot_mb`` but each is an inode in memory while
    the tournament runs: the cap counts them too, 64 a MiB (32,768 at the default)."""
    many = world.attacker / "many"
    many.mkdir()
    for i in range(100):
        (many / str(i)).touch()
    with pytest.raises(TournamentError) as info:  # found as play starts: the run stops
        run(load_config(world.write(f"{sys.executable} snoop.py", snapshot_mb=1)))
    text = str(info.value)
    assert "entrant 'attacker'" in text and "more than 64 files, folders and links" in text
    assert "snapshot_mb" in text and "\n" not in text
    assert not played_by(world, "attacker")
    # the control: without a cap every empty file is copied
    with Store(tmp_path) as store:
        assert snapshot.take_snapshot(world.attacker, store, "a", cap_mb=0).files > 100


# -- file names that drive the organiser's terminal ----------------------------------------------

ESCAPES = "\x1b]0;PWNED\x07\x1b[2J\x1b[Hall entrants ready"


@pytest.mark.process
def test_file_names_in_an_error_are_escaped(world: World) -> None:
    """Folders named with escape sequences, nested until the copy's path is too long: the
    error names the path, and printed it raw (a title, a screen clear, a fake line)."""
    fd = os.open(world.attacker, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(20):  # through folder descriptors: the path grows past PATH_MAX
        name = ESCAPES + "A" * 200
        os.mkdir(name, dir_fd=fd)
        fd, parent = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd), fd
        os.close(parent)
    os.close(fd)
    assert any("\x1b" in name for name in os.listdir(world.attacker))  # the names are real
    cli = Path(sys.executable).parent / "ct-referee"
    done = subprocess.run([str(cli), "tournament", str(world.write(f"{sys.executable} snoop.py"))],
                          capture_output=True, text=True, check=False, timeout=300)
    shown = done.stdout + done.stderr
    assert done.returncode != 0 and "entrant 'attacker': cannot copy" in shown, shown
    assert "\\x1b]0;PWNED\\x07" in shown
    assert not any(c in shown for c in "\x1b\x07"), repr(shown)


# -- a file that grows while it is copied --------------------------------------------------------


APPEND = """
import sys
with open(sys.argv[1], "ab") as out:
    for _ in range(100):  # at most 400 MiB
        out.write(b"y" * (4 << 20))
        out.flush()
"""


@pytest.mark.process
def test_a_file_growing_during_the_copy_is_copied_as_counted(tmp_path: Path) -> None:
    """The entrant's login appends to a file while the snapshot copies it: the copy stops at
    the size counted against the cap (before, it chased the writer: 12 MiB counted, 401 MiB
    copied under a 64 MiB cap, without end for a writer that does not stop)."""
    folder = tmp_path / "bot"
    folder.mkdir()
    grow = folder / "grow.bin"
    grow.write_bytes(b"x" * (1 << 20))
    writer = subprocess.Popen([sys.executable, "-c", APPEND, str(grow)])
    try:
        while grow.stat().st_size < 9 << 20 and writer.poll() is None:
            time.sleep(0.001)
        with Store(tmp_path) as store:
            snap = snapshot.take_snapshot(folder, store, "a", cap_mb=64)
            assert (snap.copy / "grow.bin").stat().st_size == snap.size <= 64 << 20
    except SandboxError as err:  # or the file had passed the cap when it was counted
        assert "more than 64 MiB" in str(err)
    finally:
        writer.kill()
        writer.wait()


# -- refused: kept as regression tests -----------------------------------------------------------


@pytest.mark.process
@needs_sandbox
def test_symlinks_the_command_does_not_name_lead_nowhere(world: World) -> None:
    """Links in the entrant's folder, never named in its command, to another entrant, the
    output's records, the configuration and ``/etc/shadow``: followed by the bot, every
    one dangles."""
    shutil.copy(HOSTILE / "links.py", world.attacker)
    shutil.copy(INSTANT, world.attacker / "instant_bot.py")
    for name, target in (("victim", world.victim), ("games", world.output / "games"),
                         ("config", world.config), ("shadow", Path("/etc/shadow"))):
        (world.attacker / name).symlink_to(target)
    run(load_config(world.write(f"{sys.executable} links.py")))
    logs = sorted((world.output / "logs").glob("*/?-attacker.stderr"))
    seen = "".join(p.read_text() for p in logs)
    assert logs and seen.count("NOTHING") == 4 * len(logs) and "SAW" not in seen, seen


def test_a_sparse_file_past_the_cap_is_refused_before_a_byte_is_copied(tmp_path: Path) -> None:
    folder = tmp_path / "bot"
    folder.mkdir()
    with open(folder / "sparse.bin", "wb") as f:
        f.truncate(1 << 40)  # 1 TiB that takes no disk
    with Store(tmp_path) as store:
        with pytest.raises(SandboxError, match=r"holds more than 512 MiB"):
            snapshot.take_snapshot(folder, store, "a")
        assert not list(store.path.rglob("sparse.bin"))


# -- shared data another login can change --------------------------------------------------------


@pytest.mark.parametrize("whose", ["folder", "file"])
@as_root
def test_shared_data_another_user_can_change_is_refused(world: World, whose: str) -> None:
    """``shared:`` is bound live, not snapshotted: a folder (or a file in it) an entrant's
    login owns would let it change what every bot reads during play (a channel in, and a
    place to leave what it learnt). The control, root's, plays:
    ``test_sealed.test_shared_data_may_be_named_and_read``."""
    data = world.root / "data"
    data.mkdir(mode=0o755)
    (data / "book.txt").write_text("opening book\n")
    os.chown(data if whose == "folder" else data / "book.txt", 65534, 65534)
    with pytest.raises(ConfigError) as info:
        run(load_config(world.write(f"{sys.executable} snoop.py", shared=["data"])))
    text = str(info.value)
    assert f"shared: {str(world.root / 'data')!r}" in text and "someone other than root" in text
    assert not (world.output / "games").exists()
