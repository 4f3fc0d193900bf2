"""What the machine means for a league (the runner, the sandbox, the store of snapshots, the
output folder kept private), then a :class:`~referee.league.season.League` plays it:
:func:`run_league`, as :func:`referee.tournament.run.run` does for a tournament."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable

from referee.bots.limits import SandboxMode
from referee.bots.process import bwrap_available
from referee.bots.sandbox import Privilege, capabilities
from referee.bots.snapshot import Store
from referee.league.config import LeagueConfig
from referee.league.journal import prepare
from referee.league.season import League
from referee.league.submissions import Admissions
from referee.runners.local import Runner, auto_affinity, local_runner
from referee.tournament.config import ConfigError
from referee.tournament.private import make_private, private_files

__all__ = ["run_league"]


def _check_sandbox(config: LeagueConfig) -> SandboxMode:
    """The sandbox mode the league's bots run under.

    :raises ConfigError: where no sandbox works (unless ``sandbox: none``), or where each bot
        cannot have a uid of its own (unless ``bot_uids: shared``).
    """
    mode = config.sandbox.strict()
    if mode is SandboxMode.NONE:
        return mode
    if not bwrap_available():
        raise ConfigError(f"{config.path}: sandbox: no working sandbox here "
                          f"({capabilities().summary()}): see ct-referee sandbox, or set "
                          f"sandbox: none")
    if os.geteuid() != 0 and config.bot_uids != "shared":
        check = next((c for c in capabilities().checks if c.name == Privilege.SUBUID), None)
        if check is None or not check.ok:
            raise ConfigError(f"{config.path}: the referee is not root and cannot give each "
                              f"bot a subordinate uid: run it as root, give it subordinate "
                              f"uids, or accept a shared uid with bot_uids: shared")
    return mode


def run_league(config: LeagueConfig, *, fresh: bool = False, stop: threading.Event,
               say: Callable[[str], None], runner: Runner | None = None,
               started: Callable[[League], None] = lambda league: None) -> League:
    """Plays the league until ``stop`` is set or its ``max_matches``; returns it (its table
    and counts). ``started``: called once the journal is read, before play. ``runner``: where
    the matches run (default: this machine's processes); on a cluster's (a ``remote`` runner)
    each version is still admitted here (snapshot, pre-flight, conformance, in this machine's
    sandbox) and then plays on the workers from its folder as it is, as a tournament's
    entrants do there (:data:`~referee.league.season.CLUSTER_WEAKER`).

    :raises ConfigError: see :func:`_check_sandbox` and :func:`~referee.league.journal.prepare`.
    """
    mode = _check_sandbox(config)
    affinity = config.affinity if config.affinity is not None else auto_affinity(
        config.concurrency, fair=mode is SandboxMode.NONE or capabilities().cgroup_ok("cpu"))
    with contextlib.ExitStack() as stack:
        stack.enter_context(private_files())
        where = stack.enter_context(contextlib.closing(
            runner or local_runner(config.concurrency, affinity=affinity)))
        where.start()
        secret = prepare(config, fresh=fresh)
        make_private(config.output)
        where.sandboxed = mode is not SandboxMode.NONE
        store = stack.enter_context(Store())
        league = League(config, secret, runner=where, stop=stop, mode=mode, say=say)
        if mode is not SandboxMode.NONE and not where.remote:  # a worker's are its own
            league.weaker = capabilities().weaker()
        league.resume()
        admissions = Admissions(config, store=store, mode=mode,
                                logs=league.folder.preflight, known=league.known,
                                versions=league.versions, remote=where.remote)
        started(league)
        league.play(admissions)
        return league
