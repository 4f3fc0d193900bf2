"""What the machine means for a league (the runner, the sandbox, the store of snapshots, the
output folder kept private), then a :class:`~referee.league.season.League` plays it:
:func:`run_league`, as :func:`referee.tournament.run.run` does for a tournament."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from pathlib import Path

import referee
from referee.bots.sandbox import system_view
from referee.bots.snapshot import Store
from referee.league.config import LeagueConfig
from referee.league.journal import prepare
from referee.league.season import League
from referee.league.submissions import Admissions
from referee.runners.local import Runner
from referee.tournament.private import make_private
from referee.tournament.startup import start

__all__ = ["run_league"]


def shown(config: LeagueConfig) -> tuple[Path, ...]:
    """What every version's sandbox shows read-only at its host path, as far as it is known
    before any is admitted: the system folders, the referee package and ``shared``."""
    return (*system_view(), Path(referee.__file__).resolve().parent, *config.shared)


def run_league(config: LeagueConfig, *, fresh: bool = False, stop: threading.Event,
               say: Callable[[str], None], runner: Runner | None = None,
               started: Callable[[League], None] = lambda league: None) -> League:
    """Plays the league until ``stop`` is set or its ``max_matches``; returns it (its table
    and counts). The machine is worked out as a tournament's
    (:func:`referee.tournament.startup.start`). ``started``: called once the journal is read,
    before play. ``runner``: where the matches run (default: this machine's processes); on a
    cluster's (a ``remote`` runner) each version is still admitted here (snapshot, pre-flight,
    conformance, in this machine's sandbox) and then plays on the workers from its folder as
    it is, as a tournament's entrants do there
    (:data:`~referee.league.season.CLUSTER_WEAKER`).

    :raises ConfigError: see :func:`~referee.tournament.startup.start` and
        :func:`~referee.league.journal.prepare`.
    """
    with contextlib.ExitStack() as stack:
        machine = start(config, stack, runner=runner, warn=say, admits_here=True)
        where, mode = machine.runner, machine.mode
        secret = prepare(config, fresh=fresh)
        make_private(config.output)
        league = League(config, secret, runner=where, stop=stop, mode=mode, say=say)
        league.resume()
        if machine.store is not None and not machine.remote:
            machine.evict(stack, shown(config))
        store = machine.store or stack.enter_context(Store())
        admissions = Admissions(config, store=store, mode=mode,
                                logs=league.folder.preflight, known=league.known,
                                versions=league.versions, remote=where.remote)
        started(league)
        machine.evict_ready(say)
        league.play(admissions)
        return league
