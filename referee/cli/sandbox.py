"""``ct-referee sandbox``: which protections work here, and the hostile probes."""

from __future__ import annotations

import os
import sys

import click

from referee.bots.cgroups import find_layout
from referee.bots.delegation import DelegationError, delegate
from referee.bots.policy import SandboxPolicy
from referee.bots.probing import capabilities
from referee.cli.options import limit_options


def probe_summary(doc: str | None) -> str:
    """A probe's docstring's first paragraph on one line: a summary that wraps over two lines
    of source is shown whole, not cut mid-sentence.

    >>> probe_summary("Read pid 1's command line (a root\\n    bwrap's binds).\\n\\n    Details.")
    "Read pid 1's command line (a root bwrap's binds)."
    """
    return " ".join((doc or "").strip().split("\n\n")[0].split())


@click.command()
@click.option("--no-probes", is_flag=True, help="Only show the protections.")
@click.option("--ascii", "ascii_only", is_flag=True, help="OK/NO instead of ✓/✗.")
@click.option("--delegate", "user", metavar="USER",
              help="Run as root, once: hand USER the cgroups its referee limits bots with "
                   "(memory, processes, CPU), say what was done, and exit.")
@limit_options
def sandbox(no_probes: bool, ascii_only: bool, user: str | None, memory_mb: int, pids: int,
            cpus: float, tmp_mb: int, file_mb: int) -> None:
    """Show which bot protections work on this machine, then run hostile probes in the
    sandbox: every attack must be refused.

    Exit status: 0 when the sandbox works and every probe is refused, 1 otherwise.
    """
    from referee.bots.probes.attacks import ATTACKS
    from referee.bots.probes.world import World, run_attack

    if user is not None:
        _delegate(user)
        return
    yes, no = ("OK", "NO") if ascii_only else ("✓", "✗")
    caps = capabilities()
    for check in caps.checks:
        hint = f" (to enable: {check.enable})" if not check.ok and check.enable else ""
        click.echo(f"{yes if check.ok else no} {check.name:15} {check.detail}{hint}")
    click.echo(f"in force: {caps.summary()}")
    weaker = caps.weaker()
    if weaker and caps.works:
        click.echo("weaker limits here:")
        for line in weaker:
            click.echo(f"  {line}")
    if not caps.works:
        click.echo("no working sandbox: tournaments refuse to start unless sandbox: none")
        sys.exit(1)
    if no_probes:
        return
    policy = SandboxPolicy(memory_mb=memory_mb or 512, pids=pids or 64, cpus=cpus,
                           tmp_mb=tmp_mb, file_mb=file_mb)
    world = World()
    failed = 0
    try:
        for name, attack in ATTACKS.items():
            outcome = run_attack(world, name, policy)
            failed += not outcome.refused
            doc = probe_summary(attack.__doc__)
            mark = yes if outcome.refused else no
            click.echo(f"{mark} {name:12} {doc} -> {outcome.detail}")
    finally:
        world.close()
    click.echo(f"{len(ATTACKS) - failed} of {len(ATTACKS)} attacks refused")
    sys.exit(1 if failed else 0)


def _delegate(user: str) -> None:
    """``--delegate USER``: :func:`referee.bots.delegation.delegate`, as root, on this
    machine's hierarchies."""
    if os.geteuid() != 0:
        raise click.ClickException(f"--delegate is run as root (as root: ct-referee sandbox "
                                   f"--delegate {user})")
    try:
        lines = delegate(user, find_layout())
    except DelegationError as err:
        raise click.ClickException(str(err)) from None
    if not lines:
        click.echo("no cgroup hierarchy with memory, pids, cpu or io here: nothing to delegate")
    for line in lines:
        click.echo(line)
