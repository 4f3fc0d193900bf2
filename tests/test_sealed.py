"""Sealed entrants against hostile ones (issue 18): a command naming another entrant's folder,
host folders or a symlink leading out is refused before play in one line; a symlink swapped
during play changes nothing (every match runs from the snapshot); each attack with a control
showing it works without the seal (the unsealed sandbox, as before)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import tournament_yaml
from referee.bots.policy import SandboxError, SandboxPolicy
from referee.bots.probing import capabilities
from referee.bots.process import Launcher
from referee.bots.snapshot import Store, entrant_folder, take_snapshot
from referee.game.rules import Deal
from referee.match.play import Entrant, play_match
from referee.records.record import read_record
from referee.tournament.config import ConfigError, load_config
from referee.tournament.run import Reporter, run

ROOT = Path(__file__).resolve().parent.parent
SNOOP = ROOT / "tests" / "bots" / "hostile" / "snoop.py"
INSTANT = ROOT / "bench" / "instant_bot.py"
CAPS = capabilities()
needs_sandbox = pytest.mark.skipif(not CAPS.works, reason=f"no sandbox here: {CAPS.summary()}")


class World:
    """An attacker's folder (the snoop bot), a victim's folder, a config and an output."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="ct-sealed-", dir="/var/tmp"))
        self.root.chmod(0o755)
        self.attacker = self.root / "attacker"
        self.victim = self.root / "victim"
        self.output = self.root / "out"
        for d in (self.attacker, self.victim, self.attacker / "harmless"):
            d.mkdir(mode=0o755)
        shutil.copy(SNOOP, self.attacker / "snoop.py")
        shutil.copy(INSTANT, self.attacker / "instant_bot.py")  # snoop plays as it does
        (self.attacker / "harmless" / "note.txt").write_text("nothing to see\n")
        shutil.copy(INSTANT, self.victim / "bot.py")
        (self.victim / "strategy.txt").write_text("STRATEGY = 'secret'\n")
        self.config = self.root / "t.yaml"

    def write(self, command: str, **extra: object) -> Path:
        keys: dict[str, object] = {"players": 2, "target": 1, "output": "out",
                                   "preflight": "keep"}
        return tournament_yaml(self.root, {
            "attacker": {"command": command, "workdir": "attacker"},
            "victim": {"command": f"{sys.executable} bot.py", "workdir": "victim"},
        }, **(keys | extra))


@pytest.fixture
def world() -> Iterator[World]:
    w = World()
    yield w
    shutil.rmtree(w.root, ignore_errors=True)


def refused(world: World, command: str) -> str:
    with pytest.raises(ConfigError) as info:
        run(load_config(world.write(command)))
    assert not (world.output / "games").exists()  # before anything was played
    text = str(info.value)
    assert "\n" not in text
    return text


def unsealed(world: World, *args: str) -> str:
    """The control: the snoop bot in the sandbox as it was before sealing (its named paths
    bound), one match; its stderr."""
    logs = world.root / "logs"
    (world.attacker / "src").mkdir(exist_ok=True)
    shutil.copy(SNOOP, world.attacker / "src" / "snoop.py")
    shutil.copy(INSTANT, world.attacker / "src" / "instant_bot.py")
    attacker = Entrant("attacker", (sys.executable, "src/snoop.py", *args), world.attacker)
    victim = Entrant("victim", (sys.executable, "bot.py"), world.victim)
    play_match("m", [attacker, victim], lambda k: Deal.from_seed(2, f"h:{k}"), target=1,
               launcher=Launcher(SandboxPolicy()), logs_dir=logs)
    return (logs / "0-attacker.stderr").read_text()


# -- the command-path rule ----------------------------------------------------------------------


@pytest.mark.parametrize("target", ["link", "absolute", "dotdot"])
def test_a_command_naming_another_entrant_is_refused(world: World, target: str) -> None:
    (world.attacker / "data").symlink_to("../victim")
    arg = {"link": "data", "absolute": str(world.victim), "dotdot": "../victim"}[target]
    text = refused(world, f"{sys.executable} snoop.py {arg}")
    assert f"entrant 'attacker': the command names {arg!r}" in text
    assert "outside the entrant's folder" in text and "shared:" in text


