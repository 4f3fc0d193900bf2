"""The options several commands share, defined once: the clock (``--move-ms``,
``--startup-ms``), the sandbox (``--sandbox``, resolved by :func:`resolve_mode`), the resource
limits (``--memory-mb`` and the rest) and the cluster (``--scheduler``, ``--scheduler-file``,
``--tls``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from referee.bots.limits import Limits, SandboxMode
from referee.bots.probing import capabilities
from referee.bots.process import resolve_sandbox

LIMITS = Limits()
"""The defaults of the options."""

F = TypeVar("F", bound=Callable[..., Any])


def _apply(f: F, options: list[Callable[[F], F]]) -> F:
    for option in reversed(options):
        f = option(f)
    return f


def clock_options(who: str = "the bot", note: str = "") -> Callable[[F], F]:
    """The ``--move-ms`` and ``--startup-ms`` options; ``note`` ends their help (``with --bot``,
    say)."""
    end = f" ({note})." if note else "."

    def decorate(f: F) -> F:
        return _apply(f, [
            click.option("--move-ms", type=click.IntRange(min=1), default=LIMITS.move_ms,
                         show_default=True, help=f"Time per answer{end}"),
            click.option("--startup-ms", type=click.IntRange(min=1), default=LIMITS.startup_ms,
                         show_default=True, help=f"Time until {who}'s ready{end}"),
        ])
    return decorate


def sandbox_option(text: str) -> Callable[[F], F]:
    """The ``--sandbox`` option (``auto``, ``bwrap``, ``none``; default ``auto``), given to the
    command as a :class:`~referee.bots.limits.SandboxMode`; ``text`` is its help."""
    return click.option("--sandbox", type=click.Choice([m.value for m in SandboxMode]),
                        default=SandboxMode.AUTO.value, show_default=True, help=text,
                        callback=lambda _ctx, _param, value: SandboxMode(value))


def limit_options(f: F) -> F:
    """The ``--memory-mb``, ``--pids``, ``--cpus``, ``--tmp-mb`` and ``--file-mb`` options."""
    return _apply(f, [
        click.option("--memory-mb", type=click.IntRange(min=0), default=LIMITS.memory_mb,
                     show_default=True, help="Memory per bot, /tmp and /dev/shm included "
                     "(0: none)."),
        click.option("--pids", type=click.IntRange(min=0), default=LIMITS.pids,
                     show_default=True, help="Processes and threads per sandboxed bot."),
        click.option("--cpus", type=click.FloatRange(min=0), default=LIMITS.cpus,
                     show_default=True, help="CPU cores per sandboxed bot (0: no limit)."),
        click.option("--tmp-mb", type=click.IntRange(min=0), default=LIMITS.tmp_mb,
                     show_default=True, help="Size of a sandboxed bot's /tmp and /dev/shm."),
        click.option("--file-mb", type=click.IntRange(min=0), default=LIMITS.file_mb,
                     show_default=True, help="Largest file a bot may write (0: no limit)."),
    ])


def resolve_mode(sandbox: SandboxMode, *, who: str = "the bot runs") -> SandboxMode:
    """``sandbox`` as it works here (``bwrap`` or ``none``); ``auto`` without a working sandbox
    prints a warning line saying that ``who`` unsandboxed.

    :raises referee.bots.process.BotCommandError: for ``bwrap`` where it does not work.
    """
    mode = resolve_sandbox(sandbox, warn=False)
    if sandbox is SandboxMode.AUTO and mode is SandboxMode.NONE:
        click.echo(f"warning: no working sandbox here, {who} UNSANDBOXED "
                   f"({capabilities().summary()}; see ct-referee sandbox)", err=True)
    return mode


def sandbox_words(mode: SandboxMode) -> str:
    """``sandbox none``, or ``sandbox bwrap (`` the protections in force ``)``: for a
    command's first line."""
    if mode is SandboxMode.BWRAP:
        return f"sandbox bwrap ({capabilities().summary()})"
    return f"sandbox {mode}"


def cluster_options(where: str) -> Callable[[F], F]:
    """The ``--scheduler``, ``--scheduler-file`` and ``--tls`` options of a command that may
    play its matches on a Dask cluster; ``where`` ends ``--scheduler``'s help (what stays on
    this machine)."""

    def decorate(f: F) -> F:
        return _apply(f, [
            click.option("--scheduler", metavar="ADDRESS",
                         help=f"Play every match as a task on the workers of this Dask "
                              f"scheduler (tcp://host:8786; needs ct-referee[distributed]; "
                              f"docs/cluster.md): {where}."),
            click.option("--scheduler-file", type=click.Path(dir_okay=False, path_type=Path),
                         help="As --scheduler, with the address in this file (dask scheduler "
                              "--scheduler-file FILE), checked to be the scheduler that wrote "
                              "it."),
            click.option("--tls", type=click.Path(file_okay=False, path_type=Path),
                         metavar="DIR",
                         help="Connect to a tls:// scheduler with the certificates in DIR "
                              "(made by ct-referee cluster-certs DIR): only machines with a "
                              "certificate of its authority are the cluster."),
        ])
    return decorate
