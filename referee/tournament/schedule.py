"""The schedule of a tournament: groups, seatings, match ids and deal labels.

Pure code, no I/O. A round robin pits every group of ``players`` entrants (in configuration
order) against each other; each group plays every seating (``all``: every seat order) or only the
rotations (``rotate``) of the *same* deals, so the luck of the cards cancels out (duplicate play).
``rounds`` repeats the whole thing with new deals. Deals derive from a secret key and the seed
(:meth:`referee.game.rules.Deal.from_key`): the seed alone does not tell them.

>>> plan = schedule(4, players=3, rounds=1, seatings="all", seed=1, secret=bytes(32))
>>> len(plan), plan[0].id, plan[0].seats, plan[1].seats
(24, 'r1-g001-s01', (0, 1, 2), (0, 2, 1))
>>> plan[0].deal(1) == plan[5].deal(1) != plan[6].deal(1)
True
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

from referee.match.spec import MatchSpec
from referee.records.match_id import MatchId

SEATINGS = ("all", "rotate")


def groups(entrants: int, players: int) -> list[tuple[int, ...]]:
    """Every group of ``players`` entrant indices, in lexicographic order."""
    return list(itertools.combinations(range(entrants), players))


def seatings(group: Sequence[int], kind: str) -> list[tuple[int, ...]]:
    """The seat orders a group plays: every permutation (``all``) or the rotations
    (``rotate``); the first is always the group's own order.

    >>> seatings((0, 1, 2), "rotate")
    [(0, 1, 2), (1, 2, 0), (2, 0, 1)]
    """
    if kind == "all":
        return list(itertools.permutations(group))
    if kind == "rotate":
        g = tuple(group)
        return [g[i:] + g[:i] for i in range(len(g))]
    raise ValueError(f"unknown seatings {kind!r} (use {' or '.join(SEATINGS)})")


def size(entrants: int, players: int, rounds: int, kind: str) -> int:
    """Number of matches: C(entrants, players) groups x seatings x rounds."""
    per_group = math.factorial(players) if kind == "all" else players
    return math.comb(entrants, players) * per_group * rounds


def schedule(
    entrants: int, *, players: int, rounds: int, seatings: str, seed: int | str, secret: bytes
) -> list[MatchSpec]:
    """The whole round robin, in play (and rating) order: round, then group, then seating.
    ``secret`` keys the deals (see :meth:`MatchSpec.deal`).

    :raises ValueError: for fewer entrants than players, or an unknown ``seatings``.
    """
    if not 2 <= players <= 4:
        raise ValueError(f"players must be 2, 3 or 4, not {players}")
    if entrants < players:
        raise ValueError(f"{entrants} entrants cannot fill a table of {players}")
    if rounds < 1:
        raise ValueError(f"rounds must be at least 1, not {rounds}")
    all_groups = groups(entrants, players)
    kind = seatings
    per_group = len(_seatings(all_groups[0], kind))
    widths = MatchId.widths_for(rounds, len(all_groups), per_group)
    plan: list[MatchSpec] = []
    for r in range(1, rounds + 1):
        for g, group in enumerate(all_groups, 1):
            prefix = f"{seed}:{r}:{g}"
            for s, seats in enumerate(_seatings(group, kind), 1):
                match_id = str(MatchId(r, g, s, widths))
                plan.append(MatchSpec(match_id, len(plan), r, g, s, seats, prefix, secret))
    return plan


_seatings = seatings
