"""The pre-flight: an entrant that ran out of time starting beside the others is started once
more, alone, before it is left out (a bot keeps its full CPU weight until its ``ready``: beside
it, a bot that burns CPU and holds its own ``ready`` back can push a slow starter past
``startup_ms``, and out of the whole tournament). Real processes: a bot that is slow the first
time it starts (it marks a file), one that never says ``ready``, one that crashes."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from referee.bots.limits import Limits
from referee.bots.process import Launcher
from referee.game.faults import Reason
from referee.match.play import Entrant
from referee.tournament import admission
from referee.tournament.admission import preflight

pytestmark = pytest.mark.process

SLOW_ONCE = """
import os, sys, time
mark = sys.argv[1]
first = not os.path.exists(mark)
open(mark, "a").write("start\\n")
sys.stdin.readline()
if first:
    time.sleep(5)  # the first start is slow: as beside a burner
print("ready slow-once", flush=True)
sys.stdin.readline()
"""
NEVER = "import sys, time\nopen(sys.argv[1], 'a').write('start\\n')\ntime.sleep(30)\n"
CRASH = "import sys\nopen(sys.argv[1], 'a').write('start\\n')\nsys.exit(3)\n"
QUICK = "import sys\nsys.stdin.readline()\nprint('ready', flush=True)\nsys.stdin.readline()\n"


def entrant(tmp_path: Path, name: str, code: str) -> Entrant:
    return Entrant(name, (sys.executable, "-c", code, str(tmp_path / f"{name}.starts")),
                   tmp_path)


def starts(tmp_path: Path, name: str) -> int:
    return len((tmp_path / f"{name}.starts").read_text().splitlines())


def test_a_start_that_ran_out_of_time_beside_others_is_tried_once_more_alone(
        tmp_path: Path) -> None:
    entrants = [entrant(tmp_path, "slow", SLOW_ONCE), entrant(tmp_path, "never", NEVER),
                entrant(tmp_path, "crash", CRASH), Entrant("quick", (sys.executable, "-c",
                                                                   QUICK), tmp_path)]
    results = {r.name: r for r in preflight(
        entrants, limits=Limits(startup_ms=1500, memory_mb=0),
        launcher=Launcher.resolve("none", Limits(memory_mb=0)), logs_dir=tmp_path / "logs")}
    assert results["slow"].ok and starts(tmp_path, "slow") == 2
    assert not results["never"].ok and results["never"].code == Reason.NO_ANSWER
    assert starts(tmp_path, "never") == 2  # twice out of time: left out
    assert not results["crash"].ok and starts(tmp_path, "crash") == 1  # not a matter of time
    assert results["quick"].ok


def test_alone_from_the_start_it_is_not_tried_again(tmp_path: Path) -> None:
    [result] = preflight([entrant(tmp_path, "slow", SLOW_ONCE)],
                         limits=Limits(startup_ms=1500, memory_mb=0),
                         launcher=Launcher.resolve("none", Limits(memory_mb=0)),
                         logs_dir=tmp_path / "logs")
    assert not result.ok and starts(tmp_path, "slow") == 1


def test_the_retries_take_at_most_their_share_of_start_up_limits(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Many silent entrants do not hold the first match back by one limit each: past
    ``RETRIES_FOR`` limits of retries, the rest keep their first answer, saying so."""
    monkeypatch.setattr(admission, "RETRIES_FOR", 1)
    entrants = [entrant(tmp_path, f"never{i}", NEVER) for i in range(3)]
    results = preflight(entrants, limits=Limits(startup_ms=1000, memory_mb=0),
                        launcher=Launcher.resolve("none", Limits(memory_mb=0)),
                        logs_dir=tmp_path / "logs")
    assert [starts(tmp_path, f"never{i}") for i in range(3)] == [2, 1, 1]
    assert not any(r.ok for r in results)
    assert "not tried again alone" in results[2].detail
