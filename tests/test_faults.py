"""Tests for :mod:`referee.game.faults`: the fault kinds are the protocol's and the record's
words."""

from __future__ import annotations

import json

from referee.game.faults import Fault, Reason


def test_fault_values_are_the_words_of_the_protocol_and_the_record() -> None:
    assert [f.value for f in Fault] == ["timeout", "illegal", "garbled", "crash", "startup",
                                       "memory"]
    assert json.dumps({"fault": Fault.CRASH}) == '{"fault": "crash"}'
    assert f"forfeit {Fault.TIMEOUT}" == "forfeit timeout"


def test_fault_order_puts_unknown_kinds_last_by_name() -> None:
    kinds = ["zeta", "startup", "alpha", "timeout", "crash"]
    assert sorted(kinds, key=Fault.order) == ["timeout", "crash", "startup", "alpha", "zeta"]


def test_reason_codes_are_distinct_words() -> None:
    values = [r.value for r in Reason]
    assert len(set(values)) == len(values)
    assert all(v == v.lower() and " " not in v for v in values)
