"""The ``ct-referee`` command line: one click group, one module per command."""

from __future__ import annotations

from typing import Any

import click


class _Group(click.Group):
    """The command group, with one safety net: a file that cannot be read or written is a
    one-line error, never a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except OSError as e:
            where = f"{e.filename}: " if e.filename else ""
            raise click.ClickException(f"{where}{e.strerror or e}") from None


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="ct-referee")
def main() -> None:
    """Referee and tournament runner for Chinese Ten bots."""


def _register() -> None:
    """Adds each command module's command to the group."""
    from referee.cli.bot import bot
    from referee.cli.check import check
    from referee.cli.play import play
    from referee.cli.replay import replay
    from referee.cli.report import report
    from referee.cli.sandbox import sandbox
    from referee.cli.tournament import tournament

    for command in (bot, check, play, replay, report, sandbox, tournament):
        main.add_command(command)


_register()
