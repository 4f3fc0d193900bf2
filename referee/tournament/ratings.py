"""TrueSkill over match results in schedule order, and the standings table.

Pure code, no I/O. Every match is a free-for-all of its players, ranked by the record's ``ranks``
(equal totals share a rank; a bot that faulted already ranks below those that did not). Results
are fed to :class:`Standings` in schedule order, never in the order matches finish, so the
standings do not depend on concurrency or timing.

>>> table = Standings(["a", "b"])
>>> table.add(MatchResult(("a", "b"), (1010, 700), (1, 2), hands=5))
>>> [(s.rank, s.name, s.wins) for s in table.standings()]
[(1, 'a', 1), (2, 'b', 0)]
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from statistics import NormalDist
from typing import Any

import trueskill

from referee.game.faults import Fault


@dataclass(frozen=True)
class RatingConfig:
    """The TrueSkill environment: TrueSkill's defaults, except a 2 % draw probability."""

    mu: float = 25.0
    sigma: float = 25.0 / 3
    beta: float = 25.0 / 6
    tau: float = 25.0 / 300
    draw_probability: float = 0.02
    per: str = "set"
    """``set``: one TrueSkill update per duplicate set, the entrants ranked by their adjusted
    points over it (the evidence the verdicts read); ``match``: one per match, on its ranks."""

    def env(self) -> trueskill.TrueSkill:
        """A TrueSkill environment with these parameters."""
        return trueskill.TrueSkill(mu=self.mu, sigma=self.sigma, beta=self.beta, tau=self.tau,
                                   draw_probability=self.draw_probability)


@dataclass(frozen=True)
class MatchResult:
    """What the ranking needs of one finished match."""

    players: tuple[str, ...]
    """Entrant names by seat."""
    totals: tuple[int, ...]
    ranks: tuple[int, ...]
    """1 is best; equal totals share a rank; faulted seats rank below the others."""
    hands: int = 0
    """Hands played (for points per hand)."""
    faults: tuple[tuple[int, str], ...] = ()
    """``(seat, kind)`` of every fault."""
    luck: tuple[float, ...] = ()
    """The luck of the stock flips by seat over the match (empty: not known)."""

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> MatchResult:
        """From a ``results.jsonl`` line (or a game record: ``hands`` may be a list there).

        :raises KeyError, TypeError, ValueError: if a field is missing or malformed.
        """
        hands = data.get("hands", 0)
        result = cls(
            players=tuple(str(p) for p in data["players"]),
            totals=tuple(int(t) for t in data["totals"]),
            ranks=tuple(int(r) for r in data["ranks"]),
            hands=len(hands) if isinstance(hands, list) else int(hands),
            faults=tuple((int(f["seat"]), str(f["fault"])) for f in data.get("faults", ())),
        )
        if not len(result.players) == len(result.totals) == len(result.ranks):
            raise ValueError("players, totals and ranks differ in length")
        return result


@dataclass(frozen=True)
class Standing:
    """One row of the standings table."""

    rank: int
    name: str
    mu: float
    sigma: float
    score: float
    """The conservative estimate ``mu - 3 sigma``; the table is sorted by it."""
    matches: int
    wins: int
    """Matches finished at rank 1, shared first places included."""
    mean_rank: float | None
    points_per_hand: float | None
    adjusted_per_hand: float | None
    """Points minus the luck of the stock flips, per hand (equal to ``points_per_hand`` when
    the records hold no luck)."""
    faults: dict[str, int]
    """Count by kind, every :class:`~referee.game.faults.Fault` present, in its order (and any other
    kind seen)."""
    p_above_next: float | None
    """Probability that this entrant is truly stronger than the next one down (``None`` for
    the last row)."""

    def to_json(self) -> dict[str, Any]:
        """As a JSON object (floats rounded to 6 places)."""
        row = asdict(self)
        for key, value in row.items():
            if isinstance(value, float):
                row[key] = round(value, 6)
        return row


@dataclass
class _Tally:
    rating: trueskill.Rating
    matches: int = 0
    wins: int = 0
    rank_sum: int = 0
    points: int = 0
    luck: float = 0.0
    hands: int = 0
    faults: dict[str, int] = field(default_factory=lambda: {f.value: 0 for f in Fault})


