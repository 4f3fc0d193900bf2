"""The league's watcher against hostile submission folders, in process (real folders, real
YAML; a real bot only where an admission is the point): names a hostile author chooses, a
folder that changes while it is read, more folders than the league looks at, an author who
pushes a version every few seconds, and a poll that looks again only at what changed. Also
the page's server and the output folder the league prepares as a tournament does."""

from __future__ import annotations

import os
import shutil
import stat
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import EXAMPLES
from referee.bots.limits import SandboxMode
from referee.bots.policy import SandboxError
from referee.bots.snapshot import Store
from referee.league import admit as admission
from referee.league import folders, sources
from referee.league.admit import Admission
from referee.league.config import load_league
from referee.league.folders import name_problem
from referee.league.journal import LeagueFolder, prepare
from referee.league.live import write_page
from referee.league.submissions import (
    Admissions,
    Admitted,
    Known,
    Note,
    Refused,
    Withdrawn,
)
from referee.tournament.config import ConfigError


def league(tmp_path: Path, **keys: Any) -> Path:
    (tmp_path / "subs").mkdir(exist_ok=True)
    path = tmp_path / "league.yaml"
    text = {"name": "w", "submissions": "subs", "sandbox": "none", "settle_s": 2,
            "check": False, "output": "out"} | keys
    path.write_text("".join(f"{k}: {v}\n" for k, v in text.items()))
    return path


def watcher(path: Path, now: list[float], *, known: dict[str, Known] | None = None,
            store: Store | None = None) -> Admissions:
    known = known or {}
    return Admissions(load_league(path), store=store,  # type: ignore[arg-type]
                      mode=SandboxMode.NONE, logs=path.parent / "logs", known=known,
                      versions={a: k.version for a, k in known.items()}, clock=lambda: now[0])


def submit(folder: Path, text: str = "") -> None:
    folder.mkdir(parents=True)
    shutil.copy(EXAMPLES / "random_bot.py", folder / "bot.py")
    if text:
        with open(folder / "bot.py", "a") as f:
            f.write(text)


# -- 1. names and folders a hostile author makes -----------------------------------------------

HOSTILE = {b"a" * 250: "longer than 64 characters", b"bad\xff\xfe": "not valid UTF-8",
           b"new\nline": "may only hold", b"-x": "may not start with '-'",
           b"\x1b[31mred": "may only hold", b"<script>alert(1)": "may only hold"}


def test_hostile_folder_names_are_refused_in_one_printable_line(tmp_path: Path) -> None:
    path = league(tmp_path, settle_s=3600)  # alice never settles: no admission (no store here)
    subs = os.fsencode(tmp_path / "subs")
    for name in HOSTILE:
        submit(Path(os.fsdecode(subs + b"/" + name)))
    submit(tmp_path / "subs" / "alice")
    os.symlink(tmp_path, tmp_path / "subs" / "outside")  # a link named like a folder
    (tmp_path / "subs" / "..hidden").mkdir()  # a dot folder: left alone
    now = [100.0]
    w = watcher(path, now)
    w.poll()
    events = w.events()
    refused = {e.author: e.reason for e in events if isinstance(e, Refused)}
    assert len(refused) == len(HOSTILE), refused  # at once (a link once it settles)
    for author, reason in refused.items():
        assert author.encode("utf-8") and reason.encode("utf-8")  # printable: no lone byte
        assert not any(c in author + reason for c in "\n\r\x1b\x00"), author
    for name, why in HOSTILE.items():
        printed = folders.shown(os.fsdecode(name))
        assert why in refused[printed], (printed, refused)
    assert "bad\\xff\\xfe" in refused and "new\\nline" in refused
    assert "\\x1b[31mred" in refused  # the escape written out, never sent to a terminal
    assert "a" * 80 + "... (250 characters)" in refused
    # the league's page and its journal take every one of them
    write_page(tmp_path / "report", {"name": "w", "live": True, "rows": [],
                                     "refused": {a: {"reason": r} for a, r in refused.items()},
                                     "log": [f"refused {a}: {r}" for a, r in refused.items()]})
    page = (tmp_path / "report" / "index.html").read_text(encoding="utf-8")
    assert "bad\\xff\\xfe" in page and "&lt;script&gt;" in page and "<script>" not in page
    now[0] += 5
    w.poll()
    assert not [e for e in w.events() if isinstance(e, Refused)]  # each said once
    w.close()


