"""``ct-referee replay``: tell a recorded match, verify records, draw it as HTML, re-ask a bot."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import click
from rich.console import Console
from rich.text import Text

from referee.bots.bot import Bot, BotError
from referee.bots.command_hints import shell_syntax_warning
from referee.bots.limits import Limits, SandboxMode
from referee.bots.process import BotCommandError, Launcher, resolve_command, stderr_tail
from referee.bots.spawn import BotCommand
from referee.cli.options import clock_options, resolve_mode, sandbox_option
from referee.match.reask import Reask
from referee.protocol.escape import escape_controls
from referee.records.record import RecordDict, RecordError, read_record
from referee.records.replay import (
    ReplayError,
    check_replayable,
    record_files,
    replay_text,
    verify_file,
)

_RESOURCES = Limits(memory_mb=0)
"""The re-asked bot's resources: no memory limit, the rest as a tournament's defaults."""


@click.command()
@click.argument("records", nargs=-1, required=True,
                type=click.Path(exists=True, path_type=Path))
@click.option("--verify", is_flag=True,
              help="Re-play every record under the rules (files, or folders of *.json and "
                   "*.json.gz).")
@click.option("--hand", "hand_number", type=click.IntRange(min=1), default=None,
              help="Show only hand K.")
@click.option("--seat", type=click.IntRange(min=0), default=None,
              help="Only what seat S could see; with --bot, the seat the bot sits in.")
@click.option("--ascii", "ascii_only", is_flag=True, help="No colours or suit symbols.")
@click.option("--html", "html_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the match as one self-contained HTML page.")
@click.option("--bot", "bot_command", metavar="CMD",
              help="Re-play the match to this bot command in --seat and list where it differs.")
@clock_options(note="with --bot")
@sandbox_option("Sandbox of the bot (with --bot).")
def replay(
    records: tuple[Path, ...], verify: bool, hand_number: int | None, seat: int | None,
    ascii_only: bool, html_path: Path | None, bot_command: str | None, move_ms: int,
    startup_ms: int, sandbox: SandboxMode,
) -> None:
    """Tell the match in RECORD turn by turn, or check, draw or re-ask it.

    \b
    Examples:
      ct-referee replay games/demo-17.json.gz --hand 2 --seat 1
      ct-referee replay --verify out/games
      ct-referee replay games/demo-17.json.gz --html demo-17.html
      ct-referee replay games/demo-17.json.gz --bot "python3 my_bot.py" --seat 1

    With --verify the exit status is 1 if any record is not valid.
    """
    console = Console(no_color=ascii_only, emoji=False, highlight=False, soft_wrap=True)
    if bot_command is not None and not bot_command.strip():
        raise click.BadParameter("the bot command is empty", param_hint="--bot")
    if verify:
        if html_path or bot_command:
            raise click.UsageError("--verify does not go with --html or --bot")
        sys.exit(_verify(console, records))
    if len(records) != 1:
        raise click.UsageError("give one RECORD (several only with --verify)")
    path = records[0]
    try:
        record = read_record(path)
    except RecordError as err:
        raise click.ClickException(str(err)) from None
    try:
        found = check_replayable(record, strict=bool(html_path or bot_command))
    except ReplayError as err:
        raise click.ClickException(f"{path}: {err}") from None
    n = len(record["players"])
    if seat is not None and seat >= n:
        raise click.BadParameter(f"seat {seat} is not a seat of {n}", param_hint="--seat")
    hands = len(record["hands"])
    if hand_number is not None and hand_number > hands:
        raise click.BadParameter(f"the match has {hands} hands", param_hint="--hand")
    if bot_command is not None:
        if seat is None:
            raise click.UsageError("--bot needs --seat")
        _reask(console, record, seat, bot_command, move_ms, startup_ms, sandbox)
        return
    if html_path:
        from referee.web.replay_html import replay_html

        html_path.parent.mkdir(parents=True, exist_ok=True)
        html_path.write_text(replay_html(record, seat=seat, hand=hand_number),
                             encoding="utf-8")
        console.print(Text(f"wrote {html_path}"))
        return
    if found:
        console.print(Text(f"warning: this record does not verify: "
                           f"{escape_controls(str(found[0]))}", style="yellow"))
    for line in replay_text(record, hand=hand_number, seat=seat, ascii_only=ascii_only):
        console.print(line)


def _verify(console: Console, paths: tuple[Path, ...]) -> int:
    ok = bad = 0
    for path in record_files(paths):
        verdict = verify_file(path)
        if verdict.problem:
            bad += 1
            console.print(Text(escape_controls(str(verdict)), style="red"))
        else:
            ok += 1
            console.print(Text(escape_controls(str(verdict))))
    total = ok + bad
    if not total:
        raise click.ClickException("no record files found")
    console.print(Text(f"{total} record{'s' * (total != 1)}: {ok} ok, {bad} bad",
                       style="bold red" if bad else "bold green"))
    return 1 if bad else 0


def _reask(
    console: Console, record: RecordDict, seat: int, command: str, move_ms: int,
    startup_ms: int, sandbox: SandboxMode,
) -> None:
    try:
        argv = resolve_command(command, Path.cwd())
        launcher = Launcher.resolve(resolve_mode(sandbox), _RESOURCES)
    except BotCommandError as err:
        raise click.ClickException(str(err)) from None
    if (hint := shell_syntax_warning(command)) is not None:
        click.echo(f"warning: {hint}", err=True)
    with tempfile.TemporaryDirectory(prefix="ct-replay-") as tmp:
        stderr_path = Path(tmp, "stderr")
        bot = Bot(BotCommand.of(argv, workdir=Path.cwd(), launcher=launcher,
                                stderr_path=stderr_path))
        _reask_with(console, record, seat, command, bot, stderr_path, move_ms, startup_ms)


def _with_stderr(message: str, path: Path) -> str:
    """``message``, then the last lines of the bot's stderr (if it wrote any)."""
    tail = stderr_tail(path)
    if not tail:
        return message
    return "\n".join([f"{message}; its stderr ends with:",
                      *(f"  {escape_controls(line)}" for line in tail)])


def _reask_with(
    console: Console, record: RecordDict, seat: int, command: str, bot: Bot, stderr_path: Path,
    move_ms: int, startup_ms: int,
) -> None:
    reask = Reask(record, seat, bot, move_ms=move_ms, startup_ms=startup_ms)
    try:
        name = reask.start()
    except (BotError, BotCommandError) as err:
        bot.close()
        raise click.ClickException(
            _with_stderr(f"the bot did not start: {escape_controls(str(err))}", stderr_path)
        ) from None
    console.print(Text(f"match {record['id']}: re-asking seat {seat} "
                       f"({record['players'][seat]}) of {len(record['players'])} to "
                       f"{name or command!r}"))  # repr: controls escaped
    faults = [f for f in record["faults"] if f["seat"] == seat]
    for f in faults:
        console.print(Text(f"in the match seat {seat} faulted ({f['fault']}) in hand "
                           f"{f['hand']}: its later decisions were fallback, asked all the same",
                           style="dim"))
    asked = differ = 0
    try:
        for finding in reask:
            asked += 1
            if finding.differs:
                differ += 1
                console.print(Text(escape_controls(str(finding))))
    finally:
        bot.close()
    if reask.stopped:
        console.print(Text(_with_stderr(
            f"the bot was stopped ({escape_controls(reask.stopped)}); {reask.not_asked} "
            f"decision{'s' * (reask.not_asked != 1)} not asked", stderr_path), style="yellow"))
    console.print(f"{asked} decisions asked, {differ} differ")
