"""The tournament session's parts, each alone and in process (no bot starts): the typed journal
line, resume from the journal, the rounds log, who sits, the bookkeeping of a saved match,
planning (kept matches skipped) and the standings. ``test_tournament.py`` and
``test_pipeline.py`` play whole tournaments through the same session with real bots."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from conftest import PY
from referee.match.job import DealSecret, Done, MatchSpec
from referee.tournament.admission import Benched, FaultLimit
from referee.tournament.config import Config, ConfigError, load_config
from referee.tournament.output import Journal, JournalLine, OutputFolder, prepare_output
from referee.tournament.ratings import Standings
from referee.tournament.resume import Resumed, RoundsLog
from referee.tournament.session import Reporter, Roster, TournamentSession

SECRET = DealSecret(bytes(range(32)))


def config(tmp_path: Path, *, entrants: int = 3, extra: str = "") -> Config:
    """A two-player tournament of ``entrants`` (commands that are never started)."""
    names = "".join(f"  - {{name: e{i}, command: {PY} -c pass}}\n" for i in range(entrants))
    path = tmp_path / "t.yaml"
    path.write_text(f"entrants:\n{names}players: 2\ntarget: 100\nsandbox: none\n"
                    f"preflight: off\noutput: out\n{extra}")
    return load_config(path)


def line_of(spec: MatchSpec, names: list[str], *, totals: tuple[int, int] = (100, 40),
            faults: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The result line of ``spec`` played in one hand, the first seat winning."""
    return {"id": spec.id, "players": [names[i] for i in spec.seats], "totals": list(totals),
            "ranks": [1, 2] if totals[0] > totals[1] else [2, 1], "faults": faults or [],
            "hands": 1, "scores": [list(totals)]}


def session_of(cfg: Config, reporter: Reporter | None = None) -> TournamentSession:
    prepare_output(cfg, deal_secret=SECRET)
    return TournamentSession(cfg, SECRET, runner=SimpleNamespace(), stop=threading.Event(),
                             reporter=reporter)  # type: ignore[arg-type]  # never played


class Heard(Reporter):
    def __init__(self) -> None:
        self.done: list[tuple[str, int]] = []
        self.warnings: list[str] = []
        self.final: list[str] = []

    def warn(self, message: str) -> None:
        self.warnings.append(message)

    def match_done(self, spec: MatchSpec, result: Any, done: int, table: Standings) -> None:
        self.done.append((spec.id, done))

    def finished(self, standings: list[Any]) -> None:
        self.final = [row.name for row in standings]


# -- the journal line --------------------------------------------------------------------------

def test_a_journal_line_is_parsed_once_into_its_types() -> None:
    raw = {"id": "r1-g001-s01", "players": ["a", "b"], "totals": [3, 1], "ranks": [1, 2],
           "hands": 2, "faults": [{"seat": 1, "fault": "timeout", "hand": 2}],
           "scores": [[2, 1], [1, 0]], "luck": [[0.5, -0.5], [0, 0]], "snapshots": ["x", None]}
    line = JournalLine.parse(raw)
    assert (line.id, line.result.players, line.result.totals) == ("r1-g001-s01", ("a", "b"),
                                                                   (3, 1))
    assert line.result.faults == ((1, "timeout"),) and line.faults == raw["faults"]
    assert line.scores == [[2, 1], [1, 0]] and line.luck == [[0.5, -0.5], [0.0, 0.0]]
    assert line.snapshots == ["x", None] and line.raw is raw


@pytest.mark.parametrize("change", [{"scores": [[2, 1]]}, {"scores": [[2, 1, 0], [1, 0, 0]]},
                                    {"scores": "x"}, {"scores": [["a", 1], [1, 0]]}])
def test_a_malformed_table_reads_as_missing(change: dict[str, Any]) -> None:
    """Hand scores that do not fit (a row a hand, a number a seat) are ``None``: the resume
    then asks the record."""
    raw = {"id": "r1-g001-s01", "players": ["a", "b"], "totals": [3, 1], "ranks": [1, 2],
           "hands": 2, "faults": []} | change
    assert JournalLine.parse(raw).scores is None


