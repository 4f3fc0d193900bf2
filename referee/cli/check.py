"""``ct-referee check``: the conformance checker (:mod:`referee.match.check`) on the terminal."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.console import Console
from rich.text import Text

from referee.bots.command_hints import shell_syntax_warning
from referee.bots.limits import Limits, SandboxMode
from referee.bots.process import BotCommandError, resolve_command
from referee.cli.options import (
    clock_options,
    limit_options,
    resolve_mode,
    sandbox_option,
    sandbox_words,
)
from referee.match.check import FAIL, PASS, SKIP, CheckReport, StepResult, run_check
from referee.protocol.escape import escape_controls

_MARKS = {PASS: ("✓", "OK  ", "green"), FAIL: ("✗", "FAIL", "bold red"),
          SKIP: ("–", "SKIP", "dim")}


class _Printer:
    """Prints each step as it is decided."""

    def __init__(self, console: Console, ascii_only: bool) -> None:
        self.console = console
        self.ascii_only = ascii_only

    def __call__(self, step: StepResult) -> None:
        symbol, word, style = _MARKS.get(step.status, _MARKS[SKIP])
        line = Text(word if self.ascii_only else symbol, style=style)
        line.append(f" {escape_controls(step.title)}")
        if step.note:
            line.append(f"  {escape_controls(step.note)}", style="dim")
        self.console.print(line)
        rows = [("sent", step.sent), ("received", step.received), ("expected", step.expected),
                ("hint", step.hint)] if step.status == FAIL else []
        for key, value in rows:
            if value is not None:
                row = Text(f"      {key + ':':<10}")
                row.append(escape_controls(value), style="bold yellow" if key == "hint" else "")
                self.console.print(row)
        if step.stderr and step.status == FAIL:
            self.console.print(Text("      stderr (last lines):", style="dim"))
            for text in step.stderr:
                self.console.print(Text(f"        {escape_controls(text)}", style="dim"))
        for warning in step.warnings:
            self.console.print(Text(f"      {'WARN' if self.ascii_only else '!'} "
                                    f"{escape_controls(warning)}",
                                    style="yellow"))


def _summary(console: Console, report: CheckReport) -> None:
    parts = []
    if report.startup_ms is not None:
        parts.append(f"start-up {report.startup_ms:.0f} ms")
    if report.answer_ms:
        parts.append(f"{len(report.answer_ms)} answers: median {report.median_ms:.1f} ms, "
                     f"slowest {report.slowest_ms:.1f} ms")
    if report.exit_code is not None:
        parts.append(f"exit code {report.exit_code}")
    if parts:
        console.print(" · ".join(parts))
    failed = sum(1 for s in report.steps if s.status == FAIL)
    skipped = sum(1 for s in report.steps if s.status not in (PASS, FAIL))
    total = len(report.steps)
    if report.ok:
        console.print(Text(f"all {total} steps passed", style="bold green"))
    else:
        more = f", {skipped} not run" if skipped else ""
        console.print(Text(f"{failed} of {total} steps failed{more}", style="bold red"))


@click.command()
@click.argument("bot_cmd")
@clock_options()
@sandbox_option("Run the bot as a tournament would (auto: bwrap if it works here).")
@limit_options
@click.option("--transcript", type=click.Path(dir_okay=False, path_type=Path),
              help="Write every line exchanged here ('> ' to the bot, '< ' from it).")
@click.option("--ascii", "ascii_only", is_flag=True, help="OK/FAIL instead of ✓/✗, no colours.")
def check(bot_cmd: str, move_ms: int, startup_ms: int, sandbox: SandboxMode, memory_mb: int,
          pids: int,
          cpus: float, tmp_mb: int, file_mb: int, transcript: Path | None,
          ascii_only: bool) -> None:
    """Check that BOT_CMD speaks protocol v1: scripted deals, every answer judged.

    \b
    Example:
      ct-referee check "python3 mybot.py"

    Exit status: 0 when every step passes, 1 when one fails, 2 when BOT_CMD cannot be run.
    """
    console = Console(no_color=ascii_only, emoji=False, highlight=False, soft_wrap=True)
    try:
        argv = resolve_command(bot_cmd, Path.cwd())
        mode = resolve_mode(sandbox)
    except BotCommandError as err:
        click.echo(f"error: {err}", err=True)
        sys.exit(2)
    if (hint := shell_syntax_warning(bot_cmd)) is not None:
        click.echo(f"warning: {hint}", err=True)
    if transcript is not None:
        try:  # before the run, so a bad path is not found only at the end
            transcript.parent.mkdir(parents=True, exist_ok=True)
            transcript.touch()
        except OSError as err:
            click.echo(f"error: cannot write the transcript {transcript}: "
                       f"{err.strerror or err}", err=True)
            sys.exit(2)
    head = Text("checking ")
    head.append(bot_cmd, style="bold")
    head.append(f" · move {move_ms} ms · start-up {startup_ms} ms · {sandbox_words(mode)}")
    console.print(head)
    try:
        limits = Limits(memory_mb=memory_mb, pids=pids, cpus=cpus, tmp_mb=tmp_mb,
                        file_mb=file_mb)
        report = run_check(argv, move_ms=move_ms, startup_ms=startup_ms, sandbox=mode,
                           limits=limits,
                           workdir=Path.cwd(), on_step=_Printer(console, ascii_only))
    except BotCommandError as err:
        click.echo(f"error: {err}", err=True)
        sys.exit(2)
    except KeyboardInterrupt:
        console.print("interrupted: bot stopped")
        sys.exit(130)
    _summary(console, report)
    if transcript is not None:
        transcript.parent.mkdir(parents=True, exist_ok=True)
        transcript.write_text("\n".join(report.transcript) + "\n")
        console.print(Text(f"transcript: {transcript}"))
    sys.exit(0 if report.ok else 1)
