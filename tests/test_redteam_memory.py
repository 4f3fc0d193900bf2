"""Red-team attacks on the in-memory runtime tree (issue 37): what a bot's own files can make
the referee copy into the tree it is shown."""

from __future__ import annotations

import os
import struct
from pathlib import Path

import pytest

from referee.bots.runtime import closure


def crafted_elf(interp: str, needed: str) -> bytes:
    """A 64-bit little-endian ELF file naming ``interp`` (PT_INTERP) and ``needed``
    (DT_NEEDED), loaded at address 0 so that file offsets are addresses."""
    phoff, phnum = 64, 3
    interp_at = phoff + 56 * phnum
    interp_raw = interp.encode() + b"\0"
    strtab_at = interp_at + len(interp_raw)
    strtab = b"\0" + needed.encode() + b"\0"
    dyn_at = strtab_at + len(strtab)
    dyn = struct.pack("<qQqQqQ", 5, strtab_at, 1, 1, 0, 0)
    end = dyn_at + len(dyn)
    head = b"\x7fELF" + bytes([2, 1, 1]) + bytes(9)
    head += struct.pack("<HHIQQQIHHHHHH", 2, 62, 1, 0, phoff, 0, 0, 64, 56, phnum, 0, 0, 0)
    ph = struct.pack("<IIQQQQQQ", 1, 5, 0, 0, 0, end, end, 4096)
    ph += struct.pack("<IIQQQQQQ", 3, 4, interp_at, interp_at, interp_at,
                      len(interp_raw), len(interp_raw), 1)
    ph += struct.pack("<IIQQQQQQ", 2, 6, dyn_at, dyn_at, dyn_at, len(dyn), len(dyn), 8)
    return head + ph + interp_raw + strtab + dyn


def test_a_bots_elf_cannot_name_a_file_outside_the_system_through_dotdot(
        tmp_path: Path) -> None:
    """``/usr/../x`` starts with a system top but names ``/x``: a bot's own ELF file must not
    make the referee copy another entrant's (world-readable) file into its runtime tree."""
    other = tmp_path / "other"
    other.mkdir()
    secret, lib = other / "strategy.txt", other / "weights.so"
    secret.write_text("the other entrant's secret\n")
    lib.write_text("the other entrant's weights\n")
    for p in (tmp_path, other):
        p.chmod(0o755)
    secret.chmod(0o644)
    lib.chmod(0o644)
    mine = tmp_path / "mine"
    mine.mkdir()
    exe = mine / "bot"
    exe.write_bytes(crafted_elf(f"/usr/..{secret}", f"/lib/../..{lib}"))
    exe.chmod(0o755)
    found = closure(exe, [], own=[mine])
    assert str(secret) not in found.files
    assert str(lib) not in found.files


def test_a_bots_own_script_cannot_grow_the_tree_by_naming_every_program(
        tmp_path: Path) -> None:
    """A bot's run script whose words are the names of root's programs: only interpreters are
    taken from a bot's own script, at most two (``MAX_CALLED``), not every program the host
    has (1,296 MiB measured before, against 201 MiB for a python3 bot)."""
    mine = tmp_path / "mine"
    mine.mkdir()
    names = sorted({p.name for d in ("/usr/bin", "/usr/sbin") if os.path.isdir(d)
                    for p in Path(d).iterdir()})[:4000]
    exe = mine / "bot"
    exe.write_text("#!/bin/sh\n" + " ".join(names) + "\n")
    exe.chmod(0o755)
    plain = mine / "plain"
    plain.write_text("#!/bin/sh\necho hi\n")
    plain.chmod(0o755)
    base = closure(plain, [], own=[mine]).size
    grown = closure(exe, [], own=[mine]).size
    found = closure(exe, [], own=[mine])
    assert grown < base + (512 << 20), grown >> 20
    assert not any(os.path.basename(p).startswith(("gcc", "vim", "docker", "rustc"))
                   for p in found.files)


