"""Sealed entrants (issue 29, after issue 19's lazy snapshots): every folder is copied into the
store, and the copy hashed, before the entrant's first match (in the order play needs them,
beside play: tests/test_sealed_beside_play.py); whatever is written to the folder after (an edit,
a rename, a write through a shared writable mapping, which moves no date) changes neither what
plays nor its digest; what the copy refuses is refused in one line naming the entrant."""

from __future__ import annotations

import errno
import json
import mmap
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
from referee.bots.policy import SandboxError
from referee.bots.probing import capabilities
from referee.bots.snapshot import Store, take_snapshot
from referee.match.job import MatchSpec
from referee.records.record import read_record
from referee.tournament.config import ConfigError, load_config
from referee.tournament.ratings import MatchResult, Standings
from referee.tournament.run import Reporter, run
from referee.tournament.sealing import seal

ROOT = Path(__file__).resolve().parent.parent
INSTANT = ROOT / "bench" / "instant_bot.py"
CAPS = capabilities()
needs_sandbox = pytest.mark.skipif(not CAPS.works, reason=f"no sandbox here: {CAPS.summary()}")
OTHER = "OTHER VERSION PLAYING"


def bot_text(other: bool) -> bytes:
    """The instant bot, its first line a comment, or (``other``) a line of the same length
    that says it is the other version: the two differ only in place."""
    first = f"import sys; sys.stderr.write({OTHER!r} + chr(10))" if other else "#"
    return (first.ljust(72) + "\n").encode() + INSTANT.read_bytes()


@pytest.fixture
def root() -> Iterator[Path]:
    """Three entrant folders (a, b, c: the instant bot each) and a round robin of 2 seats."""
    path = Path(tempfile.mkdtemp(prefix="ct-start-", dir="/var/tmp"))
    path.chmod(0o755)
    for name in "abc":
        (path / name).mkdir(mode=0o755)
        (path / name / "bot.py").write_bytes(bot_text(False))
    tournament_yaml(path, {n: {"command": f"{sys.executable} bot.py", "workdir": n} for n in "abc"},
                    format="round-robin", players=2, target=1, output="out", preflight="off",
                    concurrency=1)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def records(out: Path) -> list[dict[str, Any]]:
    return [dict(read_record(p)) for p in sorted((out / "games").rglob("*.json.gz"))]


# -- a write through a shared writable mapping ---------------------------------------------------

MAPPER = """
import mmap, sys
from referee.records.record import read_record
with open(sys.argv[1], "r+b") as f:
    m = mmap.mmap(f.fileno(), 0, flags=mmap.MAP_SHARED, prot=mmap.PROT_READ | mmap.PROT_WRITE)
m[0:1] = m[0:1]  # the page dirtied before the start: later writes move no date
print("mapped", flush=True)
other = open(sys.argv[2], "rb").read()
for line in sys.stdin:  # "go": rewrite the bot in place, through the mapping, no msync
    m[:len(other)] = other
    print("written", flush=True)
"""


