"""Nothing survives in the kernel's caches from one seating of a duplicate set to the next: a
hostile bot (``tests/bots/hostile/caches.py``) leaves its cards in the first-played seating as
negative dentries and as cached pages of system files, and looks for them in the later one by
timing. Every file it can reach lies on a tmpfs (``test_memory_view.py``): no drop, no eviction,
and the bot names its opponent's cards no better than chance, with a referee that is root and
one that is not (a user made for the test, its bots on its subordinate uids). The channel on a
disk, without the sandbox, is measured by ``bench/channels.py`` (a timing control is a bench,
never a test: it would gate CI on chance). Real sandboxed processes through a real tournament.

The bounds are built so a false failure has a chance below 1 in 10,000 (arithmetic at
:func:`assert_chance`)."""

from __future__ import annotations

import json
import math
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_subuid import SYSTEM_PY, Organiser

from conftest import ROOT, tournament_yaml
from referee.bots.probing import capabilities
from referee.records.record import read_record
from referee.tournament.config import load_config
from referee.tournament.run import run

CAPS = capabilities()
pytestmark = [
    pytest.mark.process,
    pytest.mark.deep,
    pytest.mark.skipif(not CAPS.works, reason=f"no sandbox here: {CAPS.summary()}"),
]
HOSTILE = ROOT / "tests" / "bots" / "hostile" / "caches.py"
INSTANT = ROOT / "bench" / "instant_bot.py"
CHANNELS = ("dentry", "page")


def cache_field(root: Path, python: str) -> Path:
    """The cache bot (``attacker``) against an instant bot (``victim``), each in a folder of
    its own under ``root`` run by ``python``: one duplicate set of two seatings; the
    configuration's path."""
    for name, files in (("attacker", (HOSTILE, INSTANT)), ("victim", (INSTANT,))):
        (root / name).mkdir(mode=0o755)
        for f in files:
            shutil.copy(f, root / name / f.name)
    return tournament_yaml(root, {
        "attacker": {"command": f"{python} caches.py", "workdir": "attacker"},
        "victim": {"command": f"{python} instant_bot.py", "workdir": "victim"}},
        players=2, target=300, output="out", concurrency=1)


@pytest.fixture
def config() -> Iterator[Path]:
    """The cache bot against an instant bot: one duplicate set of two seatings."""
    root = Path(tempfile.mkdtemp(prefix="ct-caches-", dir="/var/tmp"))
    root.chmod(0o755)
    yield cache_field(root, sys.executable)
    shutil.rmtree(root, ignore_errors=True)


def read_back(out: Path) -> dict[str, list[tuple[int, int, bool]]]:
    """Per channel, each hand where the bot named cards (in either seating: on a tmpfs every
    page reads as cached, and the bot may think it finds marks in the first): (cards named, of
    them held by the opponent, named exactly the opponent's hand)."""
    lines = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    order = [line["id"] for line in lines if "players" in line]  # as they were played
    assert len(order) == 2, order
    found: dict[str, list[tuple[int, int, bool]]] = {name: [] for name in CHANNELS}
    for match in order:
        record = read_record(out / "games" / f"{match}.json.gz")
        seat = record["players"].index("attacker")
        log = (out / "logs" / match / f"{seat}-attacker.stderr").read_text().splitlines()
        for line in log:
            words = line.split()
            if not words or words[0] != "KNEW":
                continue
            k, named = int(words[3].rstrip(":")), set(line.split(":", 1)[1].split())
            held = set(record["hands"][k - 1]["hands"][1 - seat])
            found[words[1]].append((len(named), len(named & held), named == held))
    return found


def assert_chance(found: dict[str, list[tuple[int, int, bool]]]) -> None:
    """What the bot named is what chance names, with a false alarm below 1e-4 per channel.

    - Exact hands: the opponent's 12 cards lie among at least 24 the bot has not seen (its own
      12 and the layout's 4 of 52 are known), so with nothing carried over any named set is
      the hand with chance at most 1/C(24,12) = 3.7e-7; over at most 80 hands, below 3e-5.
    - Cards named that the opponent holds: given its named set of m cards, how many it holds is
      hypergeometric with mean m * 12/U, U >= 24 unseen, so at most m/2; the hands are
      independent (the deals are). Hoeffding over the hands (each term in a range of m):
      P(sum(right) - sum(m)/2 >= t) <= exp(-2 t^2 / sum(m^2)); t = sqrt(ln(1e4) sum(m^2) / 2)
      makes it 1e-4.
    """
    for channel, named in found.items():
        assert len(named) <= 80
        assert not any(exact for _m, _r, exact in named), (channel, named)
        cards = sum(m for m, _r, _e in named)
        right = sum(r for _m, r, _e in named)
        slack = math.sqrt(math.log(1e4) * sum(m * m for m, _r, _e in named) / 2)
        assert right <= cards / 2 + slack, (channel, right, cards, slack)


def hands(out: Path) -> int:
    return sum(len(read_record(p)["hands"]) for p in (out / "games").glob("*.json.gz"))


def test_the_later_seating_finds_no_mark_in_the_kernels_caches(config: Path) -> None:
    result = run(load_config(config))
    assert result.finished
    out = config.parent / "out"
    assert hands(out) // 2 >= 2
    assert_chance(read_back(out))


def test_a_referee_that_is_not_root_leaves_no_mark_either() -> None:
    organiser = Organiser()
    try:
        config = cache_field(organiser.root, SYSTEM_PY)
        organiser.own()
        done = organiser.cli("tournament", str(config))
        shown = done.stdout + done.stderr
        assert done.returncode == 0, shown
        out = organiser.root / "out"
        assert hands(out) // 2 >= 2
        assert_chance(read_back(out))
        assert "every file the bots see shown from memory" in " ".join(shown.split()), shown
        # the bot looked in every hand of both seatings, through both channels
        logs = "".join(p.read_text() for p in (out / "logs").glob("*/*-attacker.stderr"))
        for channel in CHANNELS:
            assert sum(f" {channel} hand " in line for line in logs.splitlines()) == hands(out)
    finally:
        organiser.close()