def test_a_name_that_makes_the_logs_path_too_long_is_refused() -> None:
    deep = Path("/", *["d" * 200] * 20)  # an output folder 4,020 bytes deep
    assert name_problem("alice", Path("/results/x")) is None
    assert "too long" in (name_problem("alice", deep) or "")
    assert "may not end in .v<number>" in (name_problem("alice.v2", Path("/r")) or "")


def test_a_folder_that_changes_while_it_is_read_waits_and_is_not_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = league(tmp_path, settle_s=3600)
    submit(tmp_path / "subs" / "alice" / "lib")
    real = os.scandir
    gone = tmp_path / "subs" / "alice" / "lib" / "bot.py"

    class Vanishing:  # the folder's listing, then a file of it removed before it is stated
        def __init__(self, where: Any) -> None:
            with real(where) as it:
                self.entries = list(it)
            named = os.readlink(f"/proc/self/fd/{where}") if isinstance(where, int) else where
            if str(named).endswith("lib") and gone.exists():
                gone.unlink()

        def __enter__(self) -> Iterator[os.DirEntry[str]]:
            return iter(self.entries)

        def __exit__(self, *exc: object) -> None:
            pass

    monkeypatch.setattr(os, "scandir", Vanishing)
    now = [100.0]
    w = watcher(path, now)
    w.poll()
    monkeypatch.setattr(os, "scandir", real)
    assert w.events() == []  # no refusal: it changed, so it has not settled
    for _ in range(3):
        now[0] += 1.5
        w.poll()
    assert w.events() == []
    w.close()


