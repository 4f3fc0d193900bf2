"""What the machine means for a league (the runner, the sandbox, the store of snapshots, the
output folder kept private), then a :class:`~referee.league.season.League` plays it:
:func:`run_league`, as :func:`referee.tournament.run.run` does for a tournament."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable

from referee.league.config import LeagueConfig
from referee.league.journal import prepare
from referee.league.season import League
from referee.league.submissions import Admissions
from referee.runners.local import Runner
from referee.tournament.private import make_private
from referee.tournament.session import Reporter
from referee.tournament.startup import start

__all__ = ["run_league"]


def run_league(config: LeagueConfig, *, fresh: bool = False, stop: threading.Event,
               reporter: Reporter | None = None, runner: Runner | None = None,
               started: Callable[[League], None] = lambda league: None) -> League:
    """Plays the league until ``stop`` is set or its ``max_matches``; returns it (its table
    and counts). The machine is worked out as a tournament's
    (:func:`referee.tournament.startup.start`: the stores a ``kill -9`` left cleaned first);
    ``reporter`` is told what happens (the tournament's hooks). ``started``: called once the
    journal is read, before play. ``runner``: where the matches run (default: this machine's
    processes); on a cluster's (a ``remote`` runner) each version is still admitted here
    (snapshot, pre-flight, conformance, in this machine's sandbox) and then plays on the
    workers from its folder as it is (:data:`~referee.league.season.LEAGUE_CLUSTER`).

    :raises ConfigError: see :func:`~referee.tournament.startup.start` and
        :func:`~referee.league.journal.prepare`.
    """
    reporter = reporter or Reporter()
    with contextlib.ExitStack() as stack:
        machine = start(config, stack, runner=runner, warn=reporter.warn, admits_here=True)
        where, mode = machine.runner, machine.mode
        secret = prepare(config, fresh=fresh)
        make_private(config.output)
        league = League(config, secret, runner=where, stop=stop, mode=mode, reporter=reporter,
                        weaker=() if machine.remote else machine.weaker)  # a worker's: its own
        league.resume()
        assert machine.store is not None  # a league admits here: it has one
        store = machine.store
        versions = league.versions
        admissions = Admissions(config, store=store, mode=mode, logs=league.folder.preflight,
                                known=versions.known, versions=versions.versions,
                                refused=versions.refusals(), remote=where.remote)
        started(league)
        league.play(admissions)
        return league
