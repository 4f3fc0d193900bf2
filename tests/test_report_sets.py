"""Nothing of a duplicate set reaches the report before every seating of the set has ended
(:mod:`referee.web.sets`): the later seatings play the same deals, so a total, a fault's
stderr tail, a replay or a win counted from an earlier seating would tell a bot what it will be
dealt. The report's files, written while a set is half played and by a rebuild of an
interrupted run, hold none of it; the server's view of the journal (``EndedSets``) follows it as
it grows, is torn, replaced or cut. No process: ``test_report_server.py`` runs the real ones."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from referee.tournament.ratings import MatchResult, Standings
from referee.web.report import Refresher, Report, build
from referee.web.sets import EndedSets, SetGate, set_size_of

SECRET_TAIL = "CARDS-OF-THE-DEAL-7c-Kd-3h"
"""What a bot of the set under way wrote to its stderr (its hand, say)."""


def line(match_id: str, players: list[str], totals: list[int], ranks: list[int], *,
         faults: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"id": match_id, "players": players, "totals": totals, "ranks": ranks,
            "faults": faults or [], "hands": 2, "record": f"games/{match_id}.json.gz"}


def folder(out: Path, *, players: int = 2, seatings: str = "all") -> Path:
    out.mkdir(parents=True, exist_ok=True)
    (out / "tournament.yaml").write_text(f"name: t\nplayers: {players}\nseatings: {seatings}\n")
    (out / "results.jsonl").write_text("")
    return out


def every_file(out: Path) -> str:
    """Every file the report wrote, as one text."""
    return "".join(p.read_text() for p in sorted((out / "report").rglob("*")) if p.is_file())


def faulty(match_id: str) -> dict[str, Any]:
    """A match of ``a`` and ``b`` where ``a`` faulted (its stderr log says the deal)."""
    return line(match_id, ["a", "b"], [0, 20], [2, 1], faults=[
        {"seat": 0, "hand": 1, "fault": "illegal", "detail": "played 7c"}])


def test_a_half_played_set_leaves_no_trace_in_the_running_report(tmp_path: Path) -> None:
    out = folder(tmp_path / "out")
    (out / "logs" / "r1-g002-s01").mkdir(parents=True)
    (out / "logs" / "r1-g002-s01" / "0-a.stderr").write_text(SECRET_TAIL + "\n")
    table = Standings(["a", "b"])
    pages = Refresher(out, interval=0)
    ended = [line("r1-g001-s01", ["a", "b"], [31, 11], [1, 2]),
             line("r1-g001-s02", ["b", "a"], [17, 13], [1, 2])]
    for one in ended:  # counted as the tournament's table counts (its ratings once a set)
        table.add(MatchResult.from_json(one), rate=False)
        pages.match_done(one, table)
    table.rate(["a", "b"], [1, 2])
    half = faulty("r1-g002-s01")  # its second seating plays on
    table.add(MatchResult.from_json(half), rate=False)
    pages.match_done(half, table)
    pages.finish()
    text = every_file(out)
    data = json.loads((out / "report" / "data.js").read_text()[len("window.CT_REPORT = "):-2])
    assert data["matches"] == 2
    assert "r1-g002" not in text and SECRET_TAIL not in text and "played 7c" not in text
    assert table.matches == 3 and sum(r.matches for r in table.standings()) == 6
    rows = {r["name"]: r for r in pages.report.rows}
    assert rows["a"]["matches"] == rows["b"]["matches"] == 2, rows  # set 1's alone
    assert rows["a"]["faults"]["illegal"] == 0 and rows["a"]["wins"] == 1, rows
    assert rows["a"]["mu"] > rows["b"]["mu"]  # its rating: set 1's
    assert not [p for p in (out / "report").rglob("*") if "r1-g002" in p.name]


def test_the_set_shows_once_its_last_seating_ends(tmp_path: Path) -> None:
    out = folder(tmp_path / "out", players=3, seatings="rotate")
    (out / "logs" / "r1-g001-s02").mkdir(parents=True)
    (out / "logs" / "r1-g001-s02" / "2-a.stderr").write_text(SECRET_TAIL + "\n")
    report = Report(out)
    seats = [["a", "b", "c"], ["b", "c", "a"], ["c", "a", "b"]]
    lines = [line(f"r1-g001-s0{k + 1}", seats[k], [10, 20, 30], [3, 2, 1]) for k in range(3)]
    lines[1]["faults"] = [{"seat": 2, "hand": 1, "fault": "illegal", "detail": "x"}]  # a's
    for k in (2, 0):  # any order
        assert report.add(lines[k]) == []
        report.write()
        assert "r1-g001" not in every_file(out)
    taken = report.add(lines[1])
    assert [x["id"] for x in taken] == ["r1-g001-s01", "r1-g001-s02", "r1-g001-s03"]
    report.write()
    text = every_file(out)
    assert "r1-g001-s03" in text and SECRET_TAIL in text  # the fault's tail, once it ended


def test_a_rebuild_of_an_interrupted_run_leaves_its_half_played_sets_out(tmp_path: Path) -> None:
    """A run stopped midway is resumed with the same deals: ``ct-referee report`` shows the
    sets that ended, and neither the rows nor the chart count the others."""
    out = folder(tmp_path / "out")
    (out / "logs" / "r2-g001-s01").mkdir(parents=True)
    (out / "logs" / "r2-g001-s01" / "0-a.stderr").write_text(SECRET_TAIL + "\n")
    journal = [line("r1-g001-s01", ["a", "b"], [30, 10], [1, 2]),
               line("r1-g001-s02", ["b", "a"], [30, 10], [1, 2]), faulty("r2-g001-s01")]
    (out / "results.jsonl").write_text("".join(json.dumps(x) + "\n" for x in journal))
    build(out)
    text = every_file(out)
    assert "r2-g001" not in text and SECRET_TAIL not in text
    data = json.loads((out / "report" / "data.js").read_text()[len("window.CT_REPORT = "):-2])
    assert data["matches"] == 2
    report = Report(out)  # as build rated it: the lines of the sets that ended
    assert [x["id"] for x in journal for x in report.add(x)] == ["r1-g001-s01", "r1-g001-s02"]


def test_a_set_is_known_by_its_numbers_and_a_stray_seating_never_ends_it(tmp_path: Path) -> None:
    gate = SetGate(2)
    assert gate.add({"id": "r01-g0001-s001"}) == []
    assert [x["id"] for x in gate.add({"id": "r1-g001-s02"})] == ["r01-g0001-s001",
                                                                   "r1-g001-s02"]
    assert gate.add({"id": "r1-g002-s03"}) == [] and gate.add({"id": "r1-g002-s01"}) == []
    assert gate.add({"id": "r1-g002-s01"}) == [] and gate.waiting == 1  # a repeat: one seating
    assert gate.add({"id": "play-1"}) == [] and gate.add({"no": "id"}) == []
    assert SetGate(None).add({"id": "r1-g001-s01"}) == []  # a size not known: none ends


def test_the_size_of_a_set_comes_from_the_marker_then_the_configuration(tmp_path: Path) -> None:
    marker = tmp_path / ".ct-referee-league.json"
    marker.write_text(json.dumps({"identity": {"players": 3, "seatings": "all"}}))
    assert set_size_of(tmp_path, marker) == 6
    (tmp_path / "tournament.yaml").write_text("players: 4\nseatings: rotate\n")
    assert set_size_of(tmp_path) == 4 and set_size_of(tmp_path, tmp_path / "none") == 4
    (tmp_path / "tournament.yaml").write_text("players: 4\n")
    assert set_size_of(tmp_path) == 24  # the loader's default: every seat order
    for bad in ("players: 9\n", "players: x\n", "[1, 2]\n", ": :\n"):
        (tmp_path / "tournament.yaml").write_text(bad)
        assert set_size_of(tmp_path) is None, bad


def test_the_servers_view_follows_the_journal_as_it_grows_tears_and_is_replaced(
        tmp_path: Path) -> None:
    journal = tmp_path / "results.jsonl"
    sets = EndedSets(journal, 2)
    assert not sets.ended("r1-g001-s01")  # no journal yet
    journal.write_text('{"id": "r1-g001-s01"}\n{"id": "r1-g001-s02"')  # the last line torn
    assert not sets.ended("r1-g001-s01")
    with open(journal, "a") as f:
        f.write(', "players": []}\n{"id": "r1-g002-s02"}\nnot json\n[1]\n')
    assert sets.ended("r1-g001-s01") and sets.ended("r01-g0001-s09")  # any seating of it
    assert not sets.ended("r1-g002-s01") and not sets.ended("nonsense")
    fresh = tmp_path / "new.jsonl"  # --fresh: a new journal where the old one was
    fresh.write_text('{"id": "r1-g002-s01"}\n')
    os.replace(fresh, journal)
    assert not sets.ended("r1-g001-s01") and not sets.ended("r1-g002-s01")
    journal.write_text("")  # cut in place
    assert not sets.ended("r1-g001-s01")
    journal.unlink()
    journal.symlink_to(tmp_path / "elsewhere")  # a link is not followed
    (tmp_path / "elsewhere").write_text('{"id": "r1-g001-s01"}\n{"id": "r1-g001-s02"}\n')
    assert not sets.ended("r1-g001-s01")
    assert not EndedSets(tmp_path / "elsewhere", None).ended("r1-g001-s01")
