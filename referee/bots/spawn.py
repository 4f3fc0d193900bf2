"""How a bot's process starts: a :class:`BotCommand` is the factory a
:class:`~referee.bots.bot.Bot` calls for its transport when it starts. It holds the command,
its folder and stderr file, the :class:`~referee.bots.process.Launcher` (sandbox and limits),
the folders the sandbox shows empty, the spawner, and a sealed entrant's snapshot, of which
each start makes a copy of its own (:mod:`referee.bots.snapshot`).

>>> with Bot(BotCommand.of(["./greedy-bot"], workdir=Path("bots"))) as bot:  # doctest: +SKIP
...     bot.start(startup_ms=5000)
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from referee.bots.process import (
    Launcher,
    Process,
    Spawner,
    SpawnError,
    split_command,
    start_process,
)
from referee.bots.snapshot import Sealed

UNSANDBOXED = Launcher()
"""The default launcher: no sandbox, no memory limit, files up to 64 MiB."""


@dataclass(frozen=True)
class BotCommand:
    """A bot command and how its process starts (:meth:`of` makes one from a command as given).

    :param argv: the command, as an argument list.
    :param workdir: the folder it runs in (and its relative ``argv[0]`` is found in).
    :param stderr_path: where its stderr goes (parents created); ``None`` discards it.
    :param launcher: how its process starts: in the hardened sandbox or not, under which limits,
        how much stderr is kept; :meth:`referee.bots.process.Launcher.resolve` makes one from a
        mode and :class:`~referee.bots.limits.Limits`.
    :param hidden: folders inside the bot's own that the sandboxed bot sees empty.
    :param spawner: what forks the process (default: :func:`referee.bots.process.default_spawner`).
    :param sealed: a sealed entrant (:mod:`referee.bots.snapshot`): sandboxed, each process runs
        from a copy of its snapshot of its own, removed when the process stops.
    """

    argv: tuple[str, ...]
    workdir: Path
    stderr_path: Path | None = None
    launcher: Launcher = UNSANDBOXED
    hidden: tuple[Path, ...] = ()
    spawner: Spawner | None = None
    sealed: Sealed | None = None

    @classmethod
    def of(cls, command: str | Sequence[str], *, workdir: Path | None = None,
           stderr_path: Path | None = None, launcher: Launcher = UNSANDBOXED,
           hidden: Sequence[Path] = (), spawner: Spawner | None = None,
           sealed: Sealed | None = None) -> BotCommand:
        """``command``, a string (split like a shell would) or an argument list, run in
        ``workdir`` (default: the current folder); the rest as the class says."""
        return cls(tuple(split_command(command)), Path(workdir or os.getcwd()).absolute(),
                   stderr_path, launcher, tuple(hidden), spawner, sealed)

    @property
    def memory_mb(self) -> int:
        """The memory limit its process starts under, in MiB (0: none)."""
        return (self.launcher.policy or self.launcher.rlimits).memory_mb

    def __call__(self) -> Process:
        """Start its process, once more if it could not be started (fork ``EAGAIN``, say).

        :raises referee.bots.process.BotCommandError: if the command cannot be found or
            sandboxed.
        :raises referee.bots.process.SpawnError: if it could not be started, twice.
        """
        try:
            return self._start()
        except SpawnError:
            return self._start()

    def _start(self) -> Process:
        binds, sources = None, None
        if self.launcher.policy is not None and self.sealed is not None:
            # its snapshot, in memory, read-only: every match shows the same copy (no cache
            # of a tmpfs keeps a mark from one seating to the next: docs/security.md)
            binds, sources = self.sealed.binds, self.sealed.sources(self.sealed.snapshot.copy)
        return start_process(self.argv, workdir=self.workdir, launcher=self.launcher,
                             hidden=self.hidden, stderr_path=self.stderr_path,
                             spawner=self.spawner, binds=binds, sources=sources)

    def __str__(self) -> str:
        return shlex.join(self.argv)
