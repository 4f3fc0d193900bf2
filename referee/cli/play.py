"""``ct-referee play``: one match between 2-4 bot commands, told on the terminal."""

from __future__ import annotations

import hashlib
import re
import secrets
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from referee.bots.command_hints import shell_syntax_warning
from referee.bots.limits import Limits, SandboxMode
from referee.bots.process import (
    BotCommandError,
    Launcher,
    resolve_command,
    split_command,
    stderr_tail,
)
from referee.cli.options import (
    clock_options,
    limit_options,
    resolve_mode,
    sandbox_option,
    sandbox_words,
)
from referee.game.rules import DEFAULT_TARGET, Deal, Event, Hand, Variant
from referee.match.human import HUMAN, HumanEntrant
from referee.match.play import Entrant, MatchAborted, Observer, play_match, seat_log
from referee.protocol.escape import escape_controls
from referee.records.display import cards_text, move_text
from referee.records.record import FaultDict, RecordDict, write_record

_NAME_OK = re.compile(r"[^A-Za-z0-9._-]+")


def entrant_names(commands: list[str | list[str]]) -> list[str]:
    """Short unique names for bot commands (strings, or argument lists already split): the
    script's stem (``random_bot``), numbered when two are the same."""
    names: list[str] = []
    for command in commands:
        argv = split_command(command)
        word = next((a for a in argv[1:] if Path(a).suffix or "/" in a), argv[0])
        base = _NAME_OK.sub("-", Path(word).stem or word).strip("-") or "bot"
        name, n = base, 2
        while name in names:
            name, n = f"{base}-{n}", n + 1
        names.append(name)
    return names


class _Teller(Observer):
    """Prints the match: every event with ``verbose``, else one line per hand."""

    def __init__(self, console: Console, names: list[str], *, verbose: bool, quiet: bool) -> None:
        self.console = console
        self.names = names
        self.verbose = verbose
        self.quiet = quiet
        self.dealer = 0
        self._play: Event | None = None

    def hand_started(self, number: int, hand: Hand) -> None:
        self.dealer = hand.dealer
        if not self.verbose:
            return
        c = self.console
        c.rule(Text(f"hand {number} · dealer {self.names[hand.dealer]}"))
        for seat, cards in enumerate(hand.deal.hands):
            c.print(Text(f"{self.names[seat]:>12} ", style="cyan"), cards_text(cards))
        c.print(Text(f"{'layout':>12} ", style="dim"), cards_text(hand.deal.layout))
        for e in hand.events:
            c.print(Text(f"{self.names[e.seat]} takes the layout four of a kind: "),
                    cards_text(e.captured))

    def event(self, event: Event, by: str) -> None:
        if not self.verbose:
            return
        if event.kind == "play":
            self._play = event
            return
        play = self._play
        assert play is not None and play.card is not None and event.card is not None
        line = move_text(self.names, event.seat, play.card, play.captured, event.card,
                         event.captured)
        if by == "fallback":
            line.append("  (fallback)", style="dim")
        self.console.print(line)

    def fault(self, fault: FaultDict, name: str) -> None:
        if not self.quiet:
            self.console.print(
                Text(f"fault: {escape_controls(name)} (seat {fault['seat']}) {fault['fault']} "
                     f"in hand {fault['hand']}: {escape_controls(fault['detail'])}",
                     style="yellow"))

    def hand_ended(self, number: int, scores: list[int], totals: list[int]) -> None:
        if self.quiet:
            return
        pts = "  ".join(f"{n} {s:>3}" for n, s in zip(self.names, scores, strict=True))
        tot = " ".join(str(t) for t in totals)
        self.console.print(Text(f"hand {number:>2} (dealer {self.names[self.dealer]}): {pts}"
                                f"   totals {tot}"))


