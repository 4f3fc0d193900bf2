"""``ct-referee sandbox`` names each hostile probe by its whole first sentence."""

from __future__ import annotations

import pytest

from referee.bots.probes.attacks import ATTACKS
from referee.cli.sandbox import probe_summary


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_each_probe_is_described_by_a_whole_sentence(name: str) -> None:
    summary = probe_summary(ATTACKS[name].__doc__)
    assert summary.endswith("."), summary          # `pagecache` used to end "the marks a bot"
    assert "\n" not in summary and "  " not in summary


def test_a_summary_wrapped_over_two_source_lines_is_joined() -> None:
    doc = "Evict the page cache: the marks a bot\n    leaves for a later bot.\n\n    More."
    assert probe_summary(doc) == "Evict the page cache: the marks a bot leaves for a later bot."
    assert probe_summary(None) == ""
