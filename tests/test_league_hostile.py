"""Hostile authors against a league's admissions, each with real folders and real bot
processes, the watcher on its own threads as in a league: two authors who hold the admissions
with bots that say ``ready`` and never answer, resubmitted at once (q51); a login that swaps its
folder for a link for a few milliseconds at a time (q65); a blocked file system (q54: a stalled
FUSE mount where root can make one, FIFOs where it cannot); an author whose every admission
leaves a snapshot (q63); and a store a ``kill -9`` left behind."""

from __future__ import annotations

import contextlib
import ctypes
import os
import random
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import EXAMPLES, PY
from referee.bots.limits import SandboxMode
from referee.bots.snapshot import STORE_PREFIX, Store, clean_stale
from referee.league import folders, submissions
from referee.league.book import Book
from referee.league.config import load_league
from referee.league.matchmaker import Matchmaker
from referee.league.submissions import Admissions, Admitted, Event, Note, Refused
from referee.league.versions import Versions
from referee.match.job import DealSecret
from referee.tournament.output import Journal

pytestmark = pytest.mark.process

WAIT_S = 180.0
"""The most a condition is waited for (nothing here is timed: a loaded machine is slow)."""


def league_yaml(tmp_path: Path, **keys: Any) -> Path:
    (tmp_path / "subs").mkdir(exist_ok=True)
    path = tmp_path / "league.yaml"
    text = {"name": "h", "submissions": "subs", "sandbox": "none", "poll_s": 0.05,
            "settle_s": 0.2, "version_s": 0, "output": "out"} | keys
    path.write_text("".join(f"{k}: {v}\n" for k, v in text.items()))
    return path


def submit(folder: Path, bot: str = "random_bot.py", text: str = "") -> Path:
    folder.mkdir(parents=True)
    shutil.copy(EXAMPLES / bot, folder / "bot.py")
    if text:
        (folder / "bot.py").write_text(text)
    return folder


class Watch:
    """The admissions of a league, on their own threads, every event kept in order."""

    def __init__(self, path: Path, store: Store) -> None:
        self.events: list[Event] = []
        self.w = Admissions(load_league(path), store=store, mode=SandboxMode.NONE,
                            logs=path.parent / "logs", known={}, versions={})

    def __enter__(self) -> Watch:
        self.w.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.w.close()

    def take(self) -> list[Event]:
        assert self.w.error is None, self.w.error
        self.events += self.w.events()
        return self.events

    def until(self, what: Callable[[list[Event]], bool], why: str) -> list[Event]:
        deadline = time.monotonic() + WAIT_S
        while not what(self.take()):
            assert time.monotonic() < deadline, f"no {why} in {WAIT_S} s: {self.events}"
            time.sleep(0.02)
        return self.events


def of(events: list[Event], kind: type, author: str) -> list[Any]:
    return [e for e in events if isinstance(e, kind) and e.author == author]


# -- q51: authors who hold the admissions ------------------------------------------------------

SILENT = ("import sys, time\ntime.sleep(0.5)\nprint('ready silent', flush=True)\n"
          "print('ORGANISER-PRIVATE-q51', file=sys.stderr, flush=True)\n"
          "time.sleep(3600)\n")
"""Says ``ready`` late within its start-up time, then never answers (and writes a line to its
stderr: the author's own, shown escaped beside the refusal)."""


