"""Sealed entrants snapshotted lazily (issue 19): every folder is fingerprinted (stat only) when
a tournament starts and copied the first time one of its matches is planned; a folder changed
in between is refused (left out, saying why, in its records and the standings), never played
with its new code; a folder changed a moment before the start is copied at once; a resume does
the same."""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import referee.bots.snapshot as snapmod
from referee.bots.sandbox import SandboxError, capabilities
from referee.bots.snapshot import FolderChanged, Store, fingerprint, take_snapshot
from referee.match.job import MatchSpec
from referee.tournament.config import Config, ConfigError, load_config
from referee.tournament.ratings import MatchResult, Standings
from referee.tournament.run import Reporter, run
from referee.tournament.sealing import seal

ROOT = Path(__file__).resolve().parent.parent
INSTANT = ROOT / "bench" / "instant_bot.py"
CAPS = capabilities()
needs_sandbox = pytest.mark.skipif(not CAPS.works, reason=f"no sandbox here: {CAPS.summary()}")
CHANGED = "changed after the tournament started"


@pytest.fixture
def root() -> Iterator[Path]:
    """Three entrant folders (a, b, c: the instant bot each) and a round robin of 2 seats."""
    path = Path(tempfile.mkdtemp(prefix="ct-lazy-", dir="/var/tmp"))
    path.chmod(0o755)
    lines = ["format: round-robin", "players: 2", "target: 1", "output: out",
             'preflight: "off"', "concurrency: 1", "entrants:"]
    for name in "abc":
        (path / name).mkdir(mode=0o755)
        shutil.copy(INSTANT, path / name / "bot.py")
        lines.append(f"  - {{name: {name}, command: {sys.executable} bot.py, workdir: {name}}}")
    (path / "t.yaml").write_text("\n".join(lines) + "\n")
    yield path
    shutil.rmtree(path, ignore_errors=True)


class EditsC(Reporter):
    """Appends a line to c's bot once the first match has been played (before c's first
    match is planned; ``at_start``: once the header is out, before any match), and keeps the
    warnings."""

    def __init__(self, root: Path, *, at_start: bool = False) -> None:
        self.root, self.at_start = root, at_start
        self.warnings: list[str] = []
        self.edited = False

    def warn(self, message: str) -> None:
        self.warnings.append(message)

    def started(self, config: Config, total: int, done: int, sandbox: str) -> None:
        if self.at_start:
            self.edit()

    def match_done(self, spec: MatchSpec, result: MatchResult, done: int,
                   table: Standings) -> None:
        if not self.edited and "c" not in result.players:
            self.edit()

    def edit(self) -> None:
        self.edited = True
        with open(self.root / "c" / "bot.py", "a") as f:
            f.write("# changed during play\n")


def records(out: Path) -> list[dict[str, object]]:
    return [json.loads(p.read_text()) for p in sorted((out / "games").rglob("*.json"))]


