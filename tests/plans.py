"""A tournament's whole plan, for the tests that compare what was played with it: every match
of a round robin, or of a gauntlet without ``stop``, planned in advance."""

from __future__ import annotations

from referee.match.job import DealSecret
from referee.match.spec import MatchSpec
from referee.tournament.config import Config
from referee.tournament.formats import State, plan_round


def planned(config: Config, *, secret: DealSecret | bytes) -> list[MatchSpec]:
    """Every match of ``config``'s tournament, in rating order, its deals keyed by ``secret``.

    :raises ValueError: for a format planned round by round from the results (a ladder, or
        ``stop``).
    """
    if config.format.seeded_by_results or config.stop is not None:
        raise ValueError(f"a {config.format.name}{' with stop' if config.stop else ''} is "
                         f"planned round by round from the results")
    fmt, n = config.tournament_format(), len(config.entrants)
    specs: list[MatchSpec] = []
    state = State.initial(n)
    while more := plan_round(fmt, state, players=config.players, seatings=config.seatings,
                             seed=config.seed, secret=DealSecret.of(secret).key,
                             rounds=config.rounds, max_matches=config.max_matches):
        specs += more
        state = State(n, state.round + 1, len(specs), state.order, state.mu, state.sigma)
    return specs