@pytest.mark.slow
def test_two_authors_who_never_answer_do_not_hold_back_a_first_version(tmp_path: Path) -> None:
    """q51: h1 and h2 say ready and never answer, and resubmit the moment they are refused.
    The check stops at its first failure, every attempt (a refusal too) waits version_s, and
    the queue serves the authors whose last attempt is oldest: carol's first version is tried
    before either silent author's second attempt, however fast they resubmit."""
    path = league_yaml(tmp_path, version_s=15, check="true",
                       limits="{startup_ms: 3000, move_ms: 300}")
    subs = tmp_path / "subs"
    store = Store(tmp_path)
    stop = threading.Event()
    with Watch(path, store) as watch:
        for author in ("h1", "h2"):
            submit(subs / author, text=SILENT)
        watch.until(lambda ev: len(watch.w.workers.running) == 2, "both silent authors tried")
        submit(subs / "carol")

        def resubmit() -> None:  # the moment a silent author is refused, a new folder
            done: set[int] = set()
            while not stop.is_set():
                for k, e in enumerate(list(watch.events)):
                    if isinstance(e, Refused) and e.author in ("h1", "h2") and k not in done:
                        done.add(k)
                        with open(subs / e.author / "bot.py", "a") as f:
                            f.write(f"# {k}\n")
                time.sleep(0.01)

        again = threading.Thread(target=resubmit)
        again.start()
        try:
            events = watch.until(lambda ev: bool(of(ev, Admitted, "carol")) and
                                 all(len(of(ev, Refused, a)) >= 2 for a in ("h1", "h2")),
                                 "carol admitted and two refusals of each silent author")
        finally:
            stop.set()
            again.join()
    store.close()
    admitted_at = events.index(of(events, Admitted, "carol")[0])
    for author in ("h1", "h2"):
        first, second = of(events, Refused, author)[:2]
        assert events.index(first) < admitted_at < events.index(second), events
        for refusal in (first, second):
            assert "failed the conformance check" in refusal.reason, refusal
            assert "ORGANISER-PRIVATE" not in refusal.reason  # never the bot's own output
            assert refusal.stderr == ("ORGANISER-PRIVATE-q51",)  # its own stderr, beside it
    waits = [e.text for e in events if isinstance(e, Note) and "waits" in e.text]
    assert waits, events  # the resubmissions were held to version_s


# -- q65: a folder swapped for a link while it is read ------------------------------------------

def swapper(subs: Path, name: str, target: Path, stop: threading.Event,
            swaps: list[int], hold: threading.Lock) -> None:
    """A login that swaps ``subs/name`` for a link to ``target`` for 1-4 ms at a time (not
    while it holds ``hold``: it edits its own folder then)."""
    rng = random.Random(65)
    real, link = subs / f".{name}-real", subs / name
    while not stop.is_set():
        time.sleep(rng.uniform(0.002, 0.03))
        with hold, contextlib.suppress(OSError):
            os.rename(link, real)
            os.symlink(target, link)
            swaps[0] += 1
            time.sleep(rng.uniform(0.001, 0.004))
            os.unlink(link)
            os.rename(real, link)


def test_a_login_that_swaps_its_folder_for_a_link_never_gets_anything_else_admitted(
        tmp_path: Path) -> None:
    """q65: mallory's login swaps its folder for a link to bob's, or to a folder of the
    organiser's holding a private file, a few milliseconds at a time, while the league
    admits it again and again: every version admitted is mallory's own code, nothing of the
    private folder ever shows in a refusal, and bob's code is never admitted as mallory's."""
    path = league_yaml(tmp_path)
    subs = tmp_path / "subs"
    private = tmp_path / "organiser"
    private.mkdir(mode=0o700)
    (private / "secret.txt").write_text("ORGANISER-PRIVATE-q65\n")
    (private / "secret.txt").chmod(0o600)
    (private / "bot.py").write_text("import sys\nprint(open('secret.txt').read().strip(), "
                                    "flush=True)\nsys.stdout.flush()\n")
    submit(subs / "bob", "greedy_bot.py")
    submit(subs / "mallory")
    store = Store(tmp_path)
    digests: dict[str, str] = {}
    with Watch(path, store) as watch:
        watch.until(lambda ev: bool(of(ev, Admitted, "mallory")) and
                    bool(of(ev, Admitted, "bob")), "mallory and bob admitted")
        digests = {a: of(watch.events, Admitted, a)[0].digest for a in ("mallory", "bob")}
        for target in (subs / "bob", private):
            stop, swaps, hold = threading.Event(), [0], threading.Lock()
            attack = threading.Thread(target=swapper, args=(subs, "mallory", target, stop,
                                                            swaps, hold))
            seen = len(watch.events)
            attack.start()
            try:
                for k in range(6):  # a new attempt each time: mallory edits its bot
                    with hold, open(subs / "mallory" / "bot.py", "a") as f:
                        f.write(f"# attempt {k}\n")
                    count = len(of(watch.events, Admitted, "mallory"))
                    watch.until(lambda ev, c=count, s=seen: len(of(ev, Admitted, "mallory")) > c or
                                any(isinstance(e, Refused) for e in ev[s:]),
                                f"attempt {k} decided")
            finally:
                stop.set()
                attack.join()
            assert swaps[0] > 20, swaps
    store.close()
    everything = repr(watch.events)
    assert "ORGANISER-PRIVATE" not in everything
    for e in of(watch.events, Admitted, "mallory"):
        assert e.digest != digests["bob"], e
    assert len(of(watch.events, Admitted, "bob")) == 1  # bob's folder untouched all along
    mine = {e.digest for e in of(watch.events, Admitted, "mallory")}
    assert len(mine) >= 2  # its own code, as each attempt changed it: admitted as it was


