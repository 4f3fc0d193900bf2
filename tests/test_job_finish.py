"""What a finished match hands back (:meth:`MatchJob.finish`): the record is written where the
job says and only the small result line travels (:class:`Done` holds nothing else), so a long
tournament's memory does not grow with its records. A cluster worker that does not share the
output folder sends its record back in its report, and the coordinator writes it:
tests/test_cluster.py."""

from __future__ import annotations

from pathlib import Path

from test_runners import events_until_done

from conftest import ScriptedEntrant
from referee.bots.limits import Limits, SandboxMode
from referee.game.rules import Variant
from referee.match.job import Done, MatchJob, MatchSpec, result_line
from referee.records.record import read_record
from referee.runners.local import Failed, Finished, Runner, ThreadRunner


def job(index: int, folder: Path | None) -> MatchJob:
    """A two-seat match of in-process players; its record goes to ``folder`` (if given)."""
    spec = MatchSpec(f"r1-g{index:03d}-s01", index, 1, index + 1, 1, (0, 1), "s", bytes(32))
    seats = (ScriptedEntrant("a", "-"), ScriptedEntrant("b", "-"))
    return MatchJob(spec, seats, Variant.CLASSIC, 100, Limits(), SandboxMode.NONE, "t",
                    record_path=None if folder is None else folder / f"{spec.id}.json",
                    snapshots=("d" * 8, None))


def finished(runner: Runner, jobs: list[MatchJob]) -> list[Finished]:
    for one in jobs:
        runner.submit(one)
    events = events_until_done(runner, len(jobs))
    assert not [e for e in events if isinstance(e, Failed)], events
    return [e for e in events if isinstance(e, Finished)]


def test_a_thread_runner_hands_back_the_line_and_leaves_the_record_on_disk(
        tmp_path: Path) -> None:
    jobs = [job(i, tmp_path) for i in range(1, 9)]
    with ThreadRunner(2) as runner:
        events = finished(runner, jobs)
    assert sorted(e.job.spec.id for e in events) == sorted(j.spec.id for j in jobs)
    for event in events:
        record = read_record(tmp_path / f"{event.job.spec.id}.json")
        assert record["snapshots"] == ["d" * 8, None]
        assert event.done.line == dict(result_line(record), snapshots=["d" * 8, None])


def test_finish_writes_the_record_and_hands_back_its_line(tmp_path: Path) -> None:
    record = job(1, tmp_path).play()
    done = job(1, tmp_path).finish(record)
    assert done == Done(dict(result_line(record), snapshots=["d" * 8, None]))
    assert read_record(tmp_path / "r1-g001-s01.json") == record
    assert record["snapshots"] == ["d" * 8, None]
    # a job of a test without a record path: the same line, and the record kept nowhere
    assert job(1, None).finish(job(1, None).play()) == done
    assert [p.name for p in tmp_path.iterdir()] == ["r1-g001-s01.json"]