def test_a_folder_changed_while_its_snapshot_is_taken_waits_and_is_not_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The snapshot's copy fails because the author changed the folder under it (a file
    gone mid-copy): the admission waits for the folder to settle again, as for any change
    while it is copied, instead of refusing it (no bot starts: it never gets that far)."""
    path = league(tmp_path)
    config = load_league(path)
    alice = tmp_path / "subs" / "alice"
    submit(alice)
    (alice / "data.txt").write_text("x")
    before = folders.fingerprint(alice, cap_mb=config.snapshot_mb)

    def copy_cut_short(folder: Path, *args: Any, **kwargs: Any) -> Any:
        (alice / "data.txt").unlink()  # the change, then the copy's failure it causes
        raise SandboxError(f"cannot copy the entrant's folder {str(folder)!r}: No such file "
                           f"or directory ('data.txt')")

    monkeypatch.setattr(admission, "take_snapshot", copy_cut_short)
    store = Store(tmp_path)
    parent = os.open(tmp_path / "subs", os.O_RDONLY | os.O_DIRECTORY)
    st = os.stat(alice)
    what = Admission("alice", alice, key=(st.st_dev, st.st_ino), parent=parent)
    try:
        with pytest.raises(InterruptedError):
            admission.admit(what, "alice", config=config, store=store, mode=SandboxMode.NONE,
                            logs=tmp_path / "logs", stop=threading.Event(), before=before)
        before = folders.fingerprint(alice, cap_mb=config.snapshot_mb)  # settled again
        monkeypatch.setattr(admission, "take_snapshot", failing)
        with pytest.raises(ValueError, match="cannot copy"):  # unchanged: a refusal
            admission.admit(what, "alice", config=config, store=store, mode=SandboxMode.NONE,
                            logs=tmp_path / "logs", stop=threading.Event(), before=before)
    finally:
        os.close(parent)
        store.close()


def failing(folder: Path, *args: Any, **kwargs: Any) -> Any:
    raise SandboxError(f"cannot copy the entrant's folder {str(folder)!r}: Permission denied")


def test_special_files_are_never_opened(tmp_path: Path) -> None:
    """A FIFO as command.txt (which a read would wait on for ever) and a device file: the
    command is refused as no file, and the walk only looks at them."""
    alice = tmp_path / "alice"
    alice.mkdir()
    os.mkfifo(alice / "command.txt")
    if os.geteuid() == 0:
        os.mknod(alice / "zero", 0o600 | stat.S_IFCHR, os.makedev(1, 5))
    with pytest.raises(ValueError, match=r"command\.txt is not a file"):
        admission._command(alice, "python3 bot.py")
    assert folders.fingerprint(alice, cap_mb=1)


# -- 2. more folders than the league looks at ----------------------------------------------------

def test_past_the_cap_the_authors_already_in_keep_their_place(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sources, "MAX_FOLDERS", 3)
    path = league(tmp_path, settle_s=3600)  # nothing settles: no admission (no store here)
    subs = tmp_path / "subs"
    (subs / "zed").mkdir()  # admitted in an earlier run: the journal knows it
    (subs / "zed" / "bot.py").write_text("")
    now = [100.0]
    w = watcher(path, now, known={"zed": Known("zed", 1, "sha256:00")})
    for i in range(200):  # then a flood of newcomers, each with a file
        (subs / f"new{i:03d}").mkdir()
        (subs / f"new{i:03d}" / "bot.py").write_text("")
    events: list[Any] = []
    for _ in range(4):  # past settle_s: a folder missing that long would be withdrawn
        w.poll()
        events += w.events()
        now[0] += 3.0
    assert not [e for e in events if isinstance(e, Withdrawn | Refused)]  # zed plays on
    assert "zed" in w.known and set(w._folders) == {"zed", "new000", "new001"}
    notes = [e.text for e in events if isinstance(e, Note)]
    assert len(notes) == 1 and "the 198 newest wait until some leave" in notes[0], notes
    submit(subs / "aaa")  # sorts first, came last: waits, nobody already in loses a place
    w.poll()
    assert "aaa" not in w._folders and w.events() == [Note(
        "the submissions folder holds more than 3 folders with a place: the 199 newest wait "
        "until some leave (those already in keep their place)")]
    shutil.rmtree(subs / "new000")  # room: the one that came first takes it, not the newest
    now[0] += 3.0
    w.poll()
    assert "new002" in w._folders and "aaa" not in w._folders
    w.close()


@pytest.mark.heavy  # 10,000 folders made and polled
def test_ten_thousand_empty_folders_hold_no_place(tmp_path: Path) -> None:
    """q55: one login makes 10,000 empty folders: they hold no place (a folder that never held
    a bot), are said once in one line, and the next student's folder is looked at at once."""
    path = league(tmp_path, settle_s=1)
    subs = tmp_path / "subs"
    for i in range(10_000):
        (subs / f"e{i:05d}").mkdir()
    now = [100.0]
    w = watcher(path, now)
    for _ in range(3):
        w.poll()
        now[0] += 2.0
    submit(subs / "zoe")
    w.poll()
    assert "zoe" in w._folders
    events = w.events()
    assert not [e for e in events if isinstance(e, Refused)]
    notes = [e.text for e in events if isinstance(e, Note)]
    assert notes == ["10000 submission folders are empty: left alone until a file comes"]
    w.close()


@pytest.mark.skipif(os.geteuid() != 0, reason="a student's own folders need another uid's "
                    "folders, which only root can make here")
