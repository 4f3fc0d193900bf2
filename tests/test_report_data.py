"""The report's data, without a browser or a bot process: the aggregates of the journal
(:class:`referee.web.folder.Summary`), the headline and the notes, and the data files
:class:`referee.web.report.Report` writes from a folder of journal lines."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from referee.tournament.ratings import Standings
from referee.web.folder import (
    CHUNK,
    EXAMPLES,
    Summary,
    headline,
    order_note,
    page_data,
    pair_text,
)
from referee.web.report import Refresher, Report, ReportError, build


def line(match_id: str, players: list[str], totals: list[int], ranks: list[int], *,
         hands: int = 2, faults: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"id": match_id, "players": players, "totals": totals, "ranks": ranks,
            "faults": faults or [], "hands": hands, "record": f"games/{match_id}.json"}


def test_the_crosstable_counts_points_a_hand_and_wins_over_shared_matches() -> None:
    s = Summary()
    assert s.add(line("r1-g001-s01", ["a", "b"], [300, 100], [1, 2]))
    assert s.add(line("r1-g001-s02", ["b", "a"], [200, 200], [1, 1]))
    assert not s.add(line("r1-g001-s02", ["b", "a"], [200, 200], [1, 1]))  # repeated
    assert not s.add({"id": "x", "players": 3})
    for bad in ("../../etc/x", ".hidden", "a/b", ""):
        assert not s.add(line(bad, ["a", "b"], [1, 0], [1, 2]))
    assert s.cell("a", "b") == [1, 0, 2, 125.0, 75.0]
    assert s.cell("b", "a") == [0, 1, 2, 75.0, 125.0]
    assert s.cell("a", "c") is None
    assert s.opponents("a") == [["b", 1, 0, 2, 125.0, 75.0]]


def test_a_bot_that_never_started_is_one_group_with_a_few_examples() -> None:
    s = Summary()
    benched = {"seat": 1, "hand": 1, "fault": "startup",
               "detail": "left out: did not start in the pre-flight: startup: exited"}
    for k in range(114):
        s.add(line(f"r{k}-g001-s01", ["a", "crasher"], [100, 0], [1, 2], faults=[benched]))
    (group,) = s.faults.values()
    assert (group.name, group.kind, group.count, group.benched) == ("crasher", "startup", 114, 114)
    assert len(group.examples) == EXAMPLES
    data = page_data(s, name="t", rows=[], standings=None, config=None, preflight={})
    # left out (known from its first match, before the standings say it): its row says why,
    # so no group of faults of play for it, nor a column of the crosstable
    assert data["left_out"] == {"crasher": "did not start in the pre-flight: startup: exited"}
    assert data["faults"] == [] and data["fault_groups"] == 0
    assert data["cross"]["names"] == ["a"]
    assert data["chunks"] == 1 and s.matches[0][5] == [[1, "startup", 1, 1]]
    # one disqualified (it played, then was benched) keeps its group
    s.add(line("r999-g001-s01", ["a", "cheat"], [100, 0], [1, 2], faults=[
        benched | {"detail": "disqualified: after 3 faults"}]))
    data = page_data(s, name="t", rows=[], standings=None, config=None, preflight={})
    assert [(g["name"], g["count"]) for g in data["faults"]] == [("cheat", 1)]


def pair(upper: str, lower: str, verdict: str, diff: float | None, low: float | None,
         high: float | None, sets: int = 4) -> dict[str, Any]:
    return {"upper": upper, "lower": lower, "verdict": verdict, "diff": diff, "low": low,
            "high": high, "sets": sets}


def test_the_headline_says_who_won_and_how_sure() -> None:
    rows = [{"name": "mc", "score": 20.0}, {"name": "greedy", "score": 18.0}]
    won = headline(rows, [pair("mc", "greedy", "stronger", 5.6, 3.5, 7.7)], 18, final=True,
                   stopped="settled")
    assert won == ("mc wins: stronger than greedy by 5.6 points a hand (+3.5 to +7.7, adjusted "
                   "for luck), decided after 18 matches")
    rows_open = [{"name": "greedy"}, {"name": "mc"}]
    still = headline(rows_open, [pair("greedy", "mc", "open", -6.3, -20.0, 7.4)], 12,
                     final=True, stopped="cap")
    assert still == ("No decided winner after 12 matches: greedy is first on the table, not "
                     "yet told apart from mc (-6.3 points a hand, -20.0 to +7.4, adjusted for "
                     "luck)")
    demo = headline(rows, [pair("mc", "greedy", "open", 7.4, -154.1, 168.9, sets=2)], 12,
                    final=True, stopped="complete")
    assert demo == ("No decided winner after 12 matches: mc is first on the table, not yet "
                    "told apart from greedy (+7.4 points a hand so far, adjusted for luck)")
    assert headline(rows, [], 3, final=False, stopped=None) == (
        "mc is first after 3 matches (provisional: the run is not over)")
    live = headline(rows, [pair("mc", "greedy", "open", 1.0, -3.0, 5.0)], 30, final=False,
                    stopped=None)  # 1,000 twins: the first row names no leader
    assert live.startswith("No decided leader yet after 30 matches: mc is first on the table")
    ahead = headline(rows, [pair("mc", "greedy", "stronger", 5.6, 3.5, 7.7)], 30, final=False,
                     stopped=None)
    assert ahead.startswith("mc leads: decidedly stronger than greedy by 5.6 points a hand (+3.5 "
                            "to +7.7, adjusted for luck)")
    assert headline([], [], 0, final=False, stopped=None) == "no match finished yet"
    gauntlet = headline(rows, [], 8, final=True, stopped="settled", questions=[
        pair("cand", "a", "stronger", 4.0, 1.0, 7.0), pair("cand", "b", "open", 1.0, -2, 4)])
    assert gauntlet == ("cand: stronger than a (+4.0 pts/hand); still open against b "
                        "(+1.0 pts/hand), after 8 matches (differences adjusted for luck)")


def test_a_verdict_too_wide_to_measure_says_so_rather_than_a_plus_minus_figure() -> None:
    """With 2 duplicate sets the interval is some 300 points a hand wide: no measurement."""
    two_sets = pair("mc", "greedy", "open", 7.4, -154.1, 168.9, sets=2)
    assert pair_text(two_sets, 240) == "open: too early to tell, 2 sets (+7.4 pts/hand so far)"
    assert pair_text(two_sets, 240, short=True) == "open: too early to tell, 2 sets"
    unbounded = pair("mc", "greedy", "open", 7.4, None, 240.0, sets=1)
    assert pair_text(unbounded, 240) == "open: too early to tell, 1 set (+7.4 pts/hand so far)"
    narrow = pair("mc", "greedy", "stronger", 5.6, 3.5, 7.7, sets=9)
    assert pair_text(narrow, 240) == "stronger +5.6 (+3.5 to +7.7) pts/hand, 9 sets"
    assert pair_text(narrow, 240, confidence=0.95) == (
        "stronger +5.6 (+3.5 to +7.7) pts/hand, 95% sure, 9 sets")
    assert pair_text(narrow, 240, short=True) == "stronger +5.6 (+3.5 to +7.7)/h, 9 sets"
    lopsided = pair("mc", "random", "stronger", 70.0, 2.0, 138.0, sets=2)
    assert pair_text(lopsided, 240) == "stronger +70.0 pts/hand (at least +2.0), 2 sets"
    by_test = pair("mc", "greedy", "stronger", 5.9, -61.0, 80.0, sets=2)  # an old record's
    assert pair_text(by_test, 240) == "stronger +5.9 pts/hand, 2 sets"  # not "at least -61.0"
    # the rows of the page carry the same words
    rows = [{"name": "mc", "score": 3.0}, {"name": "greedy", "score": 2.0}]
    data = page_data(Summary(), name="t", rows=rows, standings={"pairs": [two_sets]},
                     config=None, preflight={})
    assert data["rows"][0][data["columns"].index("verdict")][5] == pair_text(two_sets, 240)
    words = data["rows"][0][data["columns"].index("verdict")][5]
    assert "154.1" not in words and "168.9" not in words  # no end of a measureless interval


def test_the_order_is_explained_where_it_is_not_plain_mu_minus_3_sigma() -> None:
    assert order_note([{"name": "a", "score": 3.0}, {"name": "b", "score": 2.0}]) is None
    note = order_note([{"name": "a", "score": 2.0}, {"name": "b", "score": 3.0}])
    assert note is not None and "a above b" in note and "decided" in note


def journal(out: Path, lines: list[dict[str, Any]]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "tournament.yaml").write_text("name: t\nformat: round-robin\nplayers: 2\n")
    (out / "results.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines)
                                       + "not json\n{\"id\": \"half")


def data_of(out: Path) -> dict[str, Any]:
    text = (out / "report" / "data.js").read_text()
    assert text.startswith("window.CT_REPORT = ") and text.endswith(";\n")
    result = json.loads(text[len("window.CT_REPORT = "):-2])
    assert isinstance(result, dict)
    return result


def test_bot_text_never_reaches_the_data_as_markup(tmp_path: Path) -> None:
    evil = "</script><img src=x onerror=alert(1)>"
    journal(tmp_path / "out", [line("r1-g001-s01", [evil, "b"], [10, 0], [1, 2], faults=[
        {"seat": 0, "hand": 1, "fault": evil, "detail": evil}]),
        line("r1-g001-s02", ["b", evil], [10, 0], [1, 2])])
    build(tmp_path / "out")
    text = (tmp_path / "out" / "report" / "data.js").read_text()
    assert "<" not in text and ">" not in text
    assert data_of(tmp_path / "out")["faults"][0]["examples"][0]["detail"] == evil
    assert "<" not in (tmp_path / "out" / "report" / "matches" / "0.js").read_text()


def test_the_match_list_is_written_in_chunks_each_full_one_once(tmp_path: Path) -> None:
    out = tmp_path / "out"
    journal(out, [])
    report = Report(out)
    for k in range(CHUNK + 6):  # sets of two
        report.add(line(f"r{k // 2}-g001-s0{k % 2 + 1}", ["a", "b"], [k, 0], [1, 2]))
    report.write()
    first = (out / "report" / "matches" / "0.js").stat().st_mtime_ns
    (out / "report" / "matches" / "0.js").write_text("ctMatches(0, []);\n")  # not rewritten
    report.add(line("r9999-g001-s01", ["a", "b"], [1, 0], [1, 2]))
    report.add(line("r9999-g001-s02", ["b", "a"], [1, 0], [1, 2]))
    report.write()
    assert (out / "report" / "matches" / "0.js").read_text() == "ctMatches(0, []);\n"
    assert first
    tail = (out / "report" / "matches" / "1.js").read_text()
    assert tail.count('"r') == 8
    assert data_of(out)["matches"] == CHUNK + 8 and data_of(out)["chunks"] == 2


def test_the_refresher_takes_lines_and_writes_once_finished(tmp_path: Path) -> None:
    out = tmp_path / "out"
    journal(out, [])
    table = Standings(["a", "b"])
    pages = Refresher(out, interval=3600)
    for k in range(4):
        pages.match_done(line(f"r{k // 2}-g001-s0{k % 2 + 1}", ["a", "b"], [30, 10], [1, 2]),
                         table)
    pages.finish()
    data = data_of(out)
    assert data["matches"] == 4 and not data["final"]
    assert [r[1] for r in data["rows"]] == ["a", "b"]
    assert (out / "report" / "index.html").is_file() and (out / "report" / "report.js").is_file()


def test_build_refuses_a_folder_that_is_not_a_tournament(tmp_path: Path) -> None:
    for target in (tmp_path, tmp_path / "missing"):
        try:
            build(target)
        except ReportError as err:
            assert str(target) in str(err)
        else:
            raise AssertionError("no error")


def test_a_gauntlets_answers_audit_flags_and_left_out_entrants_reach_the_data() -> None:
    s = Summary()
    s.add(line("r1-g001-s01", ["cand", "a"], [300, 100], [1, 2]))
    rows = [{"rank": 1, "name": "cand", "score": 20.0,
             "audit": {"later_minus_first": 9.5, "low": 2.0, "high": 17.0, "flag": "suspect"}},
            {"rank": 2, "name": "a", "score": 10.0},
            {"rank": 3, "name": "gone", "score": 30.0, "left_out": "did not start"}]
    standings = {"standings": rows, "stopped": "settled", "left_out": {"gone": "did not start"},
                 "pairs": [pair("cand", "a", "stronger", 50.0, 20.0, 80.0, 1)],
                 "questions": [pair("cand", "a", "stronger", 50.0, 20.0, 80.0, 1)]}
    data = page_data(s, name="g", rows=rows, standings=standings, config={"format": "gauntlet"},
                     preflight={})
    assert data["headline"] == ("cand: stronger than a (+50.0 pts/hand), after 1 match "
                                "(differences adjusted for luck)")
    assert data["questions"] == [{"upper": "cand", "lower": "a", "verdict": "stronger",
                                  "text": "stronger +50.0 (+20.0 to +80.0) pts/hand, 95% sure, "
                                          "1 set"}]
    assert data["audit"][0] == {"name": "cand", "later_minus_first": 9.5, "low": 2.0,
                                "high": 17.0, "flag": "suspect", "sets": None, "why": None}
    assert [r[-1] for r in data["rows"]] == ["audit", "", "left out"]
    assert data["rows"][0][-2] == ["stronger", 50.0, 20.0, 80.0, 1,
                                   "stronger +50.0 (+20.0 to +80.0) pts/hand, 95% sure, 1 set"]
    assert data["rows"][2][-2] == "left out: did not start"  # its row says why
    assert data["order_note"] is None  # a left-out entrant is last whatever its score
    assert "format: gauntlet" in data["settings"]


def test_an_interval_still_at_the_range_of_a_hands_points_reads_too_few_sets() -> None:
    """One duplicate set bounds nothing: the stopping test's interval is the whole range of a
    hand's points (±240 in classic, ±218 in red frog) or infinite, and the page says so in
    words, not ``± ∞`` nor ``[-240.0, 240.0]``; an end the data did bound is kept."""
    s = Summary()
    s.add(line("r1-g001-s01", ["a", "b"], [300, 100], [1, 2]))
    audit = {"later_minus_first": 14.3, "low": -240.0, "high": 240.0, "flag": False, "sets": 1}
    rows = [{"rank": 1, "name": "a", "score": 20.0, "audit": audit},
            {"rank": 2, "name": "b", "score": 10.0,
             "audit": audit | {"low": -60.5, "high": None}},
            {"rank": 3, "name": "c", "score": 5.0, "audit": audit | {"low": -3.0, "high": 9.0}}]
    standings = {"standings": rows, "stopped": "cap",
                 "pairs": [pair("a", "b", "open", 14.3, -240.0, 240.0, 1),
                           pair("b", "c", "open", 2.0, None, None, 1)],
                 "questions": [pair("a", "b", "open", 14.3, -240.0, 240.0, 1),
                               pair("a", "c", "stronger", 30.0, 12.5, 240.0, 6)]}
    data = page_data(s, name="t", rows=rows, standings=standings, config={"variant": "classic"},
                     preflight={})
    early = "open: too early to tell, 1 set"
    assert data["rows"][0][-2] == ["open", 14.3, None, None, 1, f"{early} (+14.3 pts/hand so far)"]
    assert data["rows"][1][-2] == ["open", 2.0, None, None, 1, f"{early} (+2.0 pts/hand so far)"]
    assert [q["text"] for q in data["questions"]] == [
        f"{early} (+14.3 pts/hand so far)",
        "stronger +30.0 pts/hand (at least +12.5), 95% sure, 6 sets"]
    assert [(a["low"], a["high"]) for a in data["audit"]] == [
        (None, None), (-60.5, None), (-3.0, 9.0)]
    # a red frog hand has 218 points: 240 is no bound there, 218 is
    for variant, verdict in (("red-frog-black-frog", ["open", 1.0, None, 200.0, 1]),
                             ("classic", ["open", 1.0, -218.0, 200.0, 1])):
        frog = page_data(s, name="t", rows=rows[2:], config={"variant": variant},
                         standings={"standings": rows[2:], "pairs": [
                             pair("c", "d", "open", 1.0, -218.0, 200.0, 1)]}, preflight={})
        assert frog["rows"][0][-2][:5] == verdict


def test_a_rebuild_keeps_the_chart_of_a_finished_tournament(tmp_path: Path) -> None:
    out = tmp_path / "out"
    journal(out, [line(f"r{k // 2}-g001-s0{k % 2 + 1}", ["a", "b"], [30 + k, 10], [1, 2])
                  for k in range(6)])
    build(out)
    first = data_of(out)["chart"]
    assert first is not None and first["xs"][-1] == 6
    (out / "standings.json").write_text(json.dumps({"standings": [
        {"rank": 1, "name": "a"}, {"rank": 2, "name": "b"}], "pairs": []}))
    (out / "results.jsonl").write_text("")  # not rated again: the chart is the last one's
    build(out)
    assert data_of(out)["chart"] == first and data_of(out)["final"]


def test_a_resumed_runs_report_counts_the_earlier_matches_once(tmp_path: Path) -> None:
    out = tmp_path / "out"
    old = [line(f"r1-g001-s0{k}", ["a", "b"], [30, 10], [1, 2]) for k in (1, 2)]
    journal(out, old)
    pages = Refresher(out, interval=3600)
    table = Standings(["a", "b"])
    pages.match_done(old[1], table)  # appended before the report's thread read the journal
    pages.match_done(line("r2-g001-s01", ["b", "a"], [30, 10], [1, 2]), table)
    pages.match_done(line("r2-g001-s02", ["a", "b"], [30, 10], [1, 2]), table)
    pages.finish()
    data = data_of(out)
    assert data["matches"] == 4
    assert data["cross"]["cells"][data["cross"]["names"].index("a")][
        data["cross"]["names"].index("b")][:3] == [3, 1, 4]


def test_the_settings_say_how_often_the_rating_is_updated() -> None:
    from referee.web.folder import settings
    per_set = settings({}, {"rating": {"mu": 25, "sigma": 8.3, "per": "set"}})
    per_match = settings({}, {"rating": {"mu": 25, "sigma": 8.3, "per": "match"}})
    assert any("updated once per duplicate set" in line for line in per_set), per_set
    assert any("updated once per match" in line for line in per_match), per_match


def test_each_limit_is_said_in_words_and_0_as_no_limit() -> None:
    """``max faults: 0`` read as "no fault allowed"; it means no limit."""
    from referee.web.folder import settings
    limits = {"startup_ms": 10000, "move_ms": 1000, "bank_ms": 0, "memory_mb": 0, "pids": 64,
              "cpus": 1.0, "tmp_mb": 64, "file_mb": 0}
    said = settings({"max_faults": 0, "limits": limits}, None)
    assert "faults: no limit (max_faults 0: no entrant is disqualified)" in said, said
    assert "clock: a move 1000 ms, start-up 10000 ms, time bank none" in said, said
    assert "bots: memory no limit, processes 64, CPU 1 core, files no limit" in said, said
    assert not any(line.startswith("max faults") for line in said), said
    capped = settings({"max_faults": 3, "max_matches": 500}, None)
    assert "faults: an entrant is disqualified after 3 (max_faults)" in capped, capped
    assert "match cap: at most 500 matches (max_matches)" in capped, capped


def test_the_rating_chart_has_one_point_a_number_of_matches(tmp_path: Path) -> None:
    """A page written twice with no match rated between (the schedule's prefix waiting on one
    match) adds no second point at the same x: the chart drew ``xs`` 0, 0, 3, 3, 4, 12."""
    from referee.tournament.ratings import MatchResult, RatingConfig, Standings
    from referee.web.report import Report

    journal(tmp_path, [])  # sets of two matches, the table rated each match
    report = Report(tmp_path)
    table = Standings(["a", "b"], RatingConfig(per="match"))
    report.snapshot(table)
    report.snapshot(table)
    table.add(MatchResult(("a", "b"), (10, 5), (1, 2), hands=1))
    assert not report.snapshot(table)  # half a set: not shown
    table.add(MatchResult(("b", "a"), (10, 5), (1, 2), hands=1))
    report.snapshot(table)
    report.snapshot(table)
    table.add(MatchResult(("a", "b"), (10, 5), (1, 2), hands=1))
    report.snapshot(table)
    assert [x for x, _ in report.history] == [0, 2]


def test_a_view_is_written_whole_but_not_synced(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """The report's heartbeat and replay data go through ``write_atomic(sync=False)``: renamed
    over the old file as every write is (a reader sees one or the other), without the fsync a
    record gets."""
    import os

    from referee.records.record import write_atomic

    synced: list[int] = []
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(fd))
    path = tmp_path / "report" / "alive.js"
    write_atomic(path, "old\n", sync=False)
    write_atomic(path, "new\n", sync=False)
    assert path.read_text() == "new\n" and synced == []
    write_atomic(path, "a record\n")
    assert path.read_text() == "a record\n" and len(synced) == 1
    assert [p.name for p in path.parent.iterdir()] == ["alive.js"]  # no temporary file left


def test_the_report_server_says_no_cache_once_on_every_reply(tmp_path: Path) -> None:
    """The live report's own files (index.html, data.js, a log) are asked again by the browser
    (a 304 where nothing changed), never kept: each reply says ``no-cache`` once; a hidden
    file is still never served."""
    import urllib.error
    import urllib.request

    from referee.web.routes import Kind
    from referee.web.serve import ReportServer

    (tmp_path / "report").mkdir()
    (tmp_path / "report" / "index.html").write_text("<!doctype html>live\n")
    (tmp_path / "report" / "data.js").write_text("window.CT_REPORT = {};\n")
    (tmp_path / "logs" / "r1-g001-s01").mkdir(parents=True)
    (tmp_path / "logs" / "r1-g001-s01" / "0-a.stderr").write_text("said\n")
    (tmp_path / "tournament.yaml").write_text("players: 2\nseatings: all\n")
    (tmp_path / "results.jsonl").write_text('{"id": "r1-g001-s01"}\n{"id": "r1-g001-s02"}\n')
    (tmp_path / ".deal-secret").write_text("00" * 16)
    server = ReportServer(tmp_path, Kind.TOURNAMENT, 0, live=lambda: False)
    server.start()
    base = f"http://127.0.0.1:{server.port}"
    try:
        for path in ("/report/index.html", "/report/data.js", "/logs/r1-g001-s01/0-a.stderr"):
            ask = urllib.request.Request(base + path,
                                         headers={"Authorization": f"Bearer {server.key}"})
            with urllib.request.urlopen(ask, timeout=30) as reply:
                assert reply.headers.get_all("Cache-Control") == ["no-cache"], path
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(urllib.request.Request(
                base + "/.deal-secret", headers={"Authorization": f"Bearer {server.key}"}),
                timeout=30)
        assert info.value.code == 404
    finally:
        server.close()