@pytest.mark.parametrize("path", ["/", "/tmp", "/proc", "/sys", "/root", "~"])
def test_a_command_naming_host_folders_is_refused(world: World, path: str) -> None:
    text = refused(world, f"{sys.executable} snoop.py {path}")
    assert "the command names" in text and "outside the entrant's folder" in text


def test_an_entrant_folder_that_is_a_home_or_the_root_is_refused(world: World) -> None:
    with pytest.raises(SandboxError, match=r"'/' is a system folder: give the entrant a "
                                           r"folder of its own"):
        entrant_folder([sys.executable, "/"], Path("/"))
    with pytest.raises(SandboxError, match=r"is a (home|system) folder"):
        entrant_folder([sys.executable, "x.py"], Path(os.path.expanduser("~")))


@pytest.mark.process
@needs_sandbox
def test_shared_data_may_be_named_and_read(world: World) -> None:
    data = world.root / "data"
    data.mkdir(mode=0o755)
    (data / "book.txt").write_text("opening book\n")
    config = world.write(f"{sys.executable} snoop.py {data}/book.txt", shared=["data"])
    run(load_config(config))
    err = (world.output / "logs" / "r1-g001-s01" / "0-attacker.stderr").read_text()
    assert "SAW" in err and "opening book" in err, err


def test_shared_may_not_be_a_host_folder_or_hold_the_output(world: World) -> None:
    with pytest.raises(ConfigError, match=r"shared: '/tmp' is a system folder"):
        run(load_config(world.write(f"{sys.executable} snoop.py", shared=["/tmp"])))
    with pytest.raises(ConfigError, match=r"shared: .* holds"):
        run(load_config(world.write(f"{sys.executable} snoop.py", shared=["."])))


@pytest.mark.process
@needs_sandbox
def test_control_unsealed_a_named_folder_is_bound(world: World) -> None:
    (world.attacker / "data").symlink_to("../victim")
    err = unsealed(world, "data", "/proc")
    assert "SAW data: bot.py strategy.txt" in err, err
    assert "SAW /proc" in err  # the sandbox's own /proc, but named paths are bound as they are


# -- the snapshot --------------------------------------------------------------------------------


@pytest.mark.process
@needs_sandbox
def test_a_symlink_swapped_during_play_changes_nothing(world: World) -> None:
    """``data`` points inside the folder at the check; after the first match it points at the
    output's games: the next matches still see the snapshot's ``data``."""
    (world.attacker / "data").symlink_to("harmless")
    swapped: list[str] = []

    class Swap(Reporter):
        def match_done(self, spec: Any, result: Any, done: int, table: Any) -> None:
            if not swapped:
                (world.attacker / "data").unlink()
                (world.attacker / "data").symlink_to(world.output / "games")
                (world.attacker / "snoop.py").write_text("raise SystemExit(9)\n")
                swapped.append(spec.id)

    run(load_config(world.write(f"{sys.executable} snoop.py data")), reporter=Swap())
    assert len(swapped) == 1  # after the first-played seating (which one: the secret says)
    later = ({"r1-g001-s01", "r1-g001-s02"} - set(swapped)).pop()
    seat = 1 if later.endswith("s02") else 0
    err = (world.output / "logs" / later / f"{seat}-attacker.stderr").read_text()
    assert "SAW data: note.txt" in err, err  # the snapshot's link, the snapshot's code
    records = sorted((world.output / "games").glob("*.json.gz"))
    loaded = [read_record(p) for p in records]
    digests = {r["snapshots"][r["players"].index("attacker")] for r in loaded}
    assert len(records) == 2 and len(digests) == 1 and next(iter(digests)).startswith("sha256:")


@pytest.mark.process
@needs_sandbox
def test_control_unsealed_a_swapped_symlink_shows_the_records(world: World) -> None:
    games = world.output / "games"
    games.mkdir(parents=True)
    (games / "r1-g001-s01.json").write_text("{}")
    (world.attacker / "data").symlink_to(games)
    assert "SAW data: r1-g001-s01.json" in unsealed(world, "data")