def test_the_runtimes_a_run_shows_are_capped_together(monkeypatch: pytest.MonkeyPatch,
                                                      tmp_path: Path) -> None:
    """Past ``MAX_HELD_BYTES`` of runtime trees in one referee process, a new runtime is refused
    in one line (entrants choosing ever other runtimes cannot fill ``/dev/shm``); one already
    shown is shown again, from the one cache of views."""
    from referee.bots import view

    monkeypatch.setattr(view, "_SHOWN", {})
    shown = view.runtime_view(Path("/bin/sh"), (), ())
    assert 0 < shown.size < view.MAX_HELD_BYTES
    monkeypatch.setattr(view, "MAX_HELD_BYTES", shown.size)
    assert view.runtime_view(Path("/bin/sh"), (), ()) is shown
    script = tmp_path / "bot"
    script.write_text("#!/bin/sh\necho hi\n")
    script.chmod(0o755)
    again = view.runtime_view(script, (), (tmp_path,))  # a script of sh: the same tree
    assert again.tree == shown.tree and again.key == shown.key
    with pytest.raises(view.ViewError, match=r"would hold more than \d+ MiB in /dev/shm"):
        view.runtime_view(Path("/usr/bin/env"), (), ())
    assert list(view._SHOWN.values()) == [shown, again]


def test_the_views_kept_are_bounded_and_a_dropped_one_keeps_its_tree(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A league adds a view a version for as long as it runs: past ``MAX_SHOWN`` the oldest
    view is dropped, and made again on its next use from the tree still held."""
    from referee.bots import view

    monkeypatch.setattr(view, "_SHOWN", {})
    monkeypatch.setattr(view, "MAX_SHOWN", 1)
    first = view.runtime_view(Path("/bin/sh"), (), ())
    script = tmp_path / "bot"
    script.write_text("#!/bin/sh\necho hi\n")
    script.chmod(0o755)
    second = view.runtime_view(script, (), (tmp_path,))
    assert list(view._SHOWN.values()) == [second]
    again = view.runtime_view(Path("/bin/sh"), (), ())
    assert again is not first and again.tree == first.tree and again.key == first.key
    assert list(view._SHOWN.values()) == [again]


def test_a_symlink_in_a_shown_folder_copies_nothing_from_elsewhere(tmp_path: Path) -> None:
    """A ``shared`` folder (or a runtime) holding a symlink to a file any user may read
    elsewhere (another entrant's folder): the link is shown, dangling; the file is not copied
    into memory. A link into the system folders is followed."""
    shared, other = tmp_path / "shared", tmp_path / "other"
    shared.mkdir()
    other.mkdir()
    (other / "strategy.txt").write_text("secret\n")
    (other / "strategy.txt").chmod(0o644)
    (shared / "peek").symlink_to(other / "strategy.txt")
    (shared / "sh").symlink_to("/bin/sh")
    found = closure(Path("/bin/sh"), [shared])
    assert str(shared / "peek") in found.links
    assert str(other / "strategy.txt") not in found.files
    assert os.path.realpath("/bin/sh") in found.files


@pytest.mark.skipif(os.geteuid() != 0, reason="only root removes another uid's folder")
def test_root_collects_the_folders_of_users_that_are_gone(tmp_path: Path) -> None:
    """A folder in memory whose user no longer exists (a user made for a run, deleted) is
    removed by a root referee; one of a user that exists is left alone."""
    import pwd

    from referee.bots.image import collect_gone

    gone = next(u for u in range(70000, 80000) if not _exists(pwd, u))
    stale, kept = tmp_path / f"ct-referee-{gone}", tmp_path / "ct-referee-0"
    for folder, uid in ((stale, gone), (kept, 0)):
        (folder / "t-x").mkdir(parents=True)
        os.chown(folder, uid, uid)
    assert collect_gone(tmp_path) == [stale]
    assert not stale.exists() and kept.exists()


def _exists(pwd: object, uid: int) -> bool:
    try:
        pwd.getpwuid(uid)  # type: ignore[attr-defined]
    except KeyError:
        return False
    return True
