"""Every file and folder of a snapshot judged by its own stat against whoever may write a folder
on its way (issue 29): a root-owned entrant folder with an upload folder its entrant's login may
write let a hard link to another entrant's private file into the snapshot (only the top
folder's owner was asked, and root may read everything). Real files and owners: root only."""

from __future__ import annotations

import json
import os
import struct
import sys
from pathlib import Path

import pytest
import test_sealed
from test_sealed import World

from referee.bots.policy import SandboxError
from referee.bots.snapshot import Store, take_snapshot
from referee.tournament.config import load_config
from referee.tournament.dispatch import TournamentError
from referee.tournament.run import run

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to own files as others")
world = test_sealed.world
ENTRANT, OTHER = 4343, 4242  # the entrant's login, another entrant's


def private(world: World, mode: int = 0o600) -> Path:
    """The victim's file, its folder closed to others: ``key.txt`` of uid OTHER."""
    world.victim.chmod(0o700)
    key = world.victim / "key.txt"
    key.write_text("the victim's key\n")
    key.chmod(mode)
    os.chown(world.victim, OTHER, OTHER)
    os.chown(key, OTHER, OTHER)
    return key


def upload(world: World, how: str) -> Path:
    """``attacker/upload``: a folder the entrant's login may write (``how``: it owns it, its
    group may write it, every user may, or it owns the folder above a root-owned one)."""
    up = world.attacker / "upload"
    up.mkdir()
    if how == "owner":
        os.chown(up, ENTRANT, ENTRANT)
    elif how == "group":
        os.chown(up, 0, ENTRANT)
        up.chmod(0o775)
    elif how == "everyone":
        up.chmod(0o1757)  # sticky, as /tmp; its group (root's) may not write it
    elif how == "above":
        os.chown(up, ENTRANT, ENTRANT)
        up = up / "lib"
        up.mkdir(mode=0o755)  # root's, inside the entrant's: the entrant may swap it
    else:
        assert how == "root"
    return up


@pytest.mark.process
@test_sealed.needs_sandbox
@pytest.mark.parametrize("how", ["owner", "group", "everyone", "above"])
def test_a_hard_link_to_another_entrants_private_file_is_refused(world: World, how: str) -> None:
    key = private(world)
    up = upload(world, how)
    os.link(key, up / "key.txt")
    config = world.write(f"{sys.executable} snoop.py")
    with pytest.raises(TournamentError) as info:  # found as play starts: the run stops
        run(load_config(config))
    text = str(info.value)
    who = {"owner": f"uid {ENTRANT}", "group": f"group {ENTRANT}", "everyone": "every user",
           "above": f"uid {ENTRANT}"}[how]
    where = "'upload'"
    assert text.startswith(f"{config}: entrant 'attacker': the entrant's folder "), text
    assert f"holds '{(up / 'key.txt').relative_to(world.attacker)}', a file of uid {OTHER} " \
           f"(mode -rw-------) that {who} may not read, yet {who} may write {where}" in text
    assert "\n" not in text
    results = world.output / "results.jsonl"  # the refused entrant played no match
    assert not any("attacker" in json.loads(line)["players"]
                   for line in (results.read_text().splitlines() if results.is_file() else []))


def test_control_in_a_folder_only_root_may_write_the_organiser_vouches(world: World,
                                                                       tmp_path: Path) -> None:
    """The control: the same link in a folder only root may write was put there by the
    organiser, and is copied (as main copied it in the upload folder too)."""
    key = private(world)
    up = upload(world, "root")
    os.link(key, up / "key.txt")
    with Store(tmp_path) as store:
        snap = take_snapshot(world.attacker, store, "a")
        assert (snap.copy / "upload" / "key.txt").read_text() == "the victim's key\n"