def test_snapshot_digest_cap_and_per_match_copies(tmp_path: Path) -> None:
    folder = tmp_path / "bot"
    (folder / "sub").mkdir(parents=True)
    (folder / "run.py").write_text("print(1)\n")
    (folder / "run.py").chmod(0o700)
    (folder / "sub" / "big.bin").write_bytes(b"\0" * (2 << 20))
    (folder / "out").mkdir()
    (folder / "link").symlink_to("/etc/hostname")
    os.mkfifo(folder / "fifo")
    with Store(tmp_path) as store:
        snap = take_snapshot(folder, store, "a", exclude=[folder / "out"])
        assert snap.files == 2 and snap.size == (2 << 20) + 9
        assert set(snap.skipped) == {"out", "fifo"}
        assert (snap.copy / "run.py").stat().st_mode & 0o777 == 0o755  # readable by the bot
        assert os.readlink(snap.copy / "link") == "/etc/hostname"
        assert oct(store.path.stat().st_mode & 0o777) == "0o700"
        again = take_snapshot(folder, store, "b", exclude=[folder / "out"])
        assert again.digest == snap.digest
        (folder / "run.py").write_text("print(2)\n")
        assert take_snapshot(folder, store, "c", exclude=[folder / "out"]).digest != snap.digest
        with pytest.raises(SandboxError, match=r"holds more than 1 MiB: .* raise snapshot_mb"):
            take_snapshot(folder, store, "d", cap_mb=1)
    assert not store.path.exists()


# -- the output folder ---------------------------------------------------------------------------


def as_nobody(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                           *argv], capture_output=True, text=True, errors="replace",
                          check=False)  # a record is compressed: bytes, not text


@pytest.mark.process
@needs_sandbox
@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to read as another user (setpriv)")
def test_the_output_is_private_while_playing(world: World) -> None:
    run(load_config(world.write(f"{sys.executable} snoop.py")))
    out = world.output
    assert out.stat().st_mode & 0o777 == 0o700
    files = [p for p in out.rglob("*") if p.is_file()]
    assert files and all(p.stat().st_mode & 0o077 == 0 for p in files), \
        [(str(p), oct(p.stat().st_mode)) for p in files if p.stat().st_mode & 0o077]
    record = out / "games" / "r1-g001-s01.json.gz"
    assert as_nobody("cat", str(record)).returncode != 0  # another login cannot copy it
    # the control: as the output folder was (0755, records 0644), anyone could
    for p in (out, out / "games"):
        p.chmod(0o755)
    record.chmod(0o644)
    assert as_nobody("cat", str(record)).returncode == 0


# -- the organiser's terminal --------------------------------------------------------------------


@pytest.mark.process
@needs_sandbox
def test_the_preflight_tail_is_escaped(world: World) -> None:
    shutil.copy(ROOT / "tests" / "bots" / "hostile" / "terminal.py", world.attacker)
    config = world.write(f"{sys.executable} terminal.py")
    cli = Path(sys.executable).parent / "ct-referee"
    done = subprocess.run([str(cli), "tournament", str(config)], capture_output=True,
                          text=True, check=False, timeout=300)
    shown = done.stdout + done.stderr
    assert "did not start in the pre-flight" in shown, shown
    assert "\\x1b]52;c;" in shown and "\\x1b[2J" in shown and "\\u202e" in shown
    assert not any(c in shown for c in "\x1b\x07\x9b\u202e\r"), repr(shown)
    # the control: what the bot wrote, as the pre-flight tail showed it before
    raw = (world.output / "preflight" / "attacker.stderr").read_text()
    assert "\x1b]52;c;" in raw and "\x1b[2J" in raw


# -- memory across seatings: the page cache ------------------------------------------------------


