"""``ct-referee league LEAGUE.yaml``: a season whose entrants join, update and retire while it
plays (:mod:`referee.league`); the guide is ``docs/league.md``."""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import click

from referee.bots.limits import SandboxMode
from referee.bots.probing import capabilities
from referee.cli.options import cluster_options
from referee.cli.serving import open_server, serve_option, served_words, until_stopped
from referee.cli.tournament import _fault_line, _log_note
from referee.league.config import load_league
from referee.league.journal import LeagueFolder
from referee.league.run import run_league
from referee.league.season import LEAGUE_CLUSTER, League
from referee.match.job import MatchSpec
from referee.protocol.escape import escape_controls
from referee.records.record import FaultDict
from referee.runners.cluster import FAULTS_FILE, ClusterError, ClusterRunner, plain_tcp_warning
from referee.runners.local import Runner
from referee.tournament.config import ConfigError
from referee.tournament.dispatch import TournamentError, stop_on_sigint
from referee.tournament.session import Reporter
from referee.tournament.startup import uid_isolation
from referee.web.folder import pair_text
from referee.web.routes import Kind


def report_league(output: Path, *, serving: bool, address: int | Path) -> bool:
    """``ct-referee report OUTPUT`` of a league's folder: its page is the league's own (kept
    current as it plays), said where, and served with ``--serve`` until Ctrl-C (the page, and
    the replay of each match whose set has ended: :mod:`referee.web.serve`). ``False``: not a
    league's folder."""
    folder = LeagueFolder(output)
    if not folder.league_marker.is_file():
        return False
    click.echo(f"report: {folder.report / 'index.html'} (a league's page: the league keeps it "
               f"current as it plays)")
    if serving:
        server = open_server(output, Kind.LEAGUE, address, marker=folder.league_marker)
        try:
            started = server.start()
        except OSError as err:
            server.close()
            raise click.ClickException(f"cannot write the key into {output}: "
                                       f"{err.strerror or err}") from None
        click.echo(f"serving the league's page {served_words(server, started)}; Ctrl-C stops")
        until_stopped(server)
    return True


FINAL_ROWS = 50
"""Rows of the table printed when the league stops (then a count: standings.csv has all)."""


class LeagueTerminal(Reporter):
    """The league's lines on the terminal, each with the time: what happens (:meth:`note`),
    warnings, and each version's first fault (the page counts the rest)."""

    def __init__(self, logs: Path) -> None:
        self.logs = logs
        self.faulted: set[str] = set()

    def note(self, message: str) -> None:
        click.echo(f"{time.strftime('%H:%M:%S')} {escape_controls(message)}")

    def warn(self, message: str) -> None:
        self.note(f"warning: {message}")

    def fault(self, spec: MatchSpec, name: str, fault: FaultDict) -> None:
        if name in self.faulted:
            return
        self.faulted.add(name)
        self.note(_fault_line(spec, name, fault) + _log_note(self.logs, spec, name, fault)
                  + " (its further faults are counted on the page, not printed)")


def _final_table(done: League, stopped: bool) -> None:
    """What the terminal shows when the league stops: every version playing (up to
    :data:`FINAL_ROWS`, then how many more), each with its verdict on the next one down."""
    then = ("the same command goes on" if stopped else
            "a larger max_matches (or --max-matches) plays on")
    click.echo(f"{time.strftime('%H:%M:%S')} {'stopped' if stopped else 'reached max_matches'}: "
               f"{done.done:,} matches ({done.played:,} this run); {then}")
    rows = done.book.table.ranked()
    confidence = done.book.stop_rule.confidence
    bound = float(done.config.variant.hand_total)
    for i, row in enumerate(rows[:FINAL_ROWS], 1):
        pair = done.book.pair(row.name, rows[i].name) if i < len(rows) else None
        verdict = pair_text(pair, bound, confidence=confidence) if pair is not None else ""
        click.echo(f"{i:>3}. {row.name:<24} {row.score:7.2f}  (mu {row.rating.mu:.2f}, "
                   f"sigma {row.rating.sigma:.2f}, {row.sets} sets)"
                   + (f"  vs next: {escape_controls(verdict)}" if verdict else ""))
    if len(rows) > FINAL_ROWS:
        click.echo(f"     and {len(rows) - FINAL_ROWS} more (standings.csv has every row)")
    for line in done.book.flags():
        click.echo(escape_controls(line))
    click.echo(f"standings: {done.folder.standings_csv}, {done.folder.standings_json}")
    with contextlib.suppress(Exception):
        click.echo(f"page: {done.folder.report / 'index.html'}")


