"""Re-verification of game records: real records verify, every kind of tampering is caught."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from conftest import DATA, PY, ROOT, bot
from referee.bots.limits import Limits
from referee.cli import main
from referee.game.rules import PARTNER, Deal, Variant
from referee.match.play import Entrant, play_match
from referee.records import positions
from referee.records.record import read_record, write_record
from referee.records.verify import Discrepancy, first_discrepancy, verify_record

RECORDS = sorted(DATA.glob("*.json"))


def load(name: str = "golden.json") -> dict[str, Any]:
    return copy.deepcopy(dict(read_record(DATA / name)))


@pytest.mark.parametrize("path", RECORDS, ids=[p.name for p in RECORDS])
def test_fixture_records_verify(path: Path) -> None:
    assert verify_record(read_record(path)) == []


def test_fixtures_cover_players_variants_and_faults() -> None:
    records = [read_record(p) for p in RECORDS]
    assert {len(r["players"]) for r in records} == {2, 3, 4}
    assert {r["variant"] for r in records} == {v.value for v in Variant}
    assert {f["fault"] for r in records for f in r["faults"]} >= {"crash", "illegal", "garbled"}
    assert any(t["by"] == "fallback" for r in records for h in r["hands"] for t in h["turns"])


@pytest.mark.process
@pytest.mark.parametrize("players, variant", [(2, Variant.RED_FROG), (4, Variant.CLASSIC)])
def test_live_match_with_a_faulting_bot_verifies(players: int, variant: Variant) -> None:
    entrants = [Entrant("random", (PY, "bots/random_bot.py"), ROOT),
                Entrant("flaky", bot("faulty", "exit", "5"), ROOT)]
    entrants += [Entrant(f"greedy{i}", (PY, "bots/greedy_bot.py"), ROOT)
                 for i in range(players - 2)]
    record = play_match("live", entrants, lambda k: Deal.from_seed(players, f"live:{k}"),
                        variant=variant, target=250, limits=Limits(move_ms=5000))
    assert record["faults"] and record["faults"][0]["seat"] == 1
    assert verify_record(record) == []


# Tampering: each function breaks a valid record one way; the discrepancy it must cause.


def _turns(r: dict[str, Any], k: int = 0) -> list[dict[str, Any]]:
    return r["hands"][k]["turns"]


def swap_hand_and_stock(r: dict[str, Any]) -> None:
    """A card of the first mover's hand swapped with a card of the stock: still one deck."""
    entry = r["hands"][0]
    first = _turns(r)[0]
    seat_cards = entry["hands"][first["seat"]]
    i = seat_cards.index(first["play"])
    j = len(entry["stock"]) - 1
    seat_cards[i], entry["stock"][j] = entry["stock"][j], seat_cards[i]


def wrong_capture(r: dict[str, Any]) -> None:
    turn = next(t for t in _turns(r) if len(t["capture"]) == 1)
    turn["capture"] = ["Ks" if turn["capture"][0] != "Ks" else "Kd"]


def missing_capture(r: dict[str, Any]) -> None:
    next(t for t in _turns(r) if t["capture"])["capture"] = []


def made_up_capture(r: dict[str, Any]) -> None:
    next(t for t in _turns(r) if not t["turn_capture"])["turn_capture"] = ["Qh"]


def wrong_turned_card(r: dict[str, Any]) -> None:
    turns = _turns(r)
    turns[3]["turn"], turns[4]["turn"] = turns[4]["turn"], turns[3]["turn"]


def wrong_score(r: dict[str, Any]) -> None:
    r["hands"][0]["scores"][0] += 10


def wrong_total(r: dict[str, Any]) -> None:
    r["totals"][1] -= 1


def wrong_rank(r: dict[str, Any]) -> None:
    r["ranks"] = [1, 2, 3][: len(r["ranks"])]
    if verify_record(r) == []:
        r["ranks"] = [3, 2, 1]


def faulted_seat_ranked_by_total(r: dict[str, Any]) -> None:
    totals = r["totals"]
    r["ranks"] = [1 + sum(1 for o in totals if o > t) for t in totals]


def duplicate_card(r: dict[str, Any]) -> None:
    hands = r["hands"][1]["hands"]
    hands[0][0] = hands[1][0]


def wrong_dealer(r: dict[str, Any]) -> None:
    r["hands"][1]["dealer"] = 0


def wrong_turn_order(r: dict[str, Any]) -> None:
    turns = _turns(r)
    turns[0], turns[1] = turns[1], turns[0]


def dropped_turn(r: dict[str, Any]) -> None:
    _turns(r).pop()


def extra_hand(r: dict[str, Any]) -> None:
    dealer = len(r["hands"]) % len(r["players"])
    entry = copy.deepcopy(next(h for h in r["hands"] if h["dealer"] == dealer))
    faulted = {f["seat"] for f in r["faults"]}
    for turn in entry["turns"]:
        if turn["seat"] in faulted:
            turn["by"] = "fallback"
    r["hands"].append(entry)
    r["totals"] = [a + b for a, b in zip(r["totals"], entry["scores"], strict=True)]


def missing_hand(r: dict[str, Any]) -> None:
    last = r["hands"].pop()
    r["totals"] = [a - b for a, b in zip(r["totals"], last["scores"], strict=True)]


def fallback_without_fault(r: dict[str, Any]) -> None:
    _turns(r)[0]["by"] = "fallback"


def unknown_variant(r: dict[str, Any]) -> None:
    r["variant"] = "blackjack"


def five_players(r: dict[str, Any]) -> None:
    r["players"] = ["a", "b", "c", "d", "e"]


def missing_key(r: dict[str, Any]) -> None:
    del _turns(r)[2]["turn_capture"]