def test_a_readable_file_linked_in_from_outside_is_refused(world: World,
                                                           tmp_path: Path) -> None:
    """Readable by the entrant, but another user's, with a name outside the folder: whose it
    is and why it is there cannot be vouched for."""
    key = private(world, mode=0o644)
    up = upload(world, "owner")
    os.link(key, up / "key.txt")
    with Store(tmp_path) as store, pytest.raises(SandboxError) as info:
        take_snapshot(world.attacker, store, "a")
    text = str(info.value)
    assert f"holds 'upload/key.txt', a hard link to a file of uid {OTHER} with 1 other " \
           f"name(s) outside the folder, and uid {ENTRANT} may write 'upload'" in text, text
    assert "replace it with a copy of its own" in text
    assert not list(store.path.rglob("key.txt"))


def test_hard_links_that_are_vouched_for_are_copied(world: World, tmp_path: Path) -> None:
    """Every name inside the folder; or the entrant's own file (a second name in its home)."""
    up = upload(world, "owner")
    shared = up / "a.txt"
    shared.write_text("both names inside\n")
    os.chown(shared, OTHER, OTHER)
    os.link(shared, up / "b.txt")
    mine = world.root / "home-file"
    mine.write_text("the entrant's own\n")
    mine.chmod(0o600)
    os.chown(mine, ENTRANT, ENTRANT)
    os.link(mine, up / "mine.txt")
    with Store(tmp_path) as store:
        snap = take_snapshot(world.attacker, store, "a")
        assert (snap.copy / "upload" / "b.txt").read_text() == "both names inside\n"
        assert (snap.copy / "upload" / "mine.txt").read_text() == "the entrant's own\n"
        assert (snap.copy / "upload" / "mine.txt").stat().st_nlink == 1  # a copy of its own


def test_a_folder_the_entrant_may_not_list_is_refused(world: World, tmp_path: Path) -> None:
    up = upload(world, "owner")
    closed = up / "closed"
    closed.mkdir(mode=0o700)
    (closed / "notes.txt").write_text("another user's notes\n")
    os.chown(closed, OTHER, OTHER)
    with Store(tmp_path) as store, pytest.raises(SandboxError) as info:
        take_snapshot(world.attacker, store, "a")
    assert f"holds 'upload/closed', a folder of uid {OTHER} (mode drwx------) that uid " \
           f"{ENTRANT} may not list, yet uid {ENTRANT} may write 'upload'" in str(info.value)


def test_the_entrants_own_files_are_copied_whatever_their_mode(world: World,
                                                               tmp_path: Path) -> None:
    """Its own file, it may read (it can chmod it); root's readable files too."""
    os.chown(world.attacker, ENTRANT, ENTRANT)
    own = world.attacker / "weights.bin"
    own.write_bytes(b"w" * 10)
    own.chmod(0o000)
    os.chown(own, ENTRANT, ENTRANT)
    with Store(tmp_path) as store:
        snap = take_snapshot(world.attacker, store, "a")
        assert (snap.copy / "weights.bin").read_bytes() == b"w" * 10
        assert snap.files == 4 and not snap.skipped


def acl(*entries: tuple[int, int, int]) -> bytes:
    """``system.posix_acl_access`` as the kernel stores it: version 2, then (tag, perm, id)."""
    return struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *e) for e in entries)


def test_another_users_file_with_an_access_list_is_refused(world: World,
                                                            tmp_path: Path) -> None:
    """Mode 0644, yet its access control list refuses the entrant (``user:4343:---``): the
    mode bits do not tell who may read it."""
    up = upload(world, "owner")
    theirs = up / "theirs.txt"
    theirs.write_text("another user's\n")
    os.chown(theirs, OTHER, OTHER)
    try:
        os.setxattr(theirs, "system.posix_acl_access",
                    acl((1, 6, 0xFFFFFFFF), (2, 0, ENTRANT), (4, 4, 0xFFFFFFFF),
                        (0x10, 4, 0xFFFFFFFF), (0x20, 4, 0xFFFFFFFF)))
    except OSError as err:
        pytest.skip(f"no access control lists here: {err}")
    with Store(tmp_path) as store, pytest.raises(SandboxError) as info:
        take_snapshot(world.attacker, store, "a")
    assert "holds 'upload/theirs.txt', a file of uid 4242 with an access control list, and " \
           f"uid {ENTRANT} may write 'upload'" in str(info.value)
