"""What the machine means for a run, worked out once for a tournament and a league alike
(:func:`start`): where the matches run (the runner, pinned to CPUs where that is fair), the
files kept private while it plays, the sandbox (one that works here, unless ``sandbox: none``;
the bot limits weaker here than a cgroup's named, and the fix), each bot's uid (a referee that
is not root needs subordinate uids, unless ``bot_uids: shared``) and the private store of
snapshots. A setting added here reaches both kinds of run: :func:`referee.tournament.run.run`
and :func:`referee.league.run.run_league` have no start-up of their own (``docs/security.md``).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from referee.bots.limits import SandboxMode
from referee.bots.policy import Privilege
from referee.bots.probing import capabilities
from referee.bots.process import bwrap_available
from referee.bots.snapshot import Store, clean_stale
from referee.match.job import MatchJob, MatchSpec
from referee.match.play import Entrant
from referee.records.record import RecordDict
from referee.runners.local import Runner, auto_affinity, local_runner
from referee.tournament.common import Common, ConfigError
from referee.tournament.output import OutputFolder
from referee.tournament.private import private_files

__all__ = ["CLUSTER_WEAKER", "Machine", "affinity", "check_bot_uids", "match_job", "start",
           "uid_isolation"]

CLUSTER_WEAKER = (
    "weaker than on one machine: the entrants are not sealed (each worker runs their folders "
    "as they are on its disk, a change made during the run included), and each bot's uid is as "
    "each worker can (docs/cluster.md)")
"""What a run on a cluster says of its sandbox, in place of the ``sealed:`` and uid lines of a
run on one machine (a tournament's header, a league's first lines and page)."""


@dataclass(frozen=True)
class Machine:
    """A run's machine, once :func:`start` worked it out."""

    runner: Runner
    """Where the matches run (started)."""
    mode: SandboxMode
    """The sandbox the bots run under (a run's ``auto`` requires one: ``bwrap``)."""
    remote: bool
    """The matches' bots start on other machines (a cluster's workers)."""
    store: Store | None
    """The private store of snapshots (``None``: no snapshot is taken on this machine)."""
    weaker: tuple[str, ...] = ()
    """The bot limits weaker on this machine than a cgroup's, a line each, and the fix
    (:meth:`referee.bots.probing.Capabilities.weaker`), where bots start here in a sandbox;
    none where every limit holds."""


def affinity(config: Common) -> bool:
    """The configuration's ``affinity``, ``auto`` resolved: pinned where the matches take every
    CPU, as many on each, and sharing a CPU is fair (bots not on move at the least CPU weight:
    a sandbox with a cpu controller; or no sandbox, whose bots are trusted anyway)."""
    if config.affinity is not None:
        return config.affinity
    return auto_affinity(config.concurrency, fair=config.sandbox is SandboxMode.NONE
                         or capabilities().cgroup_ok("cpu"))


def _subuid_check() -> tuple[bool, str]:
    """Whether bots can run as the organiser's subordinate uids here, and the ids or why not
    (with the fix)."""
    # the check is named after the mode it enables
    check = next((c for c in capabilities().checks if c.name == Privilege.SUBUID), None)
    if check is None:
        return False, "no subordinate uid check"
    return check.ok, check.detail if check.ok else f"{check.detail}: {check.enable}"


def check_bot_uids(config: Common) -> None:
    """Refuse to sandbox bots as the organiser's own uid (a referee not running as root and
    without subordinate uids, :mod:`referee.bots.subids`), unless the configuration accepts
    it (``bot_uids: shared``).

    :raises ConfigError: saying why and the fix.
    """
    uid = os.geteuid()
    if uid == 0 or config.bot_uids == "shared":
        return
    ok, detail = _subuid_check()
    if not ok:
        raise ConfigError(
            f"{config.path}: the referee runs as uid {uid}, not root, and cannot give each bot "
            f"a subordinate uid ({detail}); without one every bot would run as uid {uid}, read "
            f"what that uid may read outside its sandbox's view and share its process and "
            f"pipe limits with the other bots; run the referee as root, give it subordinate "
            f"uids, or accept a shared uid with bot_uids: shared")


