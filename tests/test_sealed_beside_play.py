"""Entrants sealed beside play (issues 29 and 31): the snapshots are taken in the order the
schedule first needs the entrants, on threads of their own, and a match starts once its own
seats are sealed and through the pre-flight; a folder refused while the first matches play stops
the run in one line naming its entrant, the matches played kept, and a resume once it is fixed
plays the rest. Observed through a hook on the snapshots and the reporter (never timing): the
last entrant's snapshot is held until a match is saved, so a run that sealed every entrant
before its first match could never pass."""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from referee.bots.probing import capabilities
from referee.bots.snapshot import Snapshot, Store
from referee.match.job import MatchSpec
from referee.tournament import sealing
from referee.tournament.config import Config, load_config
from referee.tournament.dispatch import TournamentError
from referee.tournament.ratings import MatchResult, Standings
from referee.tournament.run import Reporter, run

ROOT = Path(__file__).resolve().parent.parent
INSTANT = ROOT / "bench" / "instant_bot.py"
CAPS = capabilities()
needs_sandbox = pytest.mark.skipif(not CAPS.works, reason=f"no sandbox here: {CAPS.summary()}")
HOLD_S = 120.0
"""How long the held snapshot waits for a match to be saved: only a run that seals every
entrant before play waits this long (and then fails)."""


@pytest.fixture
def root() -> Iterator[Path]:
    """Three entrant folders (a, b, then z: the instant bot each), a round robin of 2 seats
    with the default pre-flight (z is in no match of the first group)."""
    path = Path(tempfile.mkdtemp(prefix="ct-beside-", dir="/var/tmp"))
    path.chmod(0o755)
    lines = ["format: round-robin", "players: 2", "target: 1", "output: out",
             "concurrency: 1", "snapshot_mb: 1", "entrants:"]
    for name in "abz":
        (path / name).mkdir(mode=0o755)
        shutil.copy(INSTANT, path / name / "bot.py")
        (path / name / "bot.py").chmod(0o644)
        lines.append(f"  - {{name: {name}, command: {sys.executable} bot.py, workdir: {name}}}")
    (path / "t.yaml").write_text("\n".join(lines) + "\n")
    yield path
    shutil.rmtree(path, ignore_errors=True)


class Watch(Reporter):
    """What happened, in order: each snapshot taken (``sealed <name>``, from the sealing
    threads) and each match saved (``match <players>``); ``saved`` is set at the first match."""

    def __init__(self) -> None:
        self.events: list[str] = []
        self.lock = threading.Lock()
        self.saved = threading.Event()
        self.warnings: list[str] = []

    def note(self, event: str) -> None:
        with self.lock:
            self.events.append(event)

    def match_done(self, spec: MatchSpec, result: MatchResult, done: int,
                   table: Standings) -> None:
        self.note("match " + ",".join(result.players))
        self.saved.set()

    def warn(self, message: str) -> None:
        self.warnings.append(message)


def hold_z(monkeypatch: pytest.MonkeyPatch, watch: Watch) -> None:
    """z's snapshot waits for the first match to be saved (at most :data:`HOLD_S`)."""
    take = sealing.take_snapshot

    def held(folder: Path, store: Store, name: str, **kw: Any) -> Snapshot:
        if name == "z":
            watch.note("z waits" if watch.saved.wait(HOLD_S) else "z waited in vain")
        try:
            snap = take(folder, store, name, **kw)
        except Exception:
            watch.note(f"refused {name}")
            raise
        watch.note(f"sealed {name}")
        return snap

    monkeypatch.setattr(sealing, "take_snapshot", held)