# -- q54: a blocked file system ----------------------------------------------------------------

@contextlib.contextmanager
def stalled_mount(where: Path) -> Iterator[None]:
    """A FUSE file system at ``where`` whose server never answers (every look inside blocks
    in the kernel until the server goes): what a stalled network file system does."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open("/dev/fuse", os.O_RDWR)
    where.mkdir(parents=True, exist_ok=True)
    options = f"fd={fd},rootmode=40000,user_id=0,group_id=0,allow_other".encode()
    if libc.mount(b"stalled", os.fsencode(where), b"fuse", 0, options) != 0:
        os.close(fd)
        pytest.skip(f"cannot mount a FUSE file system here: "
                    f"{os.strerror(ctypes.get_errno())}")
    try:
        yield
    finally:
        os.close(fd)  # the server goes: every look blocked in it fails, and returns
        libc.umount2(os.fsencode(where), 2)


needs_fuse = pytest.mark.skipif(
    os.geteuid() != 0 or not os.path.exists("/dev/fuse"),
    reason="a stalled file system needs a FUSE mount, which only root can make here; the "
           "FIFO stand-in below runs for everyone")


@needs_fuse
def test_a_stalled_mount_is_refused_from_the_mount_table_and_stalls_nobody(
        tmp_path: Path) -> None:
    """q54: mallory's folder is a stalled mount, and max's holds one: both are refused from
    the mount table without a look inside, and alice, who came after, is admitted."""
    path = league_yaml(tmp_path)
    subs = tmp_path / "subs"
    submit(subs / "max")
    store = Store(tmp_path)
    with stalled_mount(subs / "mallory"), stalled_mount(subs / "max" / "data"), \
            Watch(path, store) as watch:
        submit(subs / "alice")
        events = watch.until(lambda ev: bool(of(ev, Admitted, "alice")) and
                             bool(of(ev, Refused, "mallory")) and bool(of(ev, Refused, "max")),
                             "alice admitted, mallory and max refused")
    store.close()
    for author in ("mallory", "max"):
        assert "mount point" in of(events, Refused, author)[0].reason


@needs_fuse
def test_a_look_that_blocks_is_abandoned_and_its_folder_left_alone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """q54, the race the mount table cannot see (a mount made after it was read: the table
    read here is empty): the look at mallory's folder blocks in the kernel, is abandoned after
    LOOK_S, and mallory is refused once; alice, who came after, is admitted meanwhile."""
    monkeypatch.setattr(submissions, "LOOK_S", 1.0)
    empty = tmp_path / "mountinfo"
    empty.write_text("")
    monkeypatch.setattr(folders, "MOUNTINFO", empty)
    path = league_yaml(tmp_path)
    subs = tmp_path / "subs"
    store = Store(tmp_path)
    with stalled_mount(subs / "mallory"), Watch(path, store) as watch:
        watch.until(lambda ev: bool(of(ev, Refused, "mallory")), "mallory refused")
        submit(subs / "alice")
        events = watch.until(lambda ev: bool(of(ev, Admitted, "alice")), "alice admitted")
    store.close()
    [refusal] = of(events, Refused, "mallory")
    assert "does not answer" in refusal.reason


def test_fifos_everywhere_stall_nothing(tmp_path: Path) -> None:
    """q54's stand-in for everyone: a folder whose command.txt, bot and data are FIFOs (a
    read of any of them waits for ever): never opened, refused in one line; alice is
    admitted."""
    path = league_yaml(tmp_path)
    subs = tmp_path / "subs"
    pipes = subs / "pipes"
    (pipes / "sub").mkdir(parents=True)
    for name in ("command.txt", "bot.py", "sub/data"):
        os.mkfifo(pipes / name)
    store = Store(tmp_path)
    with Watch(path, store) as watch:
        submit(subs / "alice")
        events = watch.until(lambda ev: bool(of(ev, Admitted, "alice")) and
                             bool(of(ev, Refused, "pipes")), "alice admitted, pipes refused")
    store.close()
    assert "does not exist" in of(events, Refused, "pipes")[0].reason  # the copy has no FIFO


def test_an_admission_past_its_budget_is_abandoned(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """An admission that does not end within its budget (here a check whose every step may
    take a minute, and a bot that never answers) is abandoned: its author refused, saying so,
    and the slot free for the next."""
    monkeypatch.setattr(submissions, "admission_budget", lambda config: 3.0)
    monkeypatch.setattr(submissions, "ADMIT_JOBS", 1)
    path = league_yaml(tmp_path, check="true", limits="{startup_ms: 3000, move_ms: 60000}")
    subs = tmp_path / "subs"
    submit(subs / "slow", text=SILENT)
    store = Store(tmp_path)
    with Watch(path, store) as watch:
        watch.until(lambda ev: bool(of(ev, Refused, "slow")), "slow refused")
        submit(subs / "alice")
        events = watch.until(lambda ev: bool(of(ev, Refused, "alice") or
                                              of(ev, Admitted, "alice")), "alice decided")
    store.close()
    assert "its admission took more than 3 s" in of(events, Refused, "slow")[0].reason


# -- q63: a snapshot for every admission ---------------------------------------------------------

def test_a_byte_touched_at_each_admission_keeps_one_snapshot(tmp_path: Path) -> None:
    """q63: alice touches her folder after each admission (the same code: the same version,
    admitted again): her older copies go, and the store holds one of hers, not one an
    attempt."""
    path = league_yaml(tmp_path)
    subs = tmp_path / "subs"
    submit(subs / "alice")
    submit(subs / "bob")
    store = Store(tmp_path)
    book = Book(load_league(path), DealSecret(b"\x00" * 16))
    journal = Journal(tmp_path / "league.jsonl")
    versions = Versions(book, Matchmaker(players=2), journal, placement=0)
    with Watch(path, store) as watch:
        for k in range(5):
            count = len(of(watch.events, Admitted, "alice"))
            watch.until(lambda ev, c=count: len(of(ev, Admitted, "alice")) > c,
                        f"admission {k}")
            versions.news(watch.take())
            watch.events.clear()
            os.utime(subs / "alice" / "bot.py")  # a touch: the same bytes, a new fingerprint
            theirs = [p for p in store.path.iterdir()
                      if p.name.rsplit("-", 1)[0].split(".v")[0] == "alice"]
            assert len(theirs) == 1, theirs
    journal.close()
    store.close()
    assert versions.current == {"alice": "alice", "bob": "bob"}


def test_a_store_left_by_a_kill_is_removed_at_the_next_start(tmp_path: Path) -> None:
    """A referee killed (SIGKILL) leaves its store: the next start removes it, and leaves a
    live one (its lock held) alone."""
    script = ("import sys, time\nfrom pathlib import Path\nfrom referee.bots.snapshot "
              "import Store\ns = Store(Path(sys.argv[1]))\n(s.path / 'x').write_text('x')\n"
              "print(s.path, flush=True)\ntime.sleep(3600)\n")
    procs = [subprocess.Popen([PY, "-c", script, str(tmp_path)], stdout=subprocess.PIPE,
                              text=True) for _ in range(2)]
    try:
        stores = [Path(p.stdout.readline().strip()) for p in procs]  # type: ignore[union-attr]
        procs[0].send_signal(signal.SIGKILL)
        procs[0].wait()
        assert clean_stale(tmp_path) == [stores[0]]
        assert not stores[0].exists() and stores[1].exists()
        assert [p.name.startswith(STORE_PREFIX) for p in tmp_path.iterdir()] == [True]
    finally:
        for p in procs:
            p.kill()
            p.wait()