def uid_isolation() -> str:
    """What a run's header says about the bots' uids."""
    if os.geteuid() == 0:
        return "each bot a uid of its own"
    ok, detail = _subuid_check()
    if ok:
        return f"each bot a subordinate uid of its own: {detail}"
    return f"every bot as uid {os.geteuid()} (bot_uids: shared)"


def start(config: Common, stack: contextlib.ExitStack, *, runner: Runner | None,
          warn: Callable[[str], None], admits_here: bool = False) -> Machine:
    """Works out the machine of a run, everything it opens closed by ``stack``: the runner
    (``runner``, else this machine's processes: :func:`~referee.runners.local.local_runner`),
    started with this process's files private (:func:`private_files`), the sandbox checked
    where bots start here (every match on one machine; ``admits_here``: a league admits its
    versions here whatever runs the matches), the bot limits weaker here than a cgroup's found
    (:attr:`Machine.weaker`: ``warn`` names them, but for a league playing here, which says
    them in its first lines and on its page), the bots' uids checked, the stores a referee
    killed without a word left removed (:func:`~referee.bots.snapshot.clean_stale`), the store
    opened.

    :raises ConfigError: no working sandbox here (unless ``sandbox: none``), or no uid of its
        own for each bot (:func:`check_bot_uids`).
    """
    where = stack.enter_context(contextlib.closing(runner or local_runner(
        config.concurrency, affinity=affinity(config))))
    stack.enter_context(private_files())  # records and logs 0600 while playing
    where.start()  # worker processes (their umask this one's now) start while the rest is
    # prepared: a new interpreter's imports
    remote = where.remote  # bots spawned on other machines
    mode = config.sandbox.strict()  # auto or bwrap: never a silent fall-back
    store = None
    weaker: tuple[str, ...] = ()
    if mode is not SandboxMode.NONE and (admits_here or not remote):
        if not bwrap_available():
            raise ConfigError(f"{config.path}: sandbox: no working sandbox here "
                              f"({capabilities().summary()}): see ct-referee sandbox, or "
                              f"set sandbox: none")
        weaker = capabilities().weaker()  # which, and the fix
        if weaker and (not admits_here or remote):  # a league playing here says them itself
            warn("weaker bot limits here: " + "; ".join(weaker) + " (see ct-referee sandbox)")
        check_bot_uids(config)
    if admits_here or (mode is not SandboxMode.NONE and not remote):
        stale = clean_stale()
        if stale:
            warn(f"removed {len(stale)} store(s) of snapshots a referee killed without a word "
                 f"left behind ({', '.join(str(p) for p in stale[:3])})")
        store = stack.enter_context(Store())
    return Machine(where, mode, remote, store, weaker)


def match_job(config: Common, spec: MatchSpec, seats: tuple[Entrant, ...], mode: SandboxMode,
              folder: OutputFolder, *, snapshots: tuple[str | None, ...] | None = None,
              shared: tuple[Path, str] | None = None,
              after: Callable[[RecordDict], None] | None = None) -> MatchJob:
    """The job that plays ``spec`` with ``seats`` in a run (a tournament's or a league's): the
    configuration's game, limits and sandbox ``mode``, the output folder hidden from every bot,
    the bots' logs and the record where ``folder`` says; ``snapshots``: each seat's snapshot
    digest; ``shared``, ``after``: see :class:`~referee.match.job.MatchJob`."""
    return MatchJob(spec, seats, config.variant, config.target, config.limits, mode,
                    config.name, logs_dir=folder.match_logs(spec.id), hidden=(config.output,),
                    record_path=folder.record(spec.id), shared=shared, snapshots=snapshots,
                    after=after)
