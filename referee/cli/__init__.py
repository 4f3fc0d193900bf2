"""The ``ct-referee`` command line: one click group, one module per command."""

from __future__ import annotations

import click


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="ct-referee")
def main() -> None:
    """Referee and tournament runner for Chinese Ten bots."""


def _register() -> None:
    """Adds each command module's command to the group."""
    from referee.cli.play import play
    from referee.cli.replay import replay

    main.add_command(play)
    from referee.cli.check import check
    main.add_command(check)
    main.add_command(replay)
    from referee.cli.tournament import tournament
    main.add_command(tournament)


_register()