def print_result(console: Console, record: RecordDict) -> None:
    """The final table: totals, ranks and faults per seat."""
    faults: dict[int, list[str]] = {}
    for f in record["faults"]:
        faults.setdefault(f["seat"], []).append(f"{f['fault']} (hand {f['hand']})")
    table = Table(title=f"match {record['id']} · {record['variant']} · "
                        f"{len(record['hands'])} hands")
    for col in ("rank", "seat", "name", "total", "faults"):
        table.add_column(col, justify="right" if col in ("rank", "seat", "total") else "left")
    order = sorted(range(len(record["players"])), key=lambda s: (record["ranks"][s], s))
    for s in order:
        table.add_row(str(record["ranks"][s]), str(s), record["players"][s],
                      str(record["totals"][s]), ", ".join(faults.get(s, [])) or "-")
    console.print(table)


@click.command()
@click.argument("bots", nargs=-1, required=True)
@click.option("--seed", type=int, default=None,
              help="For practice: deal from this seed, the same deals on every run "
                   "(default: unpredictable deals from a new secret).")
@click.option("--variant", type=click.Choice([v.value for v in Variant]), default="classic",
              show_default=True)
@click.option("--target", type=click.IntRange(min=1), default=DEFAULT_TARGET, show_default=True,
              help="Points that end the match.")
@clock_options(who="a bot")
@click.option("--bank-ms", type=click.IntRange(min=0), default=0, show_default=True,
              help="Extra time per match for answers past --move-ms.")
@limit_options
@sandbox_option("Where the bots run (auto: bwrap if it works here).")
@click.option("--record", "record_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the game record here (JSON; gzip-compressed when FILE ends in .gz).")
@click.option("--logs", "logs_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Keep each bot's stderr here (default: beside the record).")
@click.option("-q", "--quiet", is_flag=True, help="Print only the result.")
@click.option("-v", "--verbose", is_flag=True, help="Show every card as it is played.")
@click.option("--ascii", "ascii_only", is_flag=True, help="No colours or suit symbols.")
def play(
    bots: tuple[str, ...], seed: int | None, variant: str, target: int, move_ms: int,
    startup_ms: int, bank_ms: int, memory_mb: int, pids: int, cpus: float, tmp_mb: int,
    file_mb: int, sandbox: SandboxMode, record_path: Path | None,
    logs_dir: Path | None, quiet: bool, verbose: bool, ascii_only: bool,
) -> None:
    """Play one match between 2-4 BOTS (each a command, quoted if it has spaces).

    \b
    Example:
      ct-referee play "python3 bots/random_bot.py" "python3 bots/greedy_bot.py" \\
                      "node bots/starter.js" --seed 7 --verbose

    A bot that faults is a result, not an error: the exit status is 0 whenever the match ends.

    The word `human` instead of a command seats you, in that seat (at most one human): you
    see only your own cards, choose from numbered moves, and have no time limit.
    """
    if not 2 <= len(bots) <= 4:
        raise click.UsageError(f"a match needs 2 to 4 bots, got {len(bots)}")
    human = bots.count(HUMAN)
    if human > 1:
        raise click.UsageError("at most one seat can be human")
    console = Console(no_color=ascii_only, emoji=False, highlight=False,
                      stderr=False, soft_wrap=True)
    names, entrants = _entrants(bots, console, ascii_only)
    try:
        mode = resolve_mode(sandbox, who="the bots run")
    except BotCommandError as err:
        raise click.ClickException(str(err)) from None
    logs_dir, scratch = _folders(record_path, logs_dir)
    match_id, bot_id, fallback_key, deals = _dealing(seed, len(entrants))
    if not quiet:
        head = Text(" vs ".join(names), style="bold")
        dealt = "random deals" if seed is None else f"seed {seed}"
        head.append(f" · {variant} · target {target} · {dealt} · {sandbox_words(mode)}")
        console.print(head)
    teller = _Teller(console, names, verbose=verbose and not human, quiet=quiet)
    limits = Limits(startup_ms=startup_ms, move_ms=move_ms, bank_ms=bank_ms,
                    memory_mb=memory_mb, pids=pids, cpus=cpus, tmp_mb=tmp_mb, file_mb=file_mb)
    try:
        record = play_match(
            match_id, entrants, deals, variant=Variant(variant), target=target, limits=limits,
            launcher=Launcher.resolve(mode, limits), logs_dir=logs_dir,
            hidden=[logs_dir.absolute()], observer=teller, bot_id=bot_id,
            fallback_key=fallback_key)
    except BotCommandError as err:
        raise click.ClickException(str(err)) from None
    except (MatchAborted, KeyboardInterrupt):
        console.print("interrupted: bots stopped, no record written")
        sys.exit(130)
    print_result(console, record)
    _stderr_tails(console, record, logs_dir, names)
    if scratch is not None:
        scratch.cleanup()
    elif record_path is not None:
        write_record(record, record_path)
        console.print(Text(f"record: {record_path} · logs: {logs_dir}"))
    else:
        console.print(Text(f"logs: {logs_dir}"))