@pytest.mark.parametrize("raw", [[], {"id": "nope", "players": ["a"], "totals": [1],
                                      "ranks": [1]},
                                 {"id": "r1-g001-s01", "players": ["a", "b"], "totals": [1],
                                  "ranks": [1, 2]},
                                 {"id": "r1-g001-s01", "totals": [1], "ranks": [1]}])
def test_a_line_that_is_no_match_is_refused(raw: Any) -> None:
    with pytest.raises(ValueError):
        JournalLine.parse(raw)


# -- resume ------------------------------------------------------------------------------------

def test_resume_keeps_the_lines_whose_record_was_written(tmp_path: Path) -> None:
    cfg = config(tmp_path)
    folder = OutputFolder(cfg.output)
    prepare_output(cfg, deal_secret=SECRET)
    names = [e.name for e in cfg.entrants]
    specs = list(cfg.course(secret=SECRET).next_round())
    folder.games.mkdir(parents=True, exist_ok=True)
    for spec in specs[:2]:
        folder.record(spec.id).write_text("{}")
    lines = [line_of(specs[0], names), line_of(specs[1], names, totals=(10, 100)),
             line_of(specs[2], names),  # no record: the match is played again
             line_of(specs[1], names, faults=[{"seat": 0, "fault": "crash", "hand": 1}])]
    folder.results.write_text("".join(json.dumps(x) + "\n" for x in lines) + '{"torn')
    resumed = Resumed(folder)
    resumed.load(Journal(folder.results))
    assert sorted(resumed.matches) == sorted(s.id for s in specs[:2])
    assert resumed.matches[specs[1].id].faults == lines[3]["faults"]  # the later line wins
    assert resumed.matches[specs[0].id].hands == [[100, 40]]
    kept = [json.loads(x) for x in folder.results.read_text().splitlines()]
    assert kept == [lines[0], lines[1], lines[3]]  # the journal rewritten without the others
    assert resumed.pop(specs[0], [names[i] for i in specs[0].seats])[1]
    assert resumed.pop(specs[1], ["someone", "else"]) == (None, True)  # does not fit: dropped
    assert resumed.pop(specs[2], ["e0", "e1"]) == (None, False)
    assert len(resumed) == 0


def test_the_rounds_log_plays_a_round_as_it_was_planned(tmp_path: Path) -> None:
    path = tmp_path / "rounds.jsonl"
    log = RoundsLog(Journal(path), ["a", "b", "c"])
    specs = [SimpleNamespace(group=1, seats=(2, 0)), SimpleNamespace(group=1, seats=(0, 2)),
             SimpleNamespace(group=2, seats=(1, 2))]
    log.add(1, specs)  # type: ignore[arg-type]
    log.close()
    again = RoundsLog(Journal(path), ["a", "b", "c", "d"])  # an entrant added since
    again.load()
    assert again.get(1) == [(1, (0, 2)), (2, (1, 2))] and again.get(2) is None
    again.add(1, [])  # planned already: not logged twice
    again.close()
    assert len(path.read_text().splitlines()) == 1
    path.write_text(path.read_text() + '{"round": 2, "groups": [[1, ["a", "zed"]]]}\n')
    other = RoundsLog(Journal(path), ["a", "b", "c"])
    other.load()
    assert other.get(2) is None  # a round naming no entrant of these is dropped


# -- who sits ----------------------------------------------------------------------------------

def test_the_roster_benches_an_entrant_left_out(tmp_path: Path) -> None:
    cfg = config(tmp_path)
    names = [e.name for e in cfg.entrants]
    limit = FaultLimit(names, 0)
    told: list[list[int]] = []
    roster = Roster([e.entrant() for e in cfg.entrants], limit, left_out=told.append)
    assert roster.seat(0) is roster.entrants[0]
    roster.leave_out({1: "did not start in the pre-flight"})
    assert told == [[1]] and 1 in limit.left_out
    benched = roster.seat(1)
    assert isinstance(benched, Benched) and "did not start in the pre-flight" in benched.detail
    assert roster.digests(SimpleNamespace(seats=(0, 1))) is None  # type: ignore[arg-type]


# -- bookkeeping -------------------------------------------------------------------------------

