"""The league's parts that start no process: the matchmaker, the table, the configuration,
the fingerprint of a submission folder, the page (``tests/test_league.py`` runs real leagues)."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.bots.limits import SandboxMode
from referee.league.config import load_league
from referee.league.folders import fingerprint
from referee.league.journal import LeagueFolder, match_id, prepare
from referee.league.matchmaker import FLOOR, Matchmaker
from referee.league.page import render
from referee.league.submissions import Admissions, Known, Withdrawn
from referee.league.table import HISTORY, Table, set_points
from referee.tournament.config import ConfigError

# -- the matchmaker ----------------------------------------------------------------------------

def test_a_new_entrant_plays_its_placement_sets_first_against_a_spread_of_opponents() -> None:
    mm = Matchmaker(players=2, placement=3)
    for i in range(10):  # an established field, 15 to 35, each sure of itself
        mm.add(f"e{i}", 15.0 + 2.2 * i, 1.0, placement=0)
    mm.add("new", 25.0, 8.0)
    sets = [mm.next_set() for _ in range(3)]
    assert all(s is not None and s[0] == "new" for s in sets)
    opponents = [s[1] for s in sets if s is not None]
    assert len(set(opponents)) == 3  # not the same opponent three times
    mus = {f"e{i}": 15.0 + 2.2 * i for i in range(10)}
    spread = [mus[o] for o in opponents]
    assert min(spread) < 22 and max(spread) > 28  # about mu - sigma and mu + sigma



@given(st.integers(min_value=2, max_value=4), st.integers(min_value=4, max_value=30),
       st.lists(st.floats(min_value=0, max_value=50), min_size=30, max_size=30),
       st.integers(min_value=0, max_value=3))
@settings(max_examples=30, deadline=None)
def test_no_entrant_falls_behind_its_fair_share_by_more_than_the_floor(
        players: int, n: int, mus: list[float], placement: int) -> None:
    mm = Matchmaker(players=players, placement=placement)
    for i in range(n):
        mm.add(f"e{i}", mus[i], 8.0 - i % 5)
    played: Counter[str] = Counter()
    placing = placement * n  # placement sets come first; the floor catches up after them
    ceiling = FLOOR + 1.0
    for k in range(40 * n):
        chosen = mm.next_set()
        assert chosen is not None and len(set(chosen)) == players
        played.update(chosen)
        for name in chosen:  # the ratings move a little; the most uncertain stays on top
            m = mm.members[name]
            mm.update(name, m.mu, max(1.0, m.sigma * 0.99))
        owed = max(mm.owed(name) for name in mm.members)
        if k + 1 == placing:
            ceiling = max(ceiling, owed)
        elif k + 1 > placing:  # what placement left is paid back, and never grows by a set
            assert owed < ceiling + 1, k
    assert max(mm.owed(name) for name in mm.members) <= FLOOR + 1
    assert min(played.values()) >= 40 * players * 0.5 - placing * players  # everyone plays


def test_newcomers_take_turns_at_their_placement_sets() -> None:
    mm = Matchmaker(players=3, placement=3)
    for i in range(30):  # a class of 30 on the first day
        mm.add(f"s{i}", 25.0, 25.0 / 3)
    firsts = [mm.next_set()[0] for _ in range(30)]  # type: ignore[index]
    assert sorted(firsts) == sorted(f"s{i}" for i in range(30))  # each its first set at once


def test_a_retired_entrant_is_never_chosen_and_too_few_play_nothing() -> None:
    mm = Matchmaker(players=2, placement=1)
    for name in "abc":
        mm.add(name, 25.0, 8.0)
    mm.remove("b")
    assert all("b" not in (mm.next_set() or ()) for _ in range(20))
    mm.remove("c")
    assert mm.next_set() is None


def test_a_thousand_entrants_cost_memory_by_entrant_not_by_set() -> None:
    mm = Matchmaker(players=2, placement=2)
    for i in range(1000):
        mm.add(f"e{i}", 25.0, 8.0)
    for _ in range(8_000):
        a, _ = mm.next_set()  # type: ignore[misc]
        mm.update(a, mm.members[a].mu + 0.1, mm.members[a].sigma * 0.999)
    assert len(mm._sigma) <= 4 * 1000 + 64 and len(mm._owed) <= 4 * 1000 + 64 + 2


# -- the table ---------------------------------------------------------------------------------

def test_set_points_average_the_seatings_less_the_luck() -> None:
    points = set_points([("a", "b"), ("b", "a")], [[[10, 2], [4, 4]], [[8, 4]]],
                        [[[1.0, -1.0], [0, 0]], None])
    assert points == {"a": (10 - 1 + 4) / 2, "b": (2 + 1 + 8) / 2}  # hand 2: only one seating


def test_the_history_stays_bounded_and_a_retired_version_keeps_it() -> None:
    table = Table()
    table.join("a", author="a", version=1)
    table.join("b", author="b", version=1)
    for k in range(600):
        table.rate_set({"a": 10.0 + k % 3, "b": 9.0}, faulted=())
    assert len(table.rows["a"].history) < HISTORY
    assert table.rows["a"].history[-1][0] > 590  # still the latest
    table.retire("a", "replaced by a.v2")
    assert [r.name for r in table.ranked()] == ["b"] and table.retired()[0].history


def test_a_faulted_member_ranks_below_whatever_its_points() -> None:
    table = Table()
    for n in "ab":
        table.join(n, author=n, version=1)
    table.rate_set({"a": 100.0, "b": 0.0}, faulted={"a"})
    assert table.ranked()[0].name == "b"


# -- the configuration -------------------------------------------------------------------------

def test_a_league_configuration_is_checked_as_a_tournaments(tmp_path: Path) -> None:
    (tmp_path / "subs").mkdir()
    good = tmp_path / "league.yaml"
    good.write_text("name: c1\nsubmissions: subs\nplacement: 2\nlimits: {move_ms: 500}\n")
    config = load_league(good)
    assert config.submissions == tmp_path / "subs" and config.placement == 2
    assert config.limits.move_ms == 500 and config.players == 2 and config.check
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: c1\nsubmissions: nowhere\nplacment: 2\nlimits: {move_ms: -1}\n")
    with pytest.raises(ConfigError) as err:
        load_league(bad)
    text = str(err.value)
    assert "submissions: " in text and "did you mean 'placement'" in text and "move_ms" in text
    assert all(line.startswith(str(bad)) for line in text.splitlines())


def test_an_output_folder_of_another_league_is_refused(tmp_path: Path) -> None:
    (tmp_path / "subs").mkdir()
    for name in ("a", "b"):
        (tmp_path / f"{name}.yaml").write_text(f"name: {name}\nsubmissions: subs\n"
                                               f"output: out\n")
    prepare(load_league(tmp_path / "a.yaml"))
    secret = LeagueFolder(tmp_path / "out").secret
    assert secret.stat().st_mode & 0o777 == 0o600
    with pytest.raises(ConfigError, match="holds another league"):
        prepare(load_league(tmp_path / "b.yaml"))
    assert prepare(load_league(tmp_path / "a.yaml")).hex() == secret.read_text().strip()
    assert match_id(7, 1) == "r1-g000007-s01"
    LeagueFolder(tmp_path / "out").results.write_text('{"id": "r1-g000001-s01"}\n')
    secret.unlink()  # results without the secret that dealt them: refused, as a tournament's
    with pytest.raises(ConfigError, match=r"has results but no \.deal-secret"):
        prepare(load_league(tmp_path / "a.yaml"))
    prepare(load_league(tmp_path / "a.yaml"), fresh=True)
    assert secret.is_file()


# -- a submission folder's fingerprint ---------------------------------------------------------

def test_the_fingerprint_sees_a_change_and_follows_no_symlink(tmp_path: Path) -> None:
    sub = tmp_path / "alice"
    sub.mkdir()
    (sub / "bot.py").write_text("print('ready')\n")
    os.symlink("/etc", sub / "outside")  # a link out: its target read, never followed
    first = fingerprint(sub, cap_mb=1)
    assert fingerprint(sub, cap_mb=1) == first
    (sub / "bot.py").write_text("print('ready v2')\n")
    assert fingerprint(sub, cap_mb=1) != first
    os.symlink(sub, tmp_path / "mallory")
    with pytest.raises(ValueError, match="symlink"):
        fingerprint(tmp_path / "mallory", cap_mb=1)


def test_a_huge_folder_is_refused_at_the_caps_without_reading_it(tmp_path: Path) -> None:
    sparse = tmp_path / "sparse"
    sparse.mkdir()
    with open(sparse / "big.bin", "wb") as f:
        f.truncate(1 << 40)  # a terabyte of holes: its size alone refuses it
    with pytest.raises(ValueError, match="more than 1 MiB"):
        fingerprint(sparse, cap_mb=1)
    many = tmp_path / "many"
    many.mkdir()
    for i in range(70):
        (many / f"f{i}").write_text("")
    with pytest.raises(ValueError, match="more than 64 files"):
        fingerprint(many, cap_mb=1)


# -- the page ----------------------------------------------------------------------------------

def test_the_page_escapes_what_a_submitter_chose() -> None:
    row = {"name": "a", "author": "a", "version": 1, "mu": 25.0, "sigma": 8.0, "score": 1.0,
           "sets": 2, "matches": 4, "wins": 1, "points_per_hand": 3.0, "faults": 0,
           "history": [[1, 24.0, 7.0], [2, 26.0, 6.0]], "active": True, "why": ""}
    page = render({"name": "l", "live": True, "rows": [row],
                   "refused": {"evil": {"reason": "got '<script>alert(1)</script>'",
                                        "stderr": ["<b onmouseover=alert(1)>"]}},
                   "log": ["refused evil: <img src=x onerror=alert(1)>"]})
    assert "<script>alert" not in page and "<img" not in page and "<b onm" not in page
    assert "&lt;script&gt;" in page and 'http-equiv="refresh"' in page and "<svg" in page


def test_a_folder_is_withdrawn_only_once_it_stayed_away(tmp_path: Path) -> None:
    subs = tmp_path / "subs"
    subs.mkdir()
    path = tmp_path / "league.yaml"
    path.write_text("name: w\nsubmissions: subs\nsettle_s: 2\nsandbox: none\n")
    now = [100.0]
    watcher = Admissions(load_league(path), store=None,  # type: ignore[arg-type]
                         mode=SandboxMode.NONE, logs=tmp_path / "logs",
                         known={"alice": Known("alice", 1, "sha256:00")}, versions={"alice": 1},
                         clock=lambda: now[0])
    watcher.poll()  # alice's folder is gone (swapped, say): not yet
    now[0] += 1.0
    watcher.poll()
    assert watcher.events() == []
    subs.rename(tmp_path / "away")  # the submissions folder itself unreadable: nobody goes
    now[0] += 5.0
    watcher.poll()
    assert watcher.events() == []
    (tmp_path / "away").rename(subs)
    watcher.poll()
    assert watcher.events() == [Withdrawn("alice")] and "alice" not in watcher.known


def test_a_folder_swapped_for_a_link_after_it_settled_is_not_admitted(tmp_path: Path) -> None:
    """An author settles a folder, then swaps it for a link to another author's folder before
    it is read: the admission opens the name without following the link, sees no folder, and
    waits for it to settle again, never admitting the other author's code under this name. In
    process, no bot started."""
    import threading

    from referee.bots.snapshot import Store
    from referee.league.admit import Admission, admit

    subs = tmp_path / "subs"
    (subs / "mallory").mkdir(parents=True)
    (subs / "alice").mkdir()
    for who in ("mallory", "alice"):
        (subs / who / "bot.py").write_text(f"# {who}\n")
        (subs / who / "command.txt").write_text("python3 bot.py\n")
    path = tmp_path / "league.yaml"
    path.write_text("name: s\nsubmissions: subs\nsandbox: none\ncheck: false\n")
    config = load_league(path)
    before = fingerprint(subs / "mallory", cap_mb=config.snapshot_mb)
    st = os.stat(subs / "mallory")
    (subs / "mallory").rename(tmp_path / "mallory-old")
    (subs / "mallory").symlink_to(subs / "alice")
    store = Store(tmp_path)
    parent = os.open(subs, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for swapped in ("link", "folder"):
            with pytest.raises(InterruptedError):
                admit(Admission("mallory", subs / "mallory", key=(st.st_dev, st.st_ino),
                                parent=parent), "mallory", config=config, store=store,
                      mode=SandboxMode.NONE, logs=tmp_path / "logs", stop=threading.Event(),
                      before=before)
            if swapped == "link":  # now another folder (alice's, moved) under the name
                (subs / "mallory").unlink()
                (subs / "alice").rename(subs / "mallory")
        assert not [p for p in store.path.iterdir() if p.name.startswith("mallory")]
    finally:
        os.close(parent)
        store.close()