def _entrants(bots: tuple[str, ...], console: Console,
              ascii_only: bool) -> tuple[list[str], list[Entrant]]:
    """Each seat's name and entrant (a command resolved here, or the person at the terminal);
    a shell syntax in a command is warned of."""
    commands: list[str | list[str]] = []
    for command in bots:
        if command == HUMAN:
            commands.append(command)
            continue
        try:
            commands.append(resolve_command(command, Path.cwd()))
        except BotCommandError as err:
            raise click.ClickException(f"bot {command!r}: {err}") from None
        if (hint := shell_syntax_warning(command)) is not None:
            click.echo(f"warning: bot {command!r}: {hint}", err=True)
    names = entrant_names(commands)
    entrants: list[Entrant] = []
    for name, argv in zip(names, commands, strict=True):
        if argv == HUMAN:
            entrants.append(HumanEntrant(name, HUMAN, console=console, ascii_only=ascii_only))
        else:
            entrants.append(Entrant(name, tuple(argv), Path.cwd()))
    return names, entrants


def _folders(record_path: Path | None, logs_dir: Path | None
             ) -> tuple[Path, tempfile.TemporaryDirectory[str] | None]:
    """The bots' logs folder (beside the record, else a scratch one kept only for the match:
    a faulting bot's last lines are shown), made with the record's folder before any bot
    starts, so every sandboxed bot gets the logs folder hidden (only an existing folder can
    be); the record is written after the match, so its folder needs no hiding (and hiding it
    could hide the bots themselves: it is often the current folder)."""
    if logs_dir is None and record_path is not None:
        stem = Path(record_path.name.removesuffix(".gz")).stem  # game.json(.gz): game-logs
        logs_dir = record_path.with_name(stem + "-logs")
    scratch = None
    if logs_dir is None:
        scratch = tempfile.TemporaryDirectory(prefix="ct-play-logs-")
        logs_dir = Path(scratch.name)
    try:
        if record_path is not None:
            record_path.absolute().parent.mkdir(parents=True, exist_ok=True)
        logs_dir.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise click.ClickException(f"cannot make the folder {err.filename!r}: "
                                   f"{err.strerror}") from None
    return logs_dir, scratch


def _dealing(seed: int | None, players: int
             ) -> tuple[str, str, bytes, Callable[[int], Deal]]:
    """The match id, the bots' id, the fallback's key and the deals."""
    if seed is None:  # bots see their own cards: the deals must not follow from a small seed
        secret = secrets.token_bytes(32)

        def dealt(k: int) -> Deal:
            return Deal.from_key(players, secret, f"play:{k}")

        return f"play-{secrets.token_hex(4)}", secrets.token_hex(6), secret, dealt

    def seeded(k: int) -> Deal:  # practice: everything follows from the seed (played again)
        return Deal.from_seed(players, f"{seed}:{k}")

    bot_id = hashlib.sha256(f"play:{seed}".encode()).hexdigest()[:12]
    # the fallback's key as guessable as the deals, by choice
    return f"play-{seed}", bot_id, f"play:{seed}".encode(), seeded


def _stderr_tails(console: Console, record: RecordDict, logs_dir: Path,
                  names: list[str]) -> None:
    """The last lines of each faulting bot's stderr, escaped."""
    for seat in sorted({f["seat"] for f in record["faults"]}):
        tail = stderr_tail(seat_log(logs_dir, seat, names[seat]))
        if tail:
            console.print(Text(f"stderr of {escape_controls(names[seat])} (last lines):",
                               style="dim"))
            for line in tail:
                console.print(Text(f"  {escape_controls(line)}", style="dim"))