def test_a_student_login_owns_at_most_a_few_folders(tmp_path: Path) -> None:
    """q55 by a student's login: its folders past OWNER_FOLDERS are left alone (one note),
    however many; the organiser's own folders are not counted."""
    path = league(tmp_path, settle_s=3600)
    subs = tmp_path / "subs"
    for i in range(50):
        submit(subs / f"m{i:02d}")
        os.chown(subs / f"m{i:02d}", 54321, 54321)
    submit(subs / "zoe")  # the organiser's (an rsync): counted against no one
    now = [100.0]
    w = watcher(path, now)
    w.poll()
    looked = set(w._folders)
    assert "zoe" in looked and len(looked) == sources.OWNER_FOLDERS + 1, looked
    notes = [e.text for e in w.events() if isinstance(e, Note)]
    assert notes == [f"uid 54321 owns more than {sources.OWNER_FOLDERS} submission folders: "
                     f"{50 - sources.OWNER_FOLDERS} of them are left alone (a student's bot is "
                     f"one folder; the first {sources.OWNER_FOLDERS} are looked at)"], notes
    w.close()


# -- 3. a version every few seconds --------------------------------------------------------------

def admitted(w: Admissions) -> list[Any]:
    """The admissions' next events but notes, once there are some (a real pre-flight)."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        got = [e for e in w.events() if not isinstance(e, Note)]
        if got:
            return got
        time.sleep(0.05)
    return []


def alice_admitted(tmp_path: Path) -> tuple[Path, list[float], Store, Admissions]:
    """A league of ``version_s`` 30 and ``settle_s`` 1 whose watcher (clock ``now``) has
    admitted alice's first version, at once."""
    path = league(tmp_path, version_s=30, settle_s=1)
    alice = tmp_path / "subs" / "alice"
    submit(alice)
    now = [1000.0]
    store = Store(tmp_path)
    w = watcher(path, now, store=store)
    w.poll()
    now[0] += 2
    w.poll()
    [first] = admitted(w)
    assert isinstance(first, Admitted) and first.name == "alice", first
    return alice, now, store, w


@pytest.mark.process
def test_a_new_version_waits_for_version_s_and_the_latest_is_taken(tmp_path: Path) -> None:
    alice, now, store, w = alice_admitted(tmp_path)
    try:
        with open(alice / "bot.py", "a") as f:  # a second version two seconds later
            f.write("# version 2\n")
        now[0] += 2
        w.poll()
        now[0] += 2
        w.poll()  # settled, but alice's last version was admitted 4 s ago: it waits
        events = w.events()
        assert len(events) == 1 and isinstance(events[0], Note), events
        assert "alice: a new version waits 26 s" in events[0].text
        with open(alice / "bot.py", "a") as f:  # and a newer one while it waits
            f.write("# version 3\n")
        for _ in range(4):
            now[0] += 5
            w.poll()
        assert w.events() == [] and not w._folders["alice"].busy  # said once, nothing admitted
        now[0] += 10  # the interval is over: the folder as it is now is admitted
        w.poll()
        [second] = admitted(w)
        assert isinstance(second, Admitted) and second.name == "alice.v2", second
        assert second.entrant.workdir is not None
        assert "# version 3" in (second.entrant.workdir / "bot.py").read_text()
        assert w.known["alice"].at > 0
    finally:
        w.close()
        store.close()


@pytest.mark.process
def test_a_folder_moved_away_and_back_is_a_new_version_that_waits(tmp_path: Path) -> None:
    """Withdrawing a folder (away for settle_s) and putting it back changed is no way round
    version_s: the run's first look at a folder is the only one that never waits."""
    alice, now, store, w = alice_admitted(tmp_path)
    try:
        away = tmp_path / "away"
        alice.rename(away)
        for _ in range(2):
            now[0] += 2
            w.poll()
        assert [e for e in w.events() if isinstance(e, Withdrawn)] == [Withdrawn("alice")]
        with open(away / "bot.py", "a") as f:
            f.write("# version 2\n")
        away.rename(alice)
        for _ in range(3):
            now[0] += 2
            w.poll()
        events = w.events()
        assert [e for e in events if isinstance(e, Admitted)] == [], events
        assert any(isinstance(e, Note) and "alice: a new version waits" in e.text
                   for e in events), events
        now[0] += 30
        w.poll()
        [second] = admitted(w)
        assert isinstance(second, Admitted) and second.name == "alice.v2", second
    finally:
        w.close()
        store.close()