def test_books_save_rate_and_report_each_match(tmp_path: Path) -> None:
    cfg = config(tmp_path)
    session = session_of(cfg, heard := Heard())
    books, names = session.books, session.names
    pages: list[dict[str, Any]] = []
    books.pages = SimpleNamespace(match_done=lambda line, table: pages.append(line),
                                  finish=lambda: None)  # type: ignore[assignment]
    ticks: list[tuple[int, int]] = []
    books.pace = lambda done, played: ticks.append((done, played))
    spec = session.next_round()[0]
    books.saved(SimpleNamespace(spec=spec), Done(line_of(spec, names)))  # type: ignore[arg-type]
    books.journal.close()
    (saved,) = [json.loads(x) for x in session.folder.results.read_text().splitlines()]
    assert saved == line_of(spec, names) | {"record": f"games/{spec.id}.json.gz"}
    assert pages == [saved] and ticks == [(1, 1)] and heard.done == [(spec.id, 1)]
    assert session.course.matches == 1 and books.played == books.done == 1


def test_books_warn_of_a_disqualification(tmp_path: Path) -> None:
    cfg = config(tmp_path, extra="max_faults: 1\n")
    session = session_of(cfg, heard := Heard())
    spec = session.next_round()[0]
    fault = {"seat": 0, "fault": "timeout", "hand": 1, "detail": "slow"}
    session.books.saved(SimpleNamespace(spec=spec),  # type: ignore[arg-type]
                        Done(line_of(spec, session.names, faults=[fault])))
    culprit = session.names[spec.seats[0]]
    why = session.limit.disqualified[spec.seats[0]]
    assert heard.warnings == [f"{culprit} is disqualified {why}: the referee's fallback plays "
                              f"its seat from its next set on"]


# -- planning and the standings ----------------------------------------------------------------

def test_a_resumed_session_plays_only_what_is_missing(tmp_path: Path) -> None:
    cfg = config(tmp_path)
    first = session_of(cfg)
    specs = list(first.next_round())
    first.folder.games.mkdir(parents=True, exist_ok=True)
    for spec in specs[:3]:
        first.books.saved(SimpleNamespace(spec=spec),  # type: ignore[arg-type]
                          Done(line_of(spec, first.names)))
        first.folder.record(spec.id).write_text("{}")
    first.books.journal.close()
    again = session_of(cfg)
    again.resume()
    assert again.books.done == 3
    round_ = again.next_round()
    jobs = [job for job in again.jobs(round_) if job is not None]
    assert sorted(j.spec.id for j in jobs) == sorted(s.id for s in specs[3:])
    assert again.course.matches + len(jobs) == len(specs)  # the kept ones are rated
    assert all(j.record_path == again.folder.record(j.spec.id) for j in jobs)


def test_a_ladder_logs_its_rounds_and_a_resume_plans_them_the_same(tmp_path: Path) -> None:
    cfg = config(tmp_path, entrants=5, extra="format: ladder\nrounds: 2\n")
    first = session_of(cfg)
    planned = [(s.id, s.seats) for s in first.next_round()]
    first.rounds.close()
    again = session_of(cfg)
    again.resume()
    assert again.rounds.get(1) is not None
    assert [(s.id, s.seats) for s in again.next_round()] == planned


def test_the_standings_are_written_once_every_match_is_saved(tmp_path: Path) -> None:
    cfg = config(tmp_path)
    session = session_of(cfg, heard := Heard())
    specs = list(session.next_round())
    for spec in specs:
        winner_first = session.names[spec.seats[0]] == "e2"  # e2 wins every match
        session.books.saved(SimpleNamespace(spec=spec),  # type: ignore[arg-type]
                            Done(line_of(spec, session.names,
                                         totals=(100, 0) if winner_first else (0, 100))))
    assert not session.next_round() and session.course.complete()
    outcome = session.standings()
    assert outcome.finished and outcome.total == outcome.done == outcome.played == len(specs)
    assert heard.final[0] == "e2" and outcome.standings is not None
    doc = json.loads(session.folder.standings_json.read_text())
    assert doc["matches"] == len(specs) and doc["standings"][0]["name"] == "e2"


