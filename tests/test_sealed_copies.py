"""What a snapshot costs: sparse files stay sparse, the entries a folder may hold are capped
(64 a MiB of ``snapshot_mb``, 32,768 at the default: each is an inode in memory while the
tournament runs), refused in one line naming the entrant."""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

import pytest

from conftest import tournament_yaml
from referee.bots.policy import SandboxError
from referee.bots.snapshot import Store, take_snapshot
from referee.tournament.config import ConfigError, load_config
from referee.tournament.sealing import seal

MIB = 1 << 20


def sparse_folder(folder: Path) -> Path:
    """A folder holding a 128 MiB sparse file with 1 MiB of data in its middle."""
    folder.mkdir()
    (folder / "bot.py").write_text("print('ready')\n")
    big = folder / "sparse.bin"
    with open(big, "wb") as f:
        f.truncate(128 * MIB)
        f.seek(64 * MIB)
        f.write(b"d" * MIB)
    return big


def digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(MIB):
            h.update(chunk)
    return h.hexdigest()


def test_a_sparse_file_stays_sparse_in_the_snapshot(tmp_path: Path) -> None:
    big = sparse_folder(tmp_path / "bot")
    assert big.stat().st_blocks * 512 < 4 * MIB  # sparse here (a file system with holes)
    with Store(tmp_path) as store:
        snap = take_snapshot(tmp_path / "bot", store, "a")
        for copy in (snap.copy / "sparse.bin",):
            st = copy.stat()
            assert st.st_size == 128 * MIB
            assert st.st_blocks <= big.stat().st_blocks * 2, st.st_blocks  # not 262,144
            assert digest(copy) == digest(big)
        assert snap.size == 128 * MIB + 15 and snap.stored < 4 * MIB


def test_a_dense_file_with_holes_to_its_end_is_copied_exactly(tmp_path: Path) -> None:
    folder = tmp_path / "bot"
    folder.mkdir()
    tail = folder / "tail.bin"
    with open(tail, "wb") as f:
        f.write(b"head")
        f.truncate(8 * MIB + 3)  # data, then a hole to an odd end
    (folder / "empty").touch()
    with Store(tmp_path) as store:
        snap = take_snapshot(folder, store, "a")
        for copy in (snap.copy,):
            assert (copy / "tail.bin").stat().st_size == 8 * MIB + 3
            assert digest(copy / "tail.bin") == digest(tail)
            assert (copy / "empty").stat().st_size == 0


def test_the_snapshot_keeps_modes_links_and_folders(tmp_path: Path) -> None:
    """Modes, symlinks, nested and empty folders, and the digest of a snapshot of the copy."""
    folder = tmp_path / "bot"
    (folder / "a" / "b").mkdir(parents=True)
    (folder / "empty-dir").mkdir()
    (folder / "run.sh").write_text("#!/bin/sh\n")
    (folder / "run.sh").chmod(0o700)
    (folder / "a" / "b" / "data.txt").write_text("x" * 5000)
    (folder / "a" / "link").symlink_to("b/data.txt")
    (folder / "a" / "out").symlink_to("/etc/hostname")
    with Store(tmp_path) as store:
        old = os.umask(0o077)  # a tournament's
        try:
            snap = take_snapshot(folder, store, "a")
        finally:
            os.umask(old)
        one = snap.copy
        assert (one / "run.sh").stat().st_mode & 0o777 == 0o755
        assert (one / "a" / "b" / "data.txt").stat().st_mode & 0o777 == 0o644
        assert (one / "a" / "b").stat().st_mode & 0o777 == 0o755
        assert os.readlink(one / "a" / "out") == "/etc/hostname"
        assert (one / "empty-dir").is_dir()
        assert take_snapshot(one, store, "again").digest == snap.digest


def test_the_store_lives_in_memory() -> None:
    """A tournament's store (no folder given) is in ``/dev/shm``: what its bots look up and
    read there leaves no mark for the next seating (docs/security.md)."""
    import referee.bots.image as image

    with Store() as store:
        assert store.path.parent == image.base()
        assert os.statvfs(store.path).f_fsid == os.statvfs("/dev/shm").f_fsid


def many(folder: Path, count: int) -> None:
    (folder / "many").mkdir()
    for i in range(count):
        (folder / "many" / str(i)).touch()


@pytest.mark.deep
def test_the_default_cap_allows_a_few_thousand_entries(tmp_path: Path) -> None:
    folder = tmp_path / "bot"
    folder.mkdir()
    many(folder, 4000)
    with Store(tmp_path) as store:
        assert take_snapshot(folder, store, "a", cap_mb=63).entries == 4001  # 4,032 allowed
        many_more = folder / "many"
        for i in range(4000, 4100):
            (many_more / str(i)).touch()
        with pytest.raises(SandboxError, match=r"holds more than 4032 files, folders and "
                                               r"links \(each is kept in memory while the "
                                               r"tournament runs\)"):
            take_snapshot(folder, store, "b", cap_mb=63)
        assert take_snapshot(folder, store, "c", cap_mb=0).entries == 4101  # no cap


def config_for(tmp_path: Path, **extra: object) -> Path:
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "bot.py").write_text("print('ready')\n")
    return tournament_yaml(tmp_path, {n: {"command": f"{sys.executable} bot.py", "workdir": n}
                                      for n in "ab"}, players=2, output="out", **extra)


def test_a_tournament_refuses_too_many_files_in_one_line_naming_the_entrant(
        tmp_path: Path) -> None:
    config = load_config(config_for(tmp_path, snapshot_mb=8))  # 512 entries
    many(tmp_path / "b", 600)
    with Store(tmp_path) as store, pytest.raises(ConfigError) as info:
        seal(config, store, print)
    text = str(info.value)
    assert text.startswith(f"{tmp_path / 't.yaml'}: entrant 'b': the entrant's folder ")
    assert "holds more than 512 files, folders and links" in text and "\n" not in text
    assert "raise snapshot_mb (each MiB allows 64)" in text


def test_sealed_on_threads_the_first_refusal_in_configuration_order_is_the_one_said(
        tmp_path: Path) -> None:
    """The folders are sealed 8 at a time (``SEAL_THREADS``): of two refused entrants the first
    in the file is named, whichever thread finished first (the later one's folder is the
    smaller: it is refused sooner); a sealing that passes gives every entrant its snapshot."""
    names = [f"e{i:02d}" for i in range(24)]
    for name in names:
        (tmp_path / name).mkdir()
        (tmp_path / name / "bot.py").write_text("print('ready')\n")
    entrants = "".join(f"  - {{name: {n}, command: {sys.executable} bot.py, workdir: {n}}}\n"
                       for n in names)
    (tmp_path / "t.yaml").write_text(f"players: 2\noutput: out\nsnapshot_mb: 8\n"
                                     f"entrants:\n{entrants}")
    config = load_config(tmp_path / "t.yaml")
    with Store(tmp_path) as store:
        seals = seal(config, store, print)
        assert seals.names == names and len({seals.digest(n) for n in names}) == 1
    many(tmp_path / "e05", 3000)
    many(tmp_path / "e20", 600)
    with Store(tmp_path) as store, pytest.raises(ConfigError) as info:
        seal(config, store, print)
    assert str(info.value).startswith(f"{tmp_path / 't.yaml'}: entrant 'e05': ")
