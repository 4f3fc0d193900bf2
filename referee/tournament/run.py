"""Tournaments: running a schedule concurrently, resuming.

The YAML configuration lives in :mod:`referee.tournament.config` (re-exported here):
:func:`load_config` reads and checks it (``tournament.md``) before any bot starts, every mistake
a :class:`ConfigError` with one line naming the file, the key and the problem.
:func:`run` plays the schedule's missing matches through a :class:`~referee.runners.local.Runner`
(where matches run: this process, worker processes, a Dask cluster; one fresh set of bot
processes per match) under its own policy (:func:`~referee.tournament.dispatch.play_jobs`: which
match may start, the order results are saved in, what an error means). Each game record is
written where its match ran when the output folder is shared (this machine's worker processes),
and only a small result line comes back: the coordinator rates it, appends it to
``results.jsonl`` (synced once a batch, before the next batch is saved) and updates the
display, so an interrupted tournament resumes where it stopped and ends with the standings of
an uninterrupted run. The output folder's layout is :mod:`referee.tournament.output`'s.

>>> config = load_config(Path("tournaments/demo.yaml"))  # doctest: +SKIP
>>> outcome = run(config)  # doctest: +SKIP
>>> outcome.standings[0].name  # doctest: +SKIP
'mc'
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from pathlib import Path

from referee.bots.limits import SandboxMode
from referee.bots.probing import capabilities
from referee.match.job import DealSecret
from referee.runners.local import CancelSignal, Placement, Runner
from referee.tournament.config import Config, ConfigError, load_config
from referee.tournament.dispatch import TournamentError, play_jobs, stop_on_sigint
from referee.tournament.entrants import check_entrant_folders, hidden_paths, refused_entrant
from referee.tournament.output import (
    MARKER,
    SECRET,
    Journal,
    prepare_output,
    read_deal_secret,
    write_standings,
)
from referee.tournament.private import make_private
from referee.tournament.sealing import Seals, prepare
from referee.tournament.session import (
    BIG_PLAN,
    Outcome,
    Pages,
    Reporter,
    TournamentSession,
    plan_advice,
)
from referee.tournament.startup import start, uid_isolation

__all__ = ["BIG_PLAN", "MARKER", "SECRET", "Config", "ConfigError", "Journal", "Outcome", "Pages",
           "Reporter", "Runner", "TournamentError", "TournamentSession", "check_entrant_folders",
           "load_config", "plan_advice", "play_jobs", "prepare_output", "read_deal_secret", "run",
           "stop_on_sigint", "write_standings"]

SET_APART = "the seatings of a set never at once"
"""What every run does (:func:`~referee.tournament.dispatch.play_jobs`), for the header."""
LONG_RUN_S = 86_400.0
"""Projected time left past which the tournament warns (once), at the rate measured."""
PACE_AFTER_S = 60.0
"""How long play goes before that projection is made."""


def sealed_hidden(config: Config, seals: Seals) -> dict[str, tuple[Path, ...]]:
    """What each sealed entrant's sandbox must show empty: the output folder, the
    configuration and other entrants' folders where they lie inside its runtimes (its own
    folder's snapshot leaves them out already). From sorted real paths, as
    :func:`~referee.tournament.entrants.check_entrant_folders`.

    :raises ConfigError: for an entrant inside the output folder or the configuration.
    """
    names = seals.names
    folders = [seals.folder(n) for n in names]
    with refused_entrant(config, names):
        found = hidden_paths([seals.binds(n) for n in names],
                             protected=(config.output, config.path),
                             owned=[(f,) for f in folders])
    return {name: tuple(p for p in paths if not p.is_relative_to(folder))
            for name, folder, paths in zip(names, folders, found, strict=True)}


def run(config: Config, *, fresh: bool = False, deal_secret: DealSecret | bytes | None = None,
        reporter: Reporter | None = None, runner: Runner | None = None,
        stop: CancelSignal | None = None,
        pages: Callable[[Path], Pages] | None = None) -> Outcome:
    """Plays what is missing of the tournament, round by round (each round planned from the
    results of the rounds before it, see :mod:`referee.tournament.formats`), and, once it ends,
    writes the standings.
    Finished matches are found by match id in the journal, so a resumed run plans the same
    rounds and plays only what is missing. The deals are keyed by the output folder's
    secret (``deal_secret`` for a new folder, else a new one: see :func:`prepare_output`).

    Matches run through ``runner`` (default: :func:`~referee.runners.local.local_runner` of the
    configuration's concurrency: this process for 1, worker processes for more), which is
    closed before returning. ``stop`` ends the run early (Ctrl-C): no new match starts and the
    running ones are abandoned. ``pages`` makes, from the output folder, what keeps pages
    current as matches are saved (the CLI passes :class:`referee.web.report.Refresher`): its
    ``match_done`` gets each match's journal line (its ``record`` names the record's file, which
    stays where the match wrote it).

    :raises ConfigError: if the output folder cannot be used (see :func:`prepare_output`), no
        sandbox works here (unless the configuration says ``sandbox: none``; on a cluster each
        worker checks its own), or an entrant lives inside the output folder or the
        configuration, or in a folder its bots' users cannot read (:func:`check_entrant_folders`).
    :raises TournamentError: if a bot command cannot be started, where matches run is gone,
        or an entrant's snapshot cannot be made while its folder is as it was (a full
        disk); a folder changed since the start leaves its entrant out instead.
    """
    reporter = reporter or Reporter()
    stop = stop or threading.Event()
    with contextlib.ExitStack() as stack:
        machine = start(config, stack, runner=runner, warn=reporter.warn)
        where, remote = machine.runner, machine.remote
        hidden: dict[str, tuple[Path, ...]] = {}
        if remote and machine.mode is not SandboxMode.NONE:  # each worker checks its own; no
            hidden = check_entrant_folders(config)              # snapshot travels (yet)
        seals = None
        if machine.store is not None:
            # the folders checked now; their snapshots taken beside play, in the order it
            # needs them (the session starts them), closed before the store goes
            seals = prepare(config, machine.store, reporter.warn)
            stack.callback(seals.close)
            hidden = sealed_hidden(config, seals)
        secret = prepare_output(config, fresh=fresh, deal_secret=deal_secret)
        make_private(config.output)
        session = TournamentSession(config, secret, runner=where, stop=stop, reporter=reporter,
                                    seals=seals, hidden=hidden, remote=remote)
        session.resume()
        sandbox = _sandbox_header(session.mode, where.placement, remote=remote, seals=seals)
        return session.play(sandbox=sandbox,
                            pages=pages(config.output) if pages is not None else None,
                            pace=_Pace(reporter, config.total()).tick)


def _sandbox_header(mode: SandboxMode, where: Placement, *, remote: bool,
                    seals: Seals | None) -> str:
    """What the header says of the sandbox and of where matches run."""
    if remote:  # the machine that spawns the bots checks it
        sandbox = f"{mode} (resolved on each worker)"
    else:
        sandbox = f"bwrap ({capabilities().summary()})" if mode is SandboxMode.BWRAP else "none"
    if seals is not None:
        sandbox += f"; {uid_isolation()}; {seals.summary}"
    return f"{sandbox}; {isolation(where, sandboxed=mode is not SandboxMode.NONE)}"


def isolation(where: Placement, *, sandboxed: bool) -> str:
    """What keeps a duplicate set's seatings apart, in the header's words: never at once
    (:func:`~referee.tournament.dispatch.play_jobs`), and where the matches run."""
    said = SET_APART
    if where.hosts is not None:  # a cluster
        spread = (f"each on another host where the cluster has enough ({where.hosts} now)"
                  if where.spread else "on any worker")
        return (f"{said}, {spread}, and the Dask client in a process of its own, as "
                f"{where.client}")
    if where.cpus:
        said += f", each match on one CPU (affinity: {', '.join(map(str, where.cpus))})"
    return said + (", every file the bots see shown from memory" if sandboxed else "")


class _Pace:
    """Warns once, after :data:`PACE_AFTER_S` of play, when the rate measured says the
    matches left take more than :data:`LONG_RUN_S`."""

    def __init__(self, reporter: Reporter, total: int | None) -> None:
        self.reporter, self.total = reporter, total
        self.t0 = time.monotonic()
        self.told = total is None

    def tick(self, done: int, played: int) -> None:
        if self.told or self.total is None:
            return
        elapsed = time.monotonic() - self.t0
        if elapsed < PACE_AFTER_S:
            return
        self.told = True
        rate = played / elapsed
        left = (self.total - done) / rate if rate else float("inf")
        if left > LONG_RUN_S:
            self.reporter.warn(
                f"at {rate:.1f} matches/s the {self.total - done:,} matches left take about "
                f"{left / 86_400:.1f} days; Ctrl-C keeps what is played, and the same command "
                f"with a smaller plan (--max-matches, a ladder, players: 2, seatings: rotate) "
                f"goes on")