def cheater(world: World, sandbox: str, rounds: int = 1, target: int = 200) -> Path:
    """The page-cache bot against greedy, ``rounds`` duplicate sets; the config."""
    for name in ("pagecache.py",):
        shutil.copy(ROOT / "tests" / "bots" / "hostile" / name, world.attacker)
    for name in ("greedy_bot.py", "random_bot.py"):
        shutil.copy(ROOT / "bots" / name, world.attacker)
        shutil.copy(ROOT / "bots" / name, world.victim)
    with open(world.attacker / "cache.bin", "wb") as f:
        f.write(b"\0" * (16 * 64 * os.sysconf("SC_PAGE_SIZE")))
        os.fsync(f.fileno())
        os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)  # a file long written
    config = world.write(f"{sys.executable} pagecache.py", sandbox=sandbox, rounds=rounds,
                         target=target)
    config.write_text(config.read_text().replace(f"{sys.executable} bot.py",
                                                 f"{sys.executable} greedy_bot.py"))
    return config


def knew(world: World) -> tuple[int, int, int]:
    """Hands where the cheater named the opponent's exact cards, hands where it named any,
    and hands where it found no mark."""
    out = world.output
    right = named = fresh = 0
    for path in (out / "games").glob("*.json.gz"):
        record = read_record(path)
        seat = record["players"].index("attacker")
        log = (out / "logs" / record["id"] / f"{seat}-attacker.stderr").read_text().splitlines()
        for line in log:
            fresh += line.startswith("FRESH")
            if line.startswith("KNEW"):
                k = int(line.split()[2].rstrip(":"))
                named += 1
                right += set(line.split(":", 1)[1].split()) == set(
                    record["hands"][k - 1]["hands"][1 - seat])
    return right, named, fresh


@pytest.mark.process
@needs_sandbox
def test_the_page_cache_remembers_nothing_between_seatings(world: World) -> None:
    run(load_config(cheater(world, "auto")))
    right, named, fresh = knew(world)
    assert (right, named) == (0, 0) and fresh > 0
    logs = "".join(p.read_text() for p in (world.output / "logs").rglob("*-attacker.stderr"))
    assert "KNEW" not in logs and "FRESH" in logs


# -- a referee that is not root ------------------------------------------------------------------


@pytest.mark.process
@needs_sandbox
@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to run the referee as another user")
def test_a_non_root_referee_refuses_unless_a_shared_uid_is_accepted(world: World) -> None:
    """The referee run as an unprivileged user (nobody, via setpriv): it will not run the bots
    as its own uid unless the configuration says so, and then the header says it."""
    env = ["env", "-i", f"PATH={os.environ['PATH']}", "HOME=/nonexistent", "LANG=C.UTF-8"]
    cli = [*env, sys.executable, "-c", "from referee.cli import main; main()"]
    tried = as_nobody(*cli, "--help")
    if tried.returncode != 0:
        pytest.skip(f"this Python or checkout cannot run as nobody (a private folder above "
                    f"it): {tried.stderr.strip()[:120]}")
    shutil.copy(INSTANT, world.attacker / "snoop.py")
    subprocess.run(["chown", "-R", "65534:65534", str(world.root)], check=True)
    config = world.write(f"{sys.executable} snoop.py")
    done = as_nobody(*cli, "tournament", str(config))
    assert done.returncode != 0
    assert "error: " in done.stderr and "not root, and cannot give each bot a subordinate " \
        "uid (user nobody has no subordinate uids in /etc/subuid: as root, usermod " \
        "--add-subuids" in done.stderr and "bot_uids: shared" in done.stderr, done.stderr
    assert not (world.output / "games").exists()
    config = world.write(f"{sys.executable} snoop.py", bot_uids="shared")
    subprocess.run(["chown", "65534:65534", str(config)], check=True)
    done = as_nobody(*cli, "tournament", str(config))
    shown = done.stdout + done.stderr
    if "no working sandbox here" in shown:
        pytest.skip(f"no sandbox for an unprivileged user here: {shown.strip()[:200]}")
    assert done.returncode == 0, shown
    assert "every bot as uid 65534 (bot_uids: shared)" in shown


