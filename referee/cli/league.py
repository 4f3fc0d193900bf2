"""``ct-referee league LEAGUE.yaml``: a season whose entrants join, update and retire while it
plays (:mod:`referee.league`); the guide is ``docs/league.md``."""

from __future__ import annotations

import contextlib
import threading
import time
from pathlib import Path

import click

from referee.cli.options import cluster_options
from referee.cli.serving import open_server, serve_option, served_words, until_stopped
from referee.league.config import load_league
from referee.league.journal import LeagueFolder
from referee.league.page import verdict_text
from referee.league.run import run_league
from referee.league.season import CLUSTER_WEAKER, League
from referee.protocol.escape import escape_controls
from referee.runners.cluster import ClusterError, ClusterRunner, plain_tcp_warning
from referee.runners.local import Runner
from referee.tournament.config import ConfigError
from referee.tournament.dispatch import TournamentError, stop_on_sigint
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

    def say(line: str) -> None:
        click.echo(f"{time.strftime('%H:%M:%S')} {escape_controls(line)}")

    runner: Runner | None = None
    if scheduler is not None or scheduler_file is not None:
        if scheduler is not None and scheduler_file is not None:
            raise click.UsageError("--scheduler and --scheduler-file: give one")
        try:
            runner = ClusterRunner(scheduler, sandbox=cfg.sandbox.strict(), warn=say,
                                   scheduler_file=scheduler_file, tls=tls)
        except ClusterError as err:
            raise click.ClickException(str(err)) from None
        if not runner.authenticated:
            say(plain_tcp_warning(runner.address))
    elif tls is not None:
        raise click.UsageError("--tls is for a cluster: give --scheduler or --scheduler-file")

    def started(lg: League) -> None:
        playing = sum(r.active for r in lg.table.rows.values())
        say(f"league {cfg.name}: {lg.done} matches kept, {playing} versions in the journal; "
            f"watching {cfg.submissions or 'the configuration'}; page "
            f"{lg.folder.report / 'index.html'}")
        if lg.weaker:
            say("weaker bot limits here: " + "; ".join(lg.weaker))
        if lg.remote:
            say(f"running on the Dask scheduler {getattr(lg.runner, 'address', '?')}; "
                f"sandbox: {CLUSTER_WEAKER}")
        if server is not None:
            say(f"serving the page {served_words(server, server.start())}")

    server = None if serve_at is None else open_server(  # the port taken before the start
        cfg.output, Kind.LEAGUE, serve_at, marker=LeagueFolder(cfg.output).league_marker)
    try:
        with stop_on_sigint(stop):
            done = run_league(cfg, fresh=fresh, stop=stop, say=say, started=started,
                              runner=runner)
    except (ConfigError, TournamentError) as err:
        raise click.ClickException(str(err)) from None
    finally:
        if server is not None:
            server.close()
    rows = done.table.ranked()
    say(f"{'stopped' if stop.is_set() else 'reached max_matches'}: {done.done} matches "
        f"({done.played} this run); the same command goes on")
    confidence, bound = done.stop_rule.confidence, float(cfg.variant.hand_total)
    for i, row in enumerate(rows[:10], 1):
        verdict = (verdict_text(done.page_verdict(row.name, rows[i].name),
                                confidence=confidence, bound=bound) if i < len(rows) else "")
        click.echo(f"{i:>3}. {row.name:<24} {row.score:7.2f}  (mu {row.rating.mu:.2f}, "
                   f"sigma {row.rating.sigma:.2f}, {row.sets} sets)"
                   + (f"  vs next: {verdict}" if verdict else ""))
    for line in done.page_data(live=False)["flags"]:
        click.echo(escape_controls(line))
    with contextlib.suppress(Exception):
        click.echo(f"page: {done.folder.report / 'index.html'}")
