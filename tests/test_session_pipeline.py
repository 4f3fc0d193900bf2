"""What keeps every core busy in a session, in process: the pre-flight beside play (the
matches of entrants already checked start while the rest are checked; an entrant whose check
fails is left out before any match of its is planned; the reporter hears the count as it
goes), and each match's replay page made by whoever played it. The pre-flight's results are
handed to the session by the test (a :class:`Checks` it fills in), the matches played by
first-legal-move players, their order set by events, not by time. ``test_preflight.py``
starts real bots; ``bench/pipeline.py`` measures the whole command."""

from __future__ import annotations

import dataclasses
import os
import threading
from collections import deque
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

import pytest

from conftest import PY, ScriptedEntrant, tournament_yaml
from referee.match.job import DealSecret, MatchJob
from referee.match.play import Entrant
from referee.runners.local import Finished, Runner, RunnerEvent
from referee.tournament import session as session_module
from referee.tournament.admission import Checks, PreflightResult
from referee.tournament.config import Config, load_config
from referee.tournament.output import OutputFolder, prepare_output
from referee.tournament.session import Reporter, TournamentSession

SECRET = DealSecret(bytes(range(32)))


class InProcess(Runner):
    """Plays each submitted match at the next :meth:`wait`, in process; notes what each
    match's seats were when it was submitted."""

    remote = False

    def __init__(self) -> None:
        self.running: deque[MatchJob] = deque()
        self.submitted: list[tuple[str, tuple[Entrant, ...]]] = []
        self.jobs: list[MatchJob] = []

    def slots(self) -> int:
        return 2

    def submit(self, job: MatchJob) -> None:
        self.running.append(job)
        self.submitted.append((job.spec.id, job.entrants))
        self.jobs.append(job)

    def wait(self, timeout: float) -> list[RunnerEvent]:
        if not self.running:
            return []
        job = self.running.popleft()
        players = tuple(ScriptedEntrant(e.name, "-") if type(e) is Entrant else e
                        for e in job.entrants)
        return [Finished(job, dataclasses.replace(job, entrants=players).run())]

    def cancel(self) -> None:
        pass

    def close(self) -> None:
        pass


class LateChecks(Checks):
    """Entrants 0 and 1 checked at once; entrant 2's result comes only once the session
    waits for it (a blocking :meth:`take`), and says it did not start."""

    def __init__(self, runner: InProcess) -> None:
        super().__init__(range(3))
        self.runner = runner
        self.submitted_before: list[str] | None = None
        ok = PreflightResult("e0", True, 1.0, ready="e0")
        self.put(0, ok)
        self.put(1, dataclasses.replace(ok, name="e1", ready="e1"))

    def take(self, timeout: float | None = 0) -> list[tuple[int, PreflightResult]]:
        if timeout != 0 and 2 in self.pending and self.submitted_before is None:
            self.submitted_before = [i for i, _ in self.runner.submitted]
            self.put(2, PreflightResult("e2", False, 3.0, fault="startup", code="exited",
                                        detail="exited with code 3 \x1b[31m before ready"))
        return super().take(timeout)


class Heard(Reporter):
    def __init__(self) -> None:
        self.counts: list[tuple[int, int]] = []
        self.warnings: list[str] = []
        self.events: list[str] = []

    def started(self, config: Any, total: int, done: int, sandbox: str) -> None:
        self.events.append("started")

    def preflight(self, done: int, total: int, left_s: float | None) -> None:
        self.counts.append((done, total))
        self.events.append(f"preflight {done}")

    def warn(self, message: str) -> None:
        self.warnings.append(message)


def three(tmp_path: Path, preflight: str) -> Config:
    """A two-seat tournament of three entrants whose commands never start (the runner plays
    in process), with this ``preflight``."""
    return load_config(tournament_yaml(tmp_path, {f"e{i}": f"{PY} -c pass" for i in range(3)},
                                       players=2, target=60, sandbox="none",
                                       preflight=preflight, output="out"))


def test_matches_of_entrants_checked_start_while_the_rest_are_checked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = three(tmp_path, "leave-out")
    prepare_output(cfg, deal_secret=SECRET)
    runner, heard = InProcess(), Heard()
    session = TournamentSession(cfg, SECRET, runner=runner, stop=threading.Event(),
                                reporter=heard)
    checks = LateChecks(runner)
    asked: list[Collection[int]] = []

    def start(config: Config, entrants: Sequence[Entrant], order: Sequence[int], mode: Any,
              halt: Any, *, logs_dir: Path, skip: Collection[int]) -> Checks:
        asked.append(skip)
        assert logs_dir == OutputFolder(cfg.output).preflight
        return checks

    monkeypatch.setattr(session_module, "start_checks", start)  # the session starts its own
    session.resume()
    outcome = session.play(sandbox="none")
    assert outcome.finished and outcome.played == 6
    assert asked == [{}]
    assert outcome.left_out.keys() == {"e2"}  # who was left out, and why, in the outcome
    # e0 against e1 was under way before e2's result came in
    assert checks.submitted_before is not None
    assert any(i.startswith("r1-g001") for i in checks.submitted_before)
    assert heard.events[:2] == ["started", "preflight 0"]  # the header first
    assert heard.counts[0] == (0, 3) and heard.counts[-1] == (3, 3)
    # e2 left out before any match of its was planned: each of its seats benched
    for _, seats in runner.submitted:
        for seat in seats:
            assert seat.name != "e2" or type(seat) is not Entrant
    [warning] = heard.warnings
    assert "e2 did not start in the pre-flight" in warning and "left out" in warning
    assert "\x1b" not in warning  # the bot's words escaped
    assert session.limit.left_out.keys() == {2}