@pytest.mark.process
@needs_sandbox
def test_the_first_match_starts_before_the_last_entrant_is_sealed(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    watch = Watch()
    hold_z(monkeypatch, watch)
    outcome = run(load_config(root / "t.yaml"), reporter=watch)
    assert outcome.finished and outcome.played == 6, outcome
    events = watch.events
    assert "z waited in vain" not in events, events
    first = next(k for k, e in enumerate(events) if e.startswith("match"))
    assert events[first] in ("match a,b", "match b,a"), events
    assert first < events.index("sealed z"), events  # a match saved before z was sealed
    assert events.index("sealed a") < first and events.index("sealed b") < first
    assert all("z" not in e for e in events[:events.index("z waits")] if e.startswith("match"))
    # z still sealed before its first match, and played every one of its matches unfaulted
    z_matches = [i for i, e in enumerate(events) if e.startswith("match") and "z" in e]
    assert len(z_matches) == 4 and events.index("sealed z") < z_matches[0]
    for line in (root / "out" / "results.jsonl").read_text().splitlines():
        data = json.loads(line)
        assert not data["faults"] and all(d.startswith("sha256:") for d in data["snapshots"])
    assert not watch.warnings, watch.warnings


@pytest.mark.process
@needs_sandbox
def test_a_later_entrants_folder_refused_while_the_first_matches_play(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """z's folder past its cap (``snapshot_mb: 1``), found once a match is saved: the run stops
    in one line naming z, the matches played kept; with z's folder fixed, a resume keeps them
    and plays the rest (the run's choice, docs/tournaments.md: stop, not leave out)."""
    (root / "z" / "blob").write_bytes(b"\1" * (2 << 20))
    watch = Watch()
    hold_z(monkeypatch, watch)
    config = load_config(root / "t.yaml")
    with pytest.raises(TournamentError) as info:
        run(config, reporter=watch)
    text = str(info.value)
    assert text.startswith(f"{root / 't.yaml'}: entrant 'z': ") and "\n" not in text, text
    assert "more than 1 MiB" in text, text
    events = watch.events
    first = next(k for k, e in enumerate(events) if e.startswith("match"))
    assert "refused z" in events and first < events.index("refused z"), events
    kept = (root / "out" / "results.jsonl").read_text().splitlines()
    assert 1 <= len(kept) < 6 and all("z" not in json.loads(k)["players"] for k in kept)
    for line in kept:  # every finished match stays on disk
        assert (root / "out" / json.loads(line)["record"]).is_file()
    # fixed: a resume keeps what was played and plays the rest, z sealed as any entrant
    (root / "z" / "blob").unlink()
    monkeypatch.undo()
    again = run(load_config(root / "t.yaml"), reporter=Reporter())
    assert again.finished and again.done == 6 and again.played == 6 - len(kept), again


def test_sealing_follows_the_order_given_then_the_configuration(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In process, one thread: the folders of the entrants named first, in that order, then the
    rest in configuration order, each folder once (two entrants sharing one share its
    snapshot)."""
    names = [f"e{i}" for i in range(6)]
    for name in names[:5]:
        (tmp_path / name).mkdir()
        (tmp_path / name / "bot.py").write_text("print('ready')\n")
    entrants = "".join(f"  - {{name: {n}, command: {sys.executable} bot.py, workdir: "
                       f"{'e0' if n == 'e5' else n}}}\n" for n in names)
    (tmp_path / "t.yaml").write_text(f"players: 2\noutput: out\nentrants:\n{entrants}")
    config: Config = load_config(tmp_path / "t.yaml")
    monkeypatch.setattr(sealing, "SEAL_THREADS", 1)
    taken: list[str] = []
    take = sealing.take_snapshot

    def noted(folder: Path, store: Store, name: str, **kw: Any) -> Snapshot:
        taken.append(name)
        return take(folder, store, name, **kw)

    monkeypatch.setattr(sealing, "take_snapshot", noted)
    with Store(tmp_path) as store:
        seals = sealing.prepare(config, store, print)
        try:
            assert seals.digest("e3") is None and not taken  # nothing taken before start
            seals.start(["e3", "e5", "e1"])
            seals.wait()
        finally:
            seals.close()
        assert taken == ["e3", "e0", "e1", "e2", "e4"]  # e5 shares e0's folder
        assert seals.sealed("e5").snapshot is seals.sealed("e0").snapshot
        assert seals.summary.startswith("sealed: 5 folders snapshotted")
