"""The ``ct-referee`` command line: one click group, one module per command.

A command's module is imported only when the command runs (or shows its own help): the group
lists each command from :data:`COMMANDS` (its module, and the short help its ``--help`` line
shows), so ``ct-referee --help`` and every command pay only the imports they use.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from typing import Any

import click

from referee.protocol.escape import escape_controls

_WORDS = (("File ", "file "), ("Path ", "path "), ("Directory ", "directory "))

COMMANDS: dict[str, tuple[str, str]] = {
    "bot": ("referee.cli.bot:bot",
            "Play as a bot: POLICY answers the referee's requests on stdin/stdout."),
    "check": ("referee.cli.check:check",
              "Check that BOT_CMD speaks protocol v1: scripted deals, every answer judged."),
    "cluster-certs": ("referee.cli.cluster_certs:cluster_certs",
                      "Make the TLS certificates of a Dask cluster that admits only its own "
                      "machines."),
    "league": ("referee.cli.league:league",
               "Run the league described by CONFIG (YAML): the submissions folder watched, "
               "each new or"),
    "play": ("referee.cli.play:play",
             "Play one match between 2-4 BOTS (each a command, quoted if it has spaces)."),
    "replay": ("referee.cli.replay:replay",
               "Tell the match in RECORD turn by turn, or check, draw or re-ask it."),
    "report": ("referee.cli.report:report",
               "Rebuild OUTPUT/report/ from a tournament's output folder (a running tournament "
               "keeps it current by itself):"),
    "sandbox": ("referee.cli.sandbox:sandbox",
                "Show which bot protections work on this machine, then run hostile probes in "
                "the sandbox: every attack"),
    "tournament": ("referee.cli.tournament:tournament",
                   "Run the tournament described by CONFIG (YAML), or resume it where it "
                   "stopped."),
}
"""Each command: where it is (``module:name``) and the start of its help (the first
sentence, or the first hundred characters), from which the group's help makes its line as
click does from the whole help (``tests/test_cli_lazy.py`` checks that they agree)."""


def short_help(name: str, limit: int) -> str:
    """Command ``name``'s line in the group's help, at most ``limit`` characters, as click
    makes it (:meth:`click.Command.get_short_help_str`), its module not imported."""
    return click.Command(name, help=COMMANDS[name][1]).get_short_help_str(limit)


def load_command(name: str) -> click.Command:
    """The command called ``name``, its module imported now."""
    module, _, attr = COMMANDS[name][0].partition(":")
    command = getattr(importlib.import_module(module), attr)
    assert isinstance(command, click.Command)
    return command


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

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            self.add_command(load_command(cmd_name), cmd_name)
        return self.commands.get(cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The commands and their help lines (as click's), without importing their modules."""
        names = [n for n in self.list_commands(ctx)
                 if n in COMMANDS or not self.commands[n].hidden]
        if not names:
            return
        limit = formatter.width - 6 - max(len(n) for n in names)
        rows = [(n, self.commands[n].get_short_help_str(limit) if n in self.commands
                 else short_help(n, limit)) for n in names]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

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