def test_after_a_restart_the_journals_version_is_admitted_again_at_once(
        tmp_path: Path) -> None:
    """The journal's version admitted a moment ago, then a restart: the folder's first look in
    this run is not held up by version_s (most often it is that version, which must play)."""
    path = league(tmp_path, version_s=3600)
    (tmp_path / "subs" / "alice").mkdir()  # empty: refused once admitted (no bot starts)
    now = [100.0]
    w = watcher(path, now, known={"alice": Known("alice", 1, "sha256:00", at=time.time())})
    w.poll()
    now[0] += 3
    w.poll()
    got = admitted(w)
    assert len(got) == 1 and isinstance(got[0], Refused) and "is empty" in got[0].reason
    w.close()


def test_version_s_is_a_checked_key_with_a_default(tmp_path: Path) -> None:
    assert load_league(league(tmp_path)).version_s == 60.0
    assert load_league(league(tmp_path, version_s=0)).version_s == 0.0
    with pytest.raises(ConfigError, match="version_s: must be from 0 to 86400"):
        load_league(league(tmp_path, version_s=-1))


# -- 4. a poll looks again only at what changed --------------------------------------------------

def test_a_poll_walks_only_a_folder_whose_stat_changed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(folders, "RACY_NS", 0)  # every timestamp trusted at once
    path = league(tmp_path, settle_s=3600)
    for name in ("alice", "bob"):
        submit(tmp_path / "subs" / name / "lib")
        os.utime(tmp_path / "subs" / name / "lib", ns=(1, 1))  # any change later shows
    walked: list[str] = []
    real = os.scandir

    def scandir(where: Any) -> Any:
        named = os.readlink(f"/proc/self/fd/{where}") if isinstance(where, int) else where
        walked.append(os.path.basename(os.fsdecode(named)))
        return real(where)

    monkeypatch.setattr(os, "scandir", scandir)
    now = [100.0]
    w = watcher(path, now)
    w.poll()
    assert {"alice", "bob", "lib"} <= set(walked)
    walked.clear()
    w.poll()
    assert walked == []  # nothing changed: not one folder listed again
    seen = {a: s.seen for a, s in w._folders.items()}
    bot = tmp_path / "subs" / "alice" / "lib" / "bot.py"
    data = bot.read_bytes()
    bot.write_bytes(data[::-1])  # the same size, in place: the folder's own times stay
    os.utime(bot, ns=(1, 1))
    w.poll()
    assert walked == ["alice", "lib"]  # alice's folder alone walked again
    assert w._folders["alice"].seen != seen["alice"] and w._folders["bob"].seen == seen["bob"]
    walked.clear()
    (tmp_path / "subs" / "bob" / "lib" / "new.py").write_text("")  # an entry added deep down
    w.poll()
    assert "bob" in walked and w._folders["bob"].seen != seen["bob"]
    w.close()


# -- 5. the page's server ------------------------------------------------------------------------