def test_fresh_sets_the_last_run_aside_at_once_and_a_thread_deletes_it(tmp_path: Path) -> None:
    """``--fresh`` moves the last run's files into a hidden folder (a rename each) and deletes
    them from a thread while the new run plays; the organiser's own files stay; a set-aside
    folder an earlier run left (cut short before its deletion ended) is deleted by the next
    run, fresh or not, and does not make the folder look like someone else's."""
    cfg = config(tmp_path)
    prepare_output(cfg)
    out = cfg.output
    for k in range(200):  # the last run's records
        (out / "games" / f"r1-g{k:03d}-s01.json.gz").write_bytes(b"x" * 100)
    (out / "notes.txt").write_text("mine")
    old = (out / ".deal-secret").read_text()
    prepare_output(cfg, fresh=True)
    sweeps = [t for t in threading.enumerate() if t.name == "fresh-sweep"]
    for sweep in sweeps:
        sweep.join(timeout=60)
    assert sorted(p.name for p in out.iterdir()) == sorted(
        [".ct-referee.json", ".deal-secret", "games", "logs", "notes.txt", "tournament.yaml"])
    assert not list((out / "games").iterdir())
    assert (out / ".deal-secret").read_text() != old  # a new secret, the old one deleted
    assert (out / "notes.txt").read_text() == "mine"

    cut = tmp_path / "cut"  # a run cut short between the set-aside and the marker
    (cut / ".fresh-0123456789abcdef" / "games").mkdir(parents=True)
    (cut / ".fresh-0123456789abcdef").chmod(0o700)
    (cut / ".fresh-0123456789abcdef" / "games" / "r1-g001-s01.json.gz").write_bytes(b"x")
    prepare_output(load_config(tmp_path / "t.yaml", output=cut))
    for sweep in [t for t in threading.enumerate() if t.name == "fresh-sweep"]:
        sweep.join(timeout=60)
    assert not any(p.name.startswith(".fresh-") for p in cut.iterdir())
    assert (cut / ".ct-referee.json").is_file()

    mine = tmp_path / "mine"  # the organiser's own .fresh-notes: never taken for one
    (mine / ".fresh-notes").mkdir(parents=True)
    with pytest.raises(ConfigError, match="is not empty and is not a ct-referee"):
        prepare_output(load_config(tmp_path / "t.yaml", output=mine))
    assert (mine / ".fresh-notes").is_dir()
    (out / ".fresh-notes").mkdir()
    prepare_output(cfg)
    assert (out / ".fresh-notes").is_dir()


def test_a_fresh_start_cut_short_leaves_a_folder_fresh_takes_up_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A rename refused halfway through the set-aside (another file system under the folder,
    a Ctrl-C): one line, and the marker and the deal secret still in place, so ``--fresh``
    takes the folder up again."""
    import os as real_os

    from referee.tournament import output

    cfg = config(tmp_path)
    prepare_output(cfg)
    out = cfg.output
    rename = real_os.rename

    def refuse_logs(src: Any, dst: Any) -> None:
        if Path(src).name == "logs":
            raise OSError(18, "Invalid cross-device link")
        rename(src, dst)

    monkeypatch.setattr(output.os, "rename", refuse_logs)
    with pytest.raises(ConfigError, match=r"cannot set the last run's files aside \(Invalid "
                                          r"cross-device link\)"):
        prepare_output(cfg, fresh=True)
    assert (out / ".ct-referee.json").is_file() and (out / ".deal-secret").is_file()
    monkeypatch.setattr(output.os, "rename", rename)
    prepare_output(cfg, fresh=True)
    assert (out / ".ct-referee.json").is_file() and not (out / "logs" / "x").exists()


def test_the_entrants_order_reads_the_round_only_up_to_its_last_new_entrant() -> None:
    """The snapshots and the pre-flight go in the order the first round seats the entrants;
    a round robin of 100 has 970,200 matches, of which the order needs the first few hundred:
    the rest is never planned for it (it took the first match 15 s)."""
    from referee.tournament.formats import RoundRobin, State, plan_round
    from referee.tournament.session import entrant_order

    read = 0

    def counted() -> Iterator[MatchSpec]:
        nonlocal read
        for spec in plan_round(RoundRobin(100, 3), State.initial(100), players=3,
                               seatings="all", seed=1, secret=bytes(32), rounds=1):
            read += 1
            yield spec

    order = entrant_order(counted(), 100)
    assert order[:3] == [0, 1, 2] and sorted(order) == list(range(100))
    assert read == 97 * 6 + 1  # up to group (0, 1, 99)'s first seating, of 970,200
    assert entrant_order([], 3) == [0, 1, 2]  # an entrant no match seats comes last