def wrong_type(r: dict[str, Any]) -> None:
    _turns(r)[2]["seat"] = "1"


def not_a_card(r: dict[str, Any]) -> None:
    _turns(r)[2]["play"] = "Zz"


def hands_not_a_list(r: dict[str, Any]) -> None:
    r["hands"] = {"1": "x"}


def unknown_fault(r: dict[str, Any]) -> None:
    r["faults"][0]["fault"] = "slow"


TAMPERING: list[tuple[Callable[[dict[str, Any]], None], tuple[str, ...], int | None]] = [
    (swap_hand_and_stock, ("play", "turn", "capture", "turn capture"), 1),
    (wrong_capture, ("capture",), 1),
    (missing_capture, ("capture",), 1),
    (made_up_capture, ("turn capture",), 1),
    (wrong_turned_card, ("turn",), 1),
    (wrong_score, ("scores",), 1),
    (wrong_total, ("totals",), None),
    (wrong_rank, ("ranks",), None),
    (faulted_seat_ranked_by_total, ("ranks",), None),
    (duplicate_card, ("deal",), 2),
    (wrong_dealer, ("dealer",), 2),
    (wrong_turn_order, ("turn order",), 1),
    (dropped_turn, ("turns",), 1),
    (extra_hand, ("match end",), None),
    (missing_hand, ("match end",), None),
    (fallback_without_fault, ("by",), 1),
    (unknown_variant, ("variant",), None),
    (five_players, ("players",), None),
    (missing_key, ("structure",), 1),
    (wrong_type, ("structure",), 1),
    (not_a_card, ("structure",), 1),
    (hands_not_a_list, ("structure",), None),
    (unknown_fault, ("fault",), None),
]


@pytest.mark.parametrize("tamper, whats, hand_number", TAMPERING,
                         ids=[t[0].__name__ for t in TAMPERING])
def test_tampering_is_caught(
    tamper: Callable[[dict[str, Any]], None], whats: tuple[str, ...], hand_number: int | None
) -> None:
    record = load()
    tamper(record)
    found = first_discrepancy(record)
    assert found is not None
    assert found.what in whats, str(found)
    assert found.hand == hand_number, str(found)
    assert "\n" not in str(found)


def test_capture_discrepancy_names_both_sides() -> None:
    record = load()
    missing_capture(record)
    found = first_discrepancy(record)
    assert found is not None and found.turn is not None
    turn = _turns(load())[found.turn - 1]
    assert str(found) == (f"hand 1 turn {found.turn}: capture: record says [], "
                          f"rules give [{turn['capture'][0]}]")


def test_turns_are_applied_by_the_one_record_replay(monkeypatch: pytest.MonkeyPatch) -> None:
    checks: list[object] = []
    shared = positions.play_turn

    def counted(hand: Any, turn: Any, *, check: Any) -> Any:
        checks.append(check)
        return shared(hand, turn, check=check)

    monkeypatch.setattr(positions, "play_turn", counted)
    record = load()
    assert verify_record(record) == []
    assert len(checks) == sum(len(h["turns"]) for h in record["hands"])
    assert positions.RECORDED not in checks  # verify's own checks read each turn


def test_partner_table_is_what_captures() -> None:  # the tampering above relies on it
    assert PARTNER[2] == 6 and PARTNER[12] == 12


def test_one_tampered_number_is_reported_once() -> None:
    record = load()
    wrong_score(record)
    assert [d.what for d in verify_record(record)] == ["scores"]


@pytest.mark.parametrize("junk", [None, 3, "x", [], {"format": "chinese-ten-record", "version": 1},
                                  {"format": "chinese-ten-record", "version": 1, "id": "x",
                                   "players": ["a", "b"], "variant": "classic", "target": 0}])
def test_junk_gives_a_discrepancy_not_a_traceback(junk: Any) -> None:
    found = verify_record(junk)
    assert found and isinstance(found[0], Discrepancy)


# The command line.


def test_cli_verify_folder(tmp_path: Path) -> None:
    games = tmp_path / "games"
    (games / "sub").mkdir(parents=True)
    for p in RECORDS:
        (games / "sub" / p.name).write_text(p.read_text())
    bad = load()
    wrong_capture(bad)
    write_record(bad, games / "bad.json")  # type: ignore[arg-type]
    (games / "notjson.json").write_text("{ nope")
    (games / "other.json").write_text(json.dumps({"format": "pgn", "version": 1}))
    (games / "new.json").write_text(json.dumps({"format": "chinese-ten-record", "version": 2}))
    result = CliRunner().invoke(main, ["replay", "--verify", str(games)])
    assert result.exit_code == 1, result.output
    lines = result.output.splitlines()
    assert len(lines) == len(RECORDS) + 5
    assert sum(line.startswith("ok  ") for line in lines) == len(RECORDS)
    by_name = {Path(line.split()[1].rstrip(":")).name: line for line in lines[:-1]}
    assert "(4 hands)" in by_name["golden.json"]
    assert by_name["bad.json"].startswith(f"BAD {games / 'bad.json'}: hand 1 turn ")
    assert ": capture: record says [" in by_name["bad.json"]
    assert "not JSON" in by_name["notjson.json"]
    assert "its format is 'pgn'" in by_name["other.json"]
    assert "unsupported version 2" in by_name["new.json"]
    assert lines[-1] == f"{len(RECORDS) + 4} records: {len(RECORDS)} ok, 4 bad"
    assert "Traceback" not in result.output


def test_cli_verify_all_ok_exits_0() -> None:
    result = CliRunner().invoke(main, ["replay", "--verify", *map(str, RECORDS)])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-1] == f"{len(RECORDS)} records: {len(RECORDS)} ok, 0 bad"