@pytest.mark.process
@needs_sandbox
def test_a_folder_changed_mid_tournament_is_left_out_saying_why(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(snapmod, "HOT_S", 0.0)  # the folders were made a moment ago
    reporter = EditsC(root)
    outcome = run(load_config(root / "t.yaml"), reporter=reporter)
    assert reporter.edited and outcome.standings is not None
    assert any(w.startswith("entrant 'c': ") and CHANGED in w and "left out" in w
               for w in reporter.warnings), reporter.warnings
    standings = json.loads((root / "out" / "standings.json").read_text())
    assert CHANGED in standings["left_out"]["c"]
    games = records(root / "out")
    with_c = [g for g in games if "c" in g["players"]]  # type: ignore[operator]
    assert with_c and len(with_c) < len(games)
    for g in with_c:  # a startup fault saying why, no process, no digest of new code
        seat = g["players"].index("c")  # type: ignore[attr-defined]
        assert any(f["seat"] == seat and f["detail"].startswith("left out: ") and
                   CHANGED in f["detail"] for f in g["faults"])  # type: ignore[attr-defined]
        assert g["snapshots"][seat] is None  # type: ignore[index]
    for g in games:  # a and b played from their snapshots, taken as planned
        for name, digest in zip(g["players"], g["snapshots"], strict=True):  # type: ignore
            assert (digest is None) == (name == "c")

    # a resume: cut back to the first match; the folders are fingerprinted again (c as it is
    # now), and c changed again after the start, before its first match, is refused again
    journal = root / "out" / "results.jsonl"
    journal.write_text(journal.read_text().splitlines(keepends=True)[0])
    (root / "out" / "standings.json").unlink()
    again = EditsC(root, at_start=True)
    outcome = run(load_config(root / "t.yaml"), reporter=again)
    assert again.edited and outcome.played == len(games) - 1
    assert any(w.startswith("entrant 'c': ") and CHANGED in w for w in again.warnings), \
        again.warnings
    assert CHANGED in json.loads((root / "out" / "standings.json").read_text())["left_out"]["c"]


@pytest.mark.process
@needs_sandbox
def test_control_a_folder_left_alone_plays_every_match(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The control: the same tournament, no edit: c plays, from its snapshot."""
    monkeypatch.setattr(snapmod, "HOT_S", 0.0)
    warnings: list[str] = []

    class Warn(Reporter):
        def warn(self, message: str) -> None:
            warnings.append(message)

    run(load_config(root / "t.yaml"), reporter=Warn())
    standings = json.loads((root / "out" / "standings.json").read_text())
    assert "left_out" not in standings and not warnings
    for g in records(root / "out"):
        assert all(isinstance(d, str) and d.startswith("sha256:")
                   for d in g["snapshots"])  # type: ignore[attr-defined]
        assert not g["faults"]


def test_seal_snapshots_only_what_changed_a_moment_ago(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder changed within HOT_S of its fingerprint is copied at once (an edit in the same
    tick of the clock could leave its stats as they were); the others wait for their first
    match."""
    config = load_config(root / "t.yaml")
    with Store(root) as store:
        monkeypatch.setattr(snapmod, "HOT_S", 3600.0)  # all made "a moment ago"
        assert all(seal(config, store, print).digest(n) for n in "abc")
        monkeypatch.setattr(snapmod, "HOT_S", 0.0)
        seals = seal(config, store, print)
        assert not any(seals.digest(n) for n in "abc")
        assert seals.sealed("a").snapshot.digest == seals.digest("a")
        (root / "b" / "new.txt").write_text("added\n")
        with pytest.raises(FolderChanged, match=CHANGED):
            seals.sealed("b")
        with pytest.raises(FolderChanged):  # the same answer every time after
            seals.sealed("b")


@pytest.mark.parametrize("edit", ["write", "append", "add", "remove", "rename", "chmod",
                                  "symlink", "mkdir"])
def test_every_kind_of_edit_changes_the_fingerprint(tmp_path: Path, edit: str) -> None:
    """What the fingerprint states, and what a snapshot taken later refuses."""
    folder = tmp_path / "bot"
    (folder / "sub").mkdir(parents=True)
    (folder / "bot.py").write_text("print('hi')\n")
    (folder / "sub" / "data.txt").write_text("data\n")
    (folder / "link").symlink_to("bot.py")
    before = fingerprint(folder)
    assert fingerprint(folder) == before  # stable while nothing changes
    bot = folder / "bot.py"
    if edit == "write":  # same size: the times tell, once the clock has ticked (a few ms)
        time.sleep(0.05)
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
    assert fingerprint(folder).digest != before.digest
    with Store(tmp_path) as store:
        with pytest.raises(FolderChanged, match=CHANGED):
            take_snapshot(folder, store, "x", expect=before)
        assert not list(store.path.iterdir())  # nothing of the refused copy stays
        take_snapshot(folder, store, "y", expect=fingerprint(folder))


def test_the_fingerprint_refuses_what_the_copy_refuses(tmp_path: Path) -> None:
    """The cap and the depth are checked by the stat walk, before play, as the copy did."""
    folder = tmp_path / "big"
    folder.mkdir()
    (folder / "blob").write_bytes(b"\0" * (2 << 20))
    with pytest.raises(SandboxError, match="holds more than 1 MiB"):
        fingerprint(folder, cap_mb=1)
    assert fingerprint(folder, cap_mb=3).size == 2 << 20
    deep = tmp_path / "deep"
    (deep / "/".join(["d"] * (snapmod.MAX_DEPTH + 2))).mkdir(parents=True)
    with pytest.raises(SandboxError, match="more than 64 deep"):
        fingerprint(deep)


def test_the_fingerprint_refuses_a_file_the_referee_cannot_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file its entrant may read but a referee that is not root may not (mode 0600, the
    entrant's own): the copy would fail at the first match with the folder unchanged, which
    stops the tournament at every resume. The stat walk refuses it before play instead (the
    referee's own access is faked here: this test runs as root, which reads everything)."""
    folder = tmp_path / "b"
    folder.mkdir()
    (folder / "bot.py").write_text("print('ready')\n")
    (folder / "mine").write_text("x")
    real = os.access
    monkeypatch.setattr(os, "access", lambda path, mode, **kw: path != "mine" and
                        real(path, mode, **kw))
    with pytest.raises(SandboxError, match=r"Permission denied .*mine.*make it readable"):
        fingerprint(folder)
    monkeypatch.setattr(os, "access", real)
    assert fingerprint(folder).files == 2


@pytest.mark.process
def test_the_fingerprint_refuses_a_mount_inside_the_folder(tmp_path: Path) -> None:
    """A file system mounted inside an entrant's folder (a FUSE mount it serves, say) answers
    the stat walk with whatever dates and sizes it likes: refused before play. Here /proc is
    bind-mounted into the folder (root only)."""
    folder = tmp_path / "b"
    (folder / "proc").mkdir(parents=True)
    (folder / "bot.py").write_text("print('ready')\n")
    if os.geteuid() != 0 or subprocess.run(["mount", "--bind", "/proc", str(folder / "proc")],
                                           capture_output=True, check=False).returncode:
        pytest.skip("cannot bind-mount here (not root, or no mount command)")
    try:
        with pytest.raises(SandboxError, match="another file system at 'proc'"):
            fingerprint(folder)
    finally:
        subprocess.run(["umount", str(folder / "proc")], check=True)
    assert fingerprint(folder).files == 1


def test_a_tournament_refuses_a_folder_past_its_cap_before_play(root: Path) -> None:
    (root / "b" / "blob").write_bytes(b"\0" * (2 << 20))
    text = (root / "t.yaml").read_text() + "snapshot_mb: 1\nsandbox: none\n"
    (root / "t.yaml").write_text(text)
    config = load_config(root / "t.yaml")
    with Store(root) as store, pytest.raises(ConfigError,
                                             match=r"entrant 'b': .*more than 1 MiB"):
        seal(config, store, print)


def test_a_copy_that_fails_blames_the_entrant_only_if_its_folder_changed(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder swapped for a symlink just as it is copied (the copy fails: it follows no
    symlink) is a change, refused as one; a copy that fails with the folder as it was (a full
    disk) is not the entrant's doing: it is raised, not remembered, and the next try copies."""
    monkeypatch.setattr(snapmod, "HOT_S", 0.0)
    (root / "a" / "sub").mkdir()
    (root / "a" / "sub" / "x.py").write_text("x = 1\n")
    config = load_config(root / "t.yaml")
    saved_open, saved_write = os.open, os.write

    def swap(path: Any, flags: int, *args: Any, **kw: Any) -> Any:
        if path == "sub":
            (root / "a" / "sub" / "x.py").unlink()
            (root / "a" / "sub").rmdir()
            (root / "a" / "sub").symlink_to(root / "b")
            monkeypatch.setattr("referee.bots.snapshot.os.open", saved_open)
        return saved_open(path, flags, *args, **kw)

    def full(fd: int, data: Any) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    with Store(root) as store:
        seals = seal(config, store, print)
        monkeypatch.setattr("referee.bots.snapshot.os.write", full)
        with pytest.raises(SandboxError, match="No space left on device") as info:
            seals.sealed("b")
        assert not isinstance(info.value, FolderChanged)
        monkeypatch.setattr("referee.bots.snapshot.os.write", saved_write)
        assert seals.sealed("b").snapshot.files == 1  # not remembered: copied now
        monkeypatch.setattr("referee.bots.snapshot.os.open", swap)
        with pytest.raises(FolderChanged, match=CHANGED + r" \(cannot copy"):
            seals.sealed("a")
        assert not list(store.path.rglob("x.py"))