class Mapper:
    """The entrant's login: a process holding a ``MAP_SHARED`` writable mapping of ``bot``,
    which rewrites it to the other version when told (:meth:`rewrite`)."""

    def __init__(self, bot: Path, tmp: Path) -> None:
        other = tmp / "other.py"
        other.write_bytes(bot_text(True))
        self.proc = subprocess.Popen([sys.executable, "-c", MAPPER, str(bot), str(other)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None and self.proc.stdout.readline() == "mapped\n"

    def rewrite(self) -> None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write("go\n")
        self.proc.stdin.flush()
        assert self.proc.stdout.readline() == "written\n"

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()


@pytest.mark.process
def test_control_a_write_through_a_mapping_moves_no_date(tmp_path: Path) -> None:
    """The control: the mapping's write changes the file's bytes and leaves every stat the
    fingerprint of issue 19 took as it was (so a snapshot taken later copied the other
    version, 8 matches of 8 on main)."""
    bot = tmp_path / "bot.py"
    bot.write_bytes(bot_text(False))
    mapper = Mapper(bot, tmp_path)
    try:
        before = os.stat(bot)
        mapper.rewrite()
        after = os.stat(bot)
        assert bot.read_bytes() == bot_text(True)
        assert (after.st_mtime_ns, after.st_ctime_ns, after.st_size, after.st_ino) == \
            (before.st_mtime_ns, before.st_ctime_ns, before.st_size, before.st_ino)
    finally:
        mapper.close()


@pytest.mark.process
def test_a_write_through_a_mapping_after_the_start_changes_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "bot"
    folder.mkdir()
    bot = folder / "bot.py"
    bot.write_bytes(bot_text(False))
    mapper = Mapper(bot, tmp_path)
    try:
        with Store(tmp_path) as store:
            snap = take_snapshot(folder, store, "a")
            mapper.rewrite()
            assert bot.read_bytes() == bot_text(True)  # the folder holds the other version
            assert (snap.copy / "bot.py").read_bytes() == bot_text(False)
            again = take_snapshot(folder, store, "b")
            assert again.digest != snap.digest  # the digest is of the bytes, as copied
    finally:
        mapper.close()


class RewritesA(Reporter):
    """Tells the mapping process to rewrite a's bot once a's folder is sealed: after a's first
    match (an entrant is sealed before its first match, beside play), so that its three other
    matches are played after the write."""

    def __init__(self, mapper: Mapper) -> None:
        self.mapper = mapper
        self.warnings: list[str] = []
        self.rewritten = False

    def match_done(self, spec: MatchSpec, result: MatchResult, done: int,
                   table: Standings) -> None:
        if "a" in result.players and not self.rewritten:
            self.rewritten = True
            self.mapper.rewrite()

    def warn(self, message: str) -> None:
        self.warnings.append(message)


@pytest.mark.process
@needs_sandbox
def test_a_tournament_plays_the_bytes_of_the_start_whatever_the_mapping_writes(
        root: Path) -> None:
    mapper = Mapper(root / "a" / "bot.py", root)
    try:
        reporter = RewritesA(mapper)
        run(load_config(root / "t.yaml"), reporter=reporter)
    finally:
        mapper.close()
    assert reporter.rewritten
    assert (root / "a" / "bot.py").read_bytes() == bot_text(True)  # the folder was rewritten
    logs = sorted((root / "out" / "logs").glob("*/?-a.stderr"))
    assert len(logs) == 4  # a plays 4 matches (2 opponents, 2 seatings)
    assert not any(OTHER in p.read_text() for p in logs)  # 0 of 4 (main: every one)
    games = records(root / "out")
    digests = {g["snapshots"][g["players"].index("a")] for g in games if "a" in g["players"]}
    assert len(digests) == 1 and not reporter.warnings
    assert all(not g["faults"] for g in games)


# -- every edit after the start changes nothing --------------------------------------------------


@pytest.mark.parametrize("edit", ["write", "append", "add", "remove", "rename", "chmod",
                                  "symlink", "mkdir"])
def test_every_kind_of_edit_after_the_snapshot_changes_nothing_that_plays(
        tmp_path: Path, edit: str) -> None:
    folder = tmp_path / "bot"
    (folder / "sub").mkdir(parents=True)
    (folder / "bot.py").write_text("print('hi')\n")
    (folder / "sub" / "data.txt").write_text("data\n")
    (folder / "link").symlink_to("bot.py")
    bot = folder / "bot.py"
    with Store(tmp_path) as store:
        snap = take_snapshot(folder, store, "x")
        assert take_snapshot(folder, store, "y").digest == snap.digest  # stable
        if edit == "write":
            bot.write_text("print('ho')\n")
        elif edit == "append":
            (folder / "sub" / "data.txt").write_text("data, more\n")
        elif edit == "add":
            (folder / "sub" / "new.txt").write_text("")
        elif edit == "remove":
            (folder / "sub" / "data.txt").unlink()
        elif edit == "rename":
            bot.rename(folder / "other.py")
        elif edit == "chmod":
            bot.chmod(0o755)
        elif edit == "symlink":
            (folder / "link").unlink()
            (folder / "link").symlink_to("sub")
        else:
            (folder / "sub" / "deeper").mkdir()
        assert take_snapshot(folder, store, "z").digest != snap.digest
        copy = snap.copy
        assert (copy / "bot.py").read_text() == "print('hi')\n"
        assert (copy / "sub" / "data.txt").read_text() == "data\n"
        assert os.readlink(copy / "link") == "bot.py"
        assert sorted(p.name for p in copy.rglob("*")) == ["bot.py", "data.txt", "link", "sub"]
        assert (copy / "bot.py").stat().st_mode & 0o777 == 0o644


@pytest.mark.process
@needs_sandbox
def test_a_folder_changed_mid_tournament_plays_its_start_code(root: Path) -> None:
    """c's bot made to crash after c's first match (c is sealed before it): c still plays
    every match, unfaulted, from its snapshot (issue 19 left it out, saying why)."""

    class EditsC(Reporter):
        edited = False

        def match_done(self, spec: MatchSpec, result: MatchResult, done: int,
                       table: Standings) -> None:
            if not self.edited and "c" in result.players:
                self.edited = True
                with open(root / "c" / "bot.py", "a") as f:
                    f.write("raise SystemExit(3)\n")

    reporter = EditsC()
    run(load_config(root / "t.yaml"), reporter=reporter)
    assert reporter.edited
    standings = json.loads((root / "out" / "standings.json").read_text())
    assert "left_out" not in standings
    games = records(root / "out")
    assert len(games) == 6 and all(not g["faults"] for g in games)
    for g in games:
        assert all(isinstance(d, str) and d.startswith("sha256:") for d in g["snapshots"])


# -- what the copy refuses, before play ----------------------------------------------------------


def test_seal_snapshots_every_folder_before_play_and_shares_a_shared_one(root: Path) -> None:
    text = (root / "t.yaml").read_text().replace("workdir: c", "workdir: a")
    (root / "t.yaml").write_text(text)
    config = load_config(root / "t.yaml")
    with Store(root) as store:
        seals = seal(config, store, print)
        assert all(seals.digest(n) for n in "abc")
        assert seals.sealed("a").snapshot is seals.sealed("c").snapshot  # one folder, one copy
        assert seals.sealed("b").snapshot.copy != seals.sealed("a").snapshot.copy
        assert seals.summary.startswith("sealed: 2 folders snapshotted")
        (root / "b" / "new.txt").write_text("added\n")
        assert not (seals.sealed("b").snapshot.copy / "new.txt").exists()


def test_the_snapshot_refuses_a_file_the_referee_cannot_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file its entrant may read but a referee that is not root may not (mode 0600, the
    entrant's own): refused before play, naming it and the fix (faked here: the test runs as
    root, which reads everything)."""
    folder = tmp_path / "b"
    folder.mkdir()
    (folder / "bot.py").write_text("print('ready')\n")
    (folder / "mine").write_text("x")
    real = os.open

    def denied(path: Any, flags: int, *args: Any, **kw: Any) -> int:
        if path == "mine":
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), path)
        return real(path, flags, *args, **kw)

    monkeypatch.setattr("referee.bots.snapshot.os.open", denied)
    with Store(tmp_path) as store, \
            pytest.raises(SandboxError, match=r"Permission denied .*mine.*make it readable"):
        take_snapshot(folder, store, "a")
    monkeypatch.setattr("referee.bots.snapshot.os.open", real)
    with Store(tmp_path) as store:
        assert take_snapshot(folder, store, "a").files == 2


@pytest.mark.process
def test_the_snapshot_refuses_a_mount_inside_the_folder(tmp_path: Path) -> None:
    """A file system mounted inside an entrant's folder (a FUSE mount it serves, say) serves
    its files as it likes: refused before play. Here /proc is bind-mounted into the folder
    (root only)."""
    folder = tmp_path / "b"
    (folder / "proc").mkdir(parents=True)
    (folder / "bot.py").write_text("print('ready')\n")
    if os.geteuid() != 0 or subprocess.run(["mount", "--bind", "/proc", str(folder / "proc")],
                                           capture_output=True, check=False).returncode:
        pytest.skip("cannot bind-mount here (not root, or no mount command)")
    try:
        with Store(tmp_path) as store, \
                pytest.raises(SandboxError, match="another file system at 'proc'"):
            take_snapshot(folder, store, "a")
    finally:
        subprocess.run(["umount", str(folder / "proc")], check=True)
    with Store(tmp_path) as store:
        assert take_snapshot(folder, store, "a").files == 1


def test_a_tournament_refuses_a_folder_past_its_cap_before_play(root: Path) -> None:
    (root / "b" / "blob").write_bytes(b"\0" * (2 << 20))
    text = (root / "t.yaml").read_text() + "snapshot_mb: 1\nsandbox: none\n"
    (root / "t.yaml").write_text(text)
    config = load_config(root / "t.yaml")
    with Store(root) as store, pytest.raises(ConfigError,
                                             match=r"entrant 'b': .*more than 1 MiB"):
        seal(config, store, print)
    assert not list(store.path.rglob("blob"))


def test_a_copy_that_fails_at_the_start_names_the_entrant(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A full disk while the folders are copied: one line naming the entrant, before play."""
    config = load_config(root / "t.yaml")

    def full(*args: Any, **kw: Any) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr("referee.bots.snapshot.os.copy_file_range", full)
    with Store(root) as store, \
            pytest.raises(ConfigError, match=r"entrant 'a': cannot copy .*No space left"):
        seal(config, store, print)


def test_a_mapped_file_is_hashed_as_copied(tmp_path: Path) -> None:
    """The digest is of the copy: written through a mapping in this process between the copy
    and the hash (here, as ``copy_data`` returns), the folder's file differs, the digest
    does not."""
    import referee.bots.snapshot as snapmod

    folder = tmp_path / "bot"
    folder.mkdir()
    (folder / "bot.py").write_bytes(bot_text(False))
    with Store(tmp_path) as store:
        clean = take_snapshot(folder, store, "clean")
        real = snapmod.copy_data

        def then_write(src: int, dst: int, size: int, blocks: int) -> None:
            real(src, dst, size, blocks)
            with open(folder / "bot.py", "r+b") as f, \
                    mmap.mmap(f.fileno(), 0, flags=mmap.MAP_SHARED) as m:
                m[:] = bot_text(True)

        saved, snapmod.copy_data = snapmod.copy_data, then_write
        try:
            snap = take_snapshot(folder, store, "a")
        finally:
            snapmod.copy_data = saved
        assert snap.digest == clean.digest
        assert (snap.copy / "bot.py").read_bytes() == bot_text(False)
