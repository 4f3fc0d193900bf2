"""The ``ct-referee`` command line: one click group, one module per command."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import click

from referee.protocol.escape import escape_controls

_WORDS = (("File ", "file "), ("Path ", "path "), ("Directory ", "directory "))


def error_line(error: click.ClickException) -> str:
    """A click error as one ``error:`` line in the referee's style (lowercase, no final stop;
    a usage mistake says where the help is)."""
    text = " ".join(error.format_message().split())
    text = text[:1].lower() + text[1:]
    for word, lower in _WORDS:
        text = text.replace(f": {word}", f": {lower}")
    text = text.removesuffix(".")
    if isinstance(error, click.UsageError) and error.ctx is not None:
        text += f" (see {error.ctx.command_path} --help)"
    return f"error: {escape_controls(text)}"


class _Group(click.Group):
    """The command group, with two safety nets: every error is one ``error:`` line (click's
    usage errors included), and a file that cannot be read or written is such a line, never a
    traceback."""

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None,
             complete_var: str | None = None, standalone_mode: bool = True,
             **extra: Any) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        try:
            result = super().main(args, prog_name, complete_var, False, **extra)
        except click.ClickException as e:
            if type(e).__name__ == "NoArgsIsHelpError":  # `ct-referee` alone (click >= 8.2)
                click.echo(e.format_message(), err=True)  # the help, as it is, not one line
            else:
                click.echo(error_line(e), err=True)
            sys.exit(e.exit_code)
        except click.Abort:
            click.echo("error: aborted", err=True)
            sys.exit(1)
        sys.exit(result if isinstance(result, int) else 0)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except OSError as e:
            where = f"{e.filename}: " if e.filename else ""
            raise click.ClickException(f"{where}{(e.strerror or str(e)).lower()}") from None


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="ct-referee")
def main() -> None:
    """Referee and tournament runner for Chinese Ten bots."""


def _register() -> None:
    """Adds each command module's command to the group."""
    from referee.cli.bot import bot
    from referee.cli.check import check
    from referee.cli.cluster_certs import cluster_certs
    from referee.cli.play import play
    from referee.cli.replay import replay
    from referee.cli.report import report
    from referee.cli.sandbox import sandbox
    from referee.cli.tournament import tournament

    for command in (bot, check, cluster_certs, play, replay, report, sandbox, tournament):
        main.add_command(command)


_register()