class Standings:
    """Ratings and counts of a tournament's entrants, fed one match at a time in schedule order.

    :param names: the entrants, in configuration order (which breaks exact ties in the table).
    """

    def __init__(self, names: Sequence[str], config: RatingConfig = RatingConfig()) -> None:
        self.names = list(names)
        self.config = config
        self.env = config.env()
        self.matches = 0
        self.updates = 0
        """Rating updates so far (per set: one a finished set; 0: every entrant at the prior)."""
        self._tally = {n: _Tally(self.env.create_rating()) for n in self.names}

    def add(self, result: MatchResult, *, rate: bool = True) -> None:
        """Counts one match and, with ``rate``, rates it on its ranks.

        :raises KeyError: for a player that is not an entrant.
        """
        tallies = [self._tally[name] for name in result.players]
        if len(set(result.players)) != len(result.players):
            raise ValueError(f"a player sits twice in {result.players}")
        if rate:
            self.rate(result.players, result.ranks)
        for seat, tally in enumerate(tallies):
            tally.luck += result.luck[seat] if len(result.luck) > seat else 0.0
            tally.matches += 1
            tally.wins += result.ranks[seat] == 1
            tally.rank_sum += result.ranks[seat]
            tally.points += result.totals[seat]
            tally.hands += result.hands
        for seat, kind in result.faults:
            faults = tallies[seat].faults
            faults[kind] = faults.get(kind, 0) + 1
        self.matches += 1

    def rate(self, names: Sequence[str], ranks: Sequence[int]) -> None:
        """One TrueSkill update of ``names`` finishing at ``ranks`` (1 is best, equal ranks
        share a place): a match, or a duplicate set ranked by adjusted points."""
        tallies = [self._tally[name] for name in names]
        rated = self.env.rate([(t.rating,) for t in tallies], ranks=[r - 1 for r in ranks])
        for tally, (rating,) in zip(tallies, rated, strict=True):
            tally.rating = rating
        self.updates += 1

    def standings(self) -> list[Standing]:
        """The table, best first: sorted by ``mu - 3 sigma``, then ``mu``, then entry order."""
        order = sorted(range(len(self.names)), key=lambda i: (
            -self._score(self.names[i]), -self._tally[self.names[i]].rating.mu, i))
        rows: list[Standing] = []
        for place, i in enumerate(order):
            name = self.names[i]
            t = self._tally[name]
            below = self._tally[self.names[order[place + 1]]] if place + 1 < len(order) else None
            rows.append(Standing(
                rank=place + 1, name=name, mu=t.rating.mu, sigma=t.rating.sigma,
                score=self._score(name), matches=t.matches, wins=t.wins,
                mean_rank=t.rank_sum / t.matches if t.matches else None,
                points_per_hand=t.points / t.hands if t.hands else None,
                adjusted_per_hand=(t.points - t.luck) / t.hands if t.hands else None,
                faults=dict(t.faults),
                p_above_next=p_stronger(t.rating, below.rating) if below else None,
            ))
        return rows

    def _score(self, name: str) -> float:
        r = self._tally[name].rating
        score: float = r.mu - 3 * r.sigma
        return score


def p_stronger(a: trueskill.Rating, b: trueskill.Rating) -> float:
    """P(a is truly stronger than b) = Phi((mu_a - mu_b) / sqrt(sigma_a^2 + sigma_b^2)).

    >>> round(p_stronger(trueskill.Rating(30, 3), trueskill.Rating(25, 4)), 3)
    0.841
    """
    spread = math.hypot(a.sigma, b.sigma)
    if spread == 0:
        return 0.5 if a.mu == b.mu else float(a.mu > b.mu)
    return NormalDist().cdf((a.mu - b.mu) / spread)


def standings(
    names: Sequence[str], results: Iterable[MatchResult], config: RatingConfig = RatingConfig()
) -> list[Standing]:
    """The table after rating ``results`` (in schedule order) from scratch."""
    table = Standings(names, config)
    for result in results:
        table.add(result)
    return table.standings()