def test_the_uid_rule_in_process(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same rule without processes: a non-root referee without subordinate uids refuses,
    naming the fix, unless bot_uids: shared; with them it plays; the header says which."""
    from referee.tournament import startup as runmod

    monkeypatch.setattr(runmod.os, "geteuid", lambda: 1234)
    monkeypatch.setattr(runmod, "_subuid_check", lambda: (False, "no range: usermod FIX"))
    config = load_config(world.write(f"{sys.executable} snoop.py"))
    with pytest.raises(ConfigError, match=r"runs as uid 1234, not root, and cannot give each "
                                          r"bot a subordinate uid \(no range: usermod FIX\); "
                                          r".* bot_uids: shared$"):
        runmod.check_bot_uids(config)
    shared = load_config(world.write(f"{sys.executable} snoop.py", bot_uids="shared"))
    runmod.check_bot_uids(shared)
    assert runmod.uid_isolation() == "every bot as uid 1234 (bot_uids: shared)"
    monkeypatch.setattr(runmod, "_subuid_check", lambda: (True, "100000-165535 (u's)"))
    runmod.check_bot_uids(config)
    assert runmod.uid_isolation() == \
        "each bot a subordinate uid of its own: 100000-165535 (u's)"
    monkeypatch.setattr(runmod.os, "geteuid", lambda: 0)
    assert runmod.uid_isolation() == "each bot a uid of its own"


@pytest.mark.process
@needs_sandbox
def test_a_resume_says_when_an_entrant_changed_since(world: World) -> None:
    """The records name each seat's snapshot: a resumed run whose entrant folder changed says
    so (the matches kept were played by other code)."""
    config = world.write(f"{sys.executable} snoop.py")
    run(load_config(config))
    (world.attacker / "snoop.py").write_text((world.attacker / "snoop.py").read_text() + "\n")
    warnings: list[str] = []

    class Warn(Reporter):
        def warn(self, message: str) -> None:
            warnings.append(message)

    journal = world.output / "results.jsonl"  # as if cut short after its first match
    journal.write_text(journal.read_text().splitlines(keepends=True)[0])
    run(load_config(config), reporter=Warn())
    assert any("entrant 'attacker': its folder changed since 1 kept match(es)" in w
               for w in warnings), warnings
    assert not any("'victim'" in w for w in warnings)


def test_the_snapshot_follows_no_symlink_and_refuses_what_its_owner_cannot_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An entrant with a login of its own swaps a folder for a symlink to a private one while
    the referee copies: the copy refuses it rather than follow it; and a file the folder's
    owner could not read (a hard link to another user's 0600 file, say) is refused, naming it."""
    import referee.bots.snapshot as snapmod

    secret = tmp_path / "private"
    secret.mkdir(mode=0o700)
    (secret / "key").write_text("the organiser's key\n")
    folder = tmp_path / "bot"
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / "a.py").write_text("x = 1\n")
    saved = os.open
    swapped: list[bool] = []

    def swap(path: Any, flags: int, *args: Any, **kw: Any) -> Any:
        """The entrant swaps sub for a symlink just before the referee opens it."""
        if path == "sub" and not swapped:
            swapped.append(True)
            os.remove(folder / "sub" / "a.py")
            os.rmdir(folder / "sub")
            (folder / "sub").symlink_to(secret)
        return saved(path, flags, *args, **kw)

    monkeypatch.setattr(snapmod.os, "open", swap)
    with Store(tmp_path) as store:
        with pytest.raises(SandboxError, match=r"cannot copy the entrant's folder .*leave it "
                                               r"alone while the tournament starts"):
            take_snapshot(folder, store, "a")
        assert swapped and not list(store.path.rglob("key"))
        monkeypatch.setattr(snapmod.os, "open", saved)
        snap = take_snapshot(folder, store, "a2")  # swapped before the copy: a symlink, as is
        assert (snap.copy / "sub").is_symlink() and not list(store.path.rglob("key"))
        (folder / "sub").unlink()
        theirs = folder / "theirs.txt"
        theirs.write_text("another user's\n")
        theirs.chmod(0o600)
        os.chown(theirs, 4242, 4242) if os.geteuid() == 0 else pytest.skip("needs root: chown")
        os.chown(folder, 4343, 4343)
        with pytest.raises(SandboxError, match=r"holds 'theirs.txt', a file of uid 4242 "
                           r"\(mode -rw-------\) that uid 4343 may not read, yet uid 4343 may "
                           r"write the folder itself: .*remove it"):
            take_snapshot(folder, store, "b")
        assert not list(store.path.rglob("theirs.txt"))
