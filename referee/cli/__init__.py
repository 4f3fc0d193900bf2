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

    main.add_command(play)


_register()