@contextlib.contextmanager
def _stop_on_term(stop: threading.Event) -> Iterator[None]:
    """While inside, SIGTERM (a service stopped: ``systemctl stop``, ``kill``) stops the league
    as Ctrl-C does: cleanly, its page and standings written."""
    old = signal.signal(signal.SIGTERM, lambda signum, frame: stop.set())
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


def _sandbox_line(lg: League) -> str:
    """What the first lines say of the bots' sandbox."""
    if lg.remote:
        return f"running on the Dask scheduler {getattr(lg.runner, 'address', '?')}; " \
               f"sandbox: {LEAGUE_CLUSTER}"
    if lg.mode is SandboxMode.NONE:
        return "sandbox: none (sandbox: none: a trusted field only)"
    return f"sandbox: bwrap ({capabilities().summary()}); {uid_isolation()}"


@click.command()
@click.argument("config", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--output", type=click.Path(file_okay=False, path_type=Path),
              help="Output folder (default: the configuration's, else results/<name>).")
@click.option("--concurrency", type=int, help="Matches played at once.")
@click.option("--max-matches", type=click.IntRange(min=1),
              help="Stop once this many matches are finished (all runs together).")
@serve_option("the live page, and the replay of each match whose set has ended,")
@click.option("--fresh", is_flag=True, help="Start over in the output folder.")
@cluster_options("versions are admitted here, and play there from their folders as they are")
def league(config: Path, output: Path | None, concurrency: int | None,
           max_matches: int | None, serve_at: int | Path | None, fresh: bool,
           scheduler: str | None,
           scheduler_file: Path | None, tls: Path | None) -> None:
    """Run the league described by CONFIG (YAML): the submissions folder watched, each new or
    changed folder admitted as a new version and placed at once, the live page in
    OUTPUT/report/index.html. Ctrl-C stops it; the same command goes on where it stopped."""
    overrides = {} if max_matches is None else {"max_matches": max_matches}
    try:
        cfg = load_league(config, output=output, concurrency=concurrency, overrides=overrides)
    except ConfigError as err:
        raise click.ClickException(str(err)) from None
    stop = threading.Event()
    terminal = LeagueTerminal(cfg.output / "logs")
    for warning in cfg.warnings:
        terminal.warn(warning)
    runner: Runner | None = None
    if scheduler is not None or scheduler_file is not None:
        if scheduler is not None and scheduler_file is not None:
            raise click.UsageError("--scheduler and --scheduler-file: give one")
        try:
            runner = ClusterRunner(scheduler, sandbox=cfg.sandbox.strict(), warn=terminal.note,
                                   scheduler_file=scheduler_file, tls=tls,
                                   faults_file=Path(cfg.output) / FAULTS_FILE)
        except ClusterError as err:
            raise click.ClickException(str(err)) from None
        if not runner.authenticated:
            terminal.note(plain_tcp_warning(runner.address))
    elif tls is not None:
        raise click.UsageError("--tls is for a cluster: give --scheduler or --scheduler-file")

    def started(lg: League) -> None:
        playing = sum(r.active for r in lg.book.table.rows.values())
        terminal.note(f"league {cfg.name}: {lg.done} matches kept, {playing} versions in the "
                      f"journal; watching {cfg.submissions or 'the configuration'}; page "
                      f"{lg.folder.report / 'index.html'}")
        terminal.note(_sandbox_line(lg))
        if lg.weaker:
            terminal.note("weaker bot limits here: " + "; ".join(lg.weaker))
        if server is not None:
            terminal.note(f"serving the page {served_words(server, server.start())}")

    server = None if serve_at is None else open_server(  # the port taken before the start
        cfg.output, Kind.LEAGUE, serve_at, marker=LeagueFolder(cfg.output).league_marker)
    try:
        with stop_on_sigint(stop), _stop_on_term(stop):
            done = run_league(cfg, fresh=fresh, stop=stop, reporter=terminal, started=started,
                              runner=runner)
    except (ConfigError, TournamentError) as err:
        raise click.ClickException(str(err)) from None
    finally:
        if server is not None:
            server.close()
    _final_table(done, stop.is_set())
