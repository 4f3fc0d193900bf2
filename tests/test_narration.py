"""The narration: the exact lines each seat receives on a known deal, from the core, from a
match, and from a record's seat lines (a go with a capture, a sweep, a pick, a fault)."""

from __future__ import annotations

from conftest import Scripted, scripted
from referee.game.cards import DECK, Card
from referee.game.rules import Deal, Hand
from referee.match.play import play_match
from referee.protocol import narration
from referee.records.replay import seat_lines

SEAT0 = "5s 3d 2c 2d 6c 6d 7h 8h 9s Th Ts Jc"
SEAT1 = "6h Kc 2s 2h 7c 7d 8c 8d 9d 9h Tc Td"
LAYOUT = "5c 5d 5h 4c"
TOP = "9c Ad 3h 7s"
"""Seat 1 moves first: 6h takes 4c (9c turned, lands); seat 0's 5s sweeps the layout's three
5s (Ad turned takes 9c); seat 1's Kc lands on the empty table (3h lands); seat 0's 3d lands and
the turned 7s may take 3h or 3d: a pick."""


def known_deal() -> Deal:
    used = {Card.parse(t) for t in f"{SEAT0} {SEAT1} {LAYOUT} {TOP}".split()}
    rest = [str(c) for c in DECK if c not in used]
    return Deal.from_cards([SEAT0.split(), SEAT1.split()], LAYOUT.split(), [*TOP.split(), *rest])


EXPECTED_0 = [
    "hand 1 dealer 0 cards 5s 3d 2c 2d 6c 6d 7h 8h 9s Th Ts Jc layout 5c 5d 5h 4c",
    "play 1 6h 4c",
    "turn 1 9c",
    "go hand 5s 3d 2c 2d 6c 6d 7h 8h 9s Th Ts Jc table 5c 5d 5h 9c stock 23 ms 1000",
    "play 0 5s 5c 5d 5h",
    "turn 0 Ad 9c",
    "play 1 Kc",
    "turn 1 3h",
    "go hand 3d 2c 2d 6c 6d 7h 8h 9s Th Ts Jc table Kc 3h stock 21 ms 1000",
    "play 0 3d",
    "pick 7s from 3h 3d ms 1000",
    "turn 0 7s 3d",
]
EXPECTED_1 = [
    "hand 1 dealer 0 cards 6h Kc 2s 2h 7c 7d 8c 8d 9d 9h Tc Td layout 5c 5d 5h 4c",
    "go hand 6h Kc 2s 2h 7c 7d 8c 8d 9d 9h Tc Td table 5c 5d 5h 4c stock 24 ms 1000",
    "play 1 6h 4c",
    "turn 1 9c",
    "play 0 5s 5c 5d 5h",
    "turn 0 Ad 9c",
    "go hand Kc 2s 2h 7c 7d 8c 8d 9d 9h Tc Td table stock 22 ms 1000",
    "play 1 Kc",
    "turn 1 3h",
    "play 0 3d",
    "turn 0 7s 3d",
]
ANSWERS = {0: ["5s", "3d", "3d"], 1: ["6h 4c", "Kc"]}


def test_the_core_tells_each_seat_its_lines() -> None:
    hand = Hand(known_deal(), dealer=0)
    got: dict[int, list[str]] = {0: [], 1: []}
    answers = {s: list(a) for s, a in ANSWERS.items()}

    def tell(line: narration.Line) -> None:
        for s in got:
            if line.for_seat(s):
                got[s].append(line.text)

    for line in narration.hand_cues(1, hand):
        tell(line)
    for _ in range(4):
        for cue in narration.turn_cues(hand):
            if isinstance(cue, narration.Line):
                tell(cue)
                continue
            got[cue.seat].append(cue.line(1000))
            words = answers[cue.seat].pop(0).split()
            if cue.kind == "go":
                hand.play(*(Card.parse(w) for w in words))
            else:
                hand.pick(Card.parse(words[0]))
    assert got == {0: EXPECTED_0, 1: EXPECTED_1}
    assert narration.score_cue([3, 4], [10, 20]) == narration.Line("score 3 4 totals 10 20")
    assert narration.end_cue([10, 20], [2, 1]).text == "end totals 10 20 ranks 2 1"


def test_a_match_sends_these_lines_and_the_record_gives_them_back() -> None:
    """Seat 1 answers its third ``go`` with garbage: it is sent ``forfeit`` and nothing more;
    seat 0 plays on to ``end``, and its lines are exactly the record's seat lines."""
    seats = [Scripted(list(ANSWERS[0])), Scripted([*ANSWERS[1], "garbage"])]
    entrants = [scripted("alice", seats[0]), scripted("bob", seats[1])]
    deal = known_deal()
    record = play_match("n1", entrants, lambda k: deal if k == 1 else Deal.from_seed(2, k),
                        target=1, bot_id="n1")
    head = "match id n1 seat {} players 2 variant classic target 1 names alice bob"
    assert [(f["seat"], f["fault"]) for f in record["faults"]] == [(1, "garbled")]
    assert seats[1].lines == [
        head.format(1), *EXPECTED_1,
        "go hand 2s 2h 7c 7d 8c 8d 9d 9h Tc Td table Kc 3h stock 20 ms 1000",
        "forfeit garbled", "(closed)"]
    assert seats[0].lines[:len(EXPECTED_0) + 1] == [head.format(0), *EXPECTED_0]
    assert seats[0].lines[len(EXPECTED_0) + 1].startswith("play 1 ")  # the fallback's
    assert seats[0].lines[-2].startswith("end totals ") and seats[0].lines[-1] == "(closed)"
    assert [x.line for x in seat_lines(record, 0)] == seats[0].lines[:-1]
    told = [x.line for x in seat_lines(record, 1)]
    assert told[:len(seats[1].lines) - 2] == seats[1].lines[:-2]  # up to the fault