def test_the_served_page_is_not_cached_and_nothing_else_is_served(tmp_path: Path) -> None:
    from referee.web.routes import Kind
    from referee.web.serve import ReportServer

    out = LeagueFolder(tmp_path / "out")
    write_page(out.report, {"name": "w", "live": True, "rows": []})
    out.secret.write_text("00" * 16)
    out.results.write_text("{}\n")
    (out.root / "logs" / "x").mkdir(parents=True)
    (out.root / "logs" / "x" / "0-a.stderr").write_text("secret")
    server = ReportServer(out.root, Kind.LEAGUE, 0, marker=out.league_marker)
    address = server.start()  # http://127.0.0.1:PORT/KEY/: the key, the address's first folder
    try:
        with urllib.request.urlopen(address, timeout=30) as reply:
            assert b"<!doctype html>" in reply.read()
            assert reply.headers["Cache-Control"] == "no-cache"
        with urllib.request.urlopen(address + "report/league.json", timeout=30) as reply:
            assert reply.headers.get_all("Cache-Control") == ["no-cache"]
        with urllib.request.urlopen(address + "report/", timeout=30) as reply:
            assert b"<!doctype html>" in reply.read()
        head = urllib.request.Request(address, method="HEAD")
        with urllib.request.urlopen(head, timeout=30) as reply:  # to the page, not a listing
            assert reply.url.endswith("/report/index.html")
        for hidden in (".deal-secret", "report/../.deal-secret", "results.jsonl",
                       "%2e%2e/results.jsonl", "report/%2e%2e/results.jsonl",
                       "logs/x/0-a.stderr", "report/../logs/x/0-a.stderr", "games/"):
            with pytest.raises(urllib.error.HTTPError) as err:
                urllib.request.urlopen(address + hidden, timeout=30)
            assert err.value.code == 404, hidden
        with pytest.raises(urllib.error.HTTPError) as err:  # without the key: nothing
            urllib.request.urlopen(address.rsplit("/", 2)[0] + "/report/index.html", timeout=30)
        assert err.value.code == 401
    finally:
        server.close()


# -- 6. the output folder, prepared as a tournament's --------------------------------------------

def test_the_league_folder_is_prepared_by_the_tournaments_code(tmp_path: Path) -> None:
    (tmp_path / "subs").mkdir()
    for name in ("a", "b"):
        (tmp_path / f"{name}.yaml").write_text(f"name: {name}\nsubmissions: subs\n"
                                               f"output: out\n")
    secret = prepare(load_league(tmp_path / "a.yaml"))
    folder = LeagueFolder(tmp_path / "out")
    (folder.root / "keep.txt").write_text("the organiser's")
    with pytest.raises(ConfigError, match=r"holds another league \(name is 'a' there, 'b' "
                                          r"here\)"):
        prepare(load_league(tmp_path / "b.yaml"))
    (folder.games / ".x.json.gz.tmp").write_text("")  # a write cut short by a kill
    assert prepare(load_league(tmp_path / "a.yaml")) == secret
    assert not (folder.games / ".x.json.gz.tmp").exists()
    folder.events.write_text("{}\n")
    assert prepare(load_league(tmp_path / "b.yaml"), fresh=True) != secret
    assert (folder.root / "keep.txt").exists() and not folder.events.exists()
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "x").write_text("")
    with pytest.raises(ConfigError, match="not a ct-referee league folder"):
        prepare(load_league(tmp_path / "a.yaml", output=tmp_path / "c"))



def test_a_journal_holding_a_name_no_utf8_can_say_is_read_back_and_shown(
        tmp_path: Path) -> None:
    """An older run journaled a refusal under a folder name of bytes that are not UTF-8 (as
    JSON's ``\\udcff``): the league reads it back and writes its page, the name escaped."""
    import json
    import threading

    from referee.league.season import League

    config = load_league(league(tmp_path))
    secret = prepare(config)
    folder = LeagueFolder(config.output)
    folder.events.write_text(json.dumps({"event": "refused", "author": "bad\udcff\x1b[2J",
                                         "reason": "its folder's name is not valid UTF-8"})
                             + "\n")
    lg = League(config, secret, runner=None,  # type: ignore[arg-type]
                stop=threading.Event(), mode=SandboxMode.NONE)
    lg.resume()
    lg.page_writer.close(lg.page_data(live=False), [])
    assert list(lg.versions.refused) == ["bad\\xff\\x1b[2J"]
    page = (folder.report / "index.html").read_text(encoding="utf-8")
    assert "bad\\xff\\x1b[2J" in page and "\x1b" not in page