# -- each match's page, made where it was played ------------------------------------------------

class PagedBy:
    """A :class:`~referee.tournament.session.Pages` hook whose only work is the replay page."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.lines = 0

    def match_done(self, line: dict[str, Any], table: Any) -> None:
        self.lines += 1

    def finish(self) -> None:
        pass

    def replay_page(self) -> Any:
        return self.page


def played(tmp_path: Path, page: Any) -> tuple[TournamentSession, InProcess]:
    cfg = three(tmp_path, "off")
    prepare_output(cfg, deal_secret=SECRET)
    runner = InProcess()
    session = TournamentSession(cfg, SECRET, runner=runner, stop=threading.Event())
    session.resume()
    assert session.play(sandbox="none", pages=PagedBy(page)).played == 6  # type: ignore[arg-type]
    return session, runner


def test_each_match_page_is_written_by_whoever_played_it(tmp_path: Path) -> None:
    import pickle

    from referee.web.replay_html import ReplayPage

    page = ReplayPage(tmp_path / "out" / "report")
    assert pickle.loads(pickle.dumps(page)) == page  # it travels to a worker process
    _, runner = played(tmp_path, page)
    pages = sorted(p.stem for p in (tmp_path / "out" / "report" / "games").glob("*.html"))
    assert pages == sorted(i for i, _ in runner.submitted) and len(pages) == 6
    text = (tmp_path / "out" / "report" / "games" / f"{pages[0]}.html").read_text()
    assert 'src="../viewer.js"' in text and "../index.html" in text
    assert all(job.after == page for job in runner.jobs)
    assert runner.jobs[0].sealed().after is None  # never on a machine not trusted


def test_a_page_that_fails_costs_the_match_nothing(tmp_path: Path) -> None:
    def broken(record: Any) -> None:
        raise ValueError("no page")

    played(tmp_path, broken)
    lines = (tmp_path / "out" / "results.jsonl").read_text().splitlines()
    assert len(lines) == 6
    assert len(list((tmp_path / "out" / "games").iterdir())) == 6


def test_a_pre_flight_stopped_starts_no_more_bots(tmp_path: Path) -> None:
    from referee.bots.limits import Limits
    from referee.bots.process import Launcher
    from referee.game.faults import Reason
    from referee.tournament.admission import preflight

    spawned: list[str] = []

    def spawn() -> Any:
        spawned.append("x")
        raise AssertionError("no bot starts once stopped")

    stop = threading.Event()
    stop.set()
    told: list[int] = []
    results = preflight([ScriptedEntrant(f"e{i}", "-", make=spawn) for i in range(3)],
                        limits=Limits(), launcher=Launcher.resolve("none", Limits()),
                        logs_dir=tmp_path, stop=stop, done=lambda i, r: told.append(i))
    assert spawned == [] and sorted(told) == [0, 1, 2]
    assert {r.code for r in results} == {Reason.STOPPED}


def test_the_replay_data_is_read_from_the_page_the_worker_wrote(tmp_path: Path) -> None:
    """The one replay page's data (``replays/<id>.js``) is the data of the match's page of its
    own (``games/<id>.html``) that the worker wrote: made from the page, byte for byte what the
    record gives, with no second replay of the record; a record without a page, or with a page
    that is not its own, gives it from the record."""
    from referee.records.record import read_record
    from referee.web.replay_html import ReplayPage, replay_script, replay_script_of_page
    from referee.web.report import _replay_of

    out = tmp_path / "out"
    played(tmp_path, ReplayPage(out / "report"))
    folder = OutputFolder(out)
    ids = sorted(p.stem for p in (out / "report" / "games").glob("*.html"))
    assert len(ids) == 6
    from_records = {i: replay_script(read_record(folder.saved_record(i))) for i in ids}
    first, second = ids[0], ids[1]
    page = (out / "report" / "games" / f"{first}.html").read_text()
    assert replay_script_of_page(page, first) == from_records[first]
    assert replay_script_of_page(page, second) is None  # another match's page
    assert replay_script_of_page(page.replace('id="ct-data"', 'id="x"'), first) is None
    # the record set aside: the page alone gives the same data
    for i in ids:
        folder.saved_record(i).rename(tmp_path / f"{i}.gz")
    assert all(_replay_of(out, i) == from_records[i] for i in ids)
    # a page damaged, or gone: the record again (and none where there is neither)
    (tmp_path / f"{first}.gz").rename(folder.saved_record(first))
    (out / "report" / "games" / f"{first}.html").write_text(page[:len(page) // 2])
    assert _replay_of(out, first) == from_records[first]
    (out / "report" / "games" / f"{second}.html").unlink()
    assert _replay_of(out, second) is None
    # an earlier attempt's page, older than the record that counted: the record's data
    third = ids[2]
    (tmp_path / f"{third}.gz").rename(folder.saved_record(third))
    stale = out / "report" / "games" / f"{third}.html"
    stale.write_text(page.replace(first, third))  # names third, with first's moves
    stale_script = replay_script_of_page(stale.read_text(), third)
    assert stale_script is not None and stale_script != from_records[third]
    old = folder.saved_record(third).stat().st_mtime_ns - 10**9
    os.utime(stale, ns=(old, old))
    assert _replay_of(out, third) == from_records[third]
