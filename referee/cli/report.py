"""``ct-referee report``: rebuild a tournament's report (:mod:`referee.web.report`), or serve
its output folder locally (:mod:`referee.web.serve`)."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import click

from referee.cli.serving import address as socket_address
from referee.cli.serving import open_server, served_words, until_stopped
from referee.tournament.output import OutputFolder
from referee.web.report import ReportError, build
from referee.web.routes import Kind, run_is_live


@click.command()
@click.argument("output", type=click.Path(path_type=Path))
@click.option("--serve", "serving", is_flag=True,
              help="Serve the output folder until Ctrl-C, to its organiser alone: the report, "
                   "and of every duplicate set that has ended its matches' replays (once the "
                   "run has ended, their records and the bots' logs as text too).")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True,
              help="The port --serve listens on at 127.0.0.1 (0: any free one); the address "
                   "printed holds the folder's key.")
@click.option("--socket", "socket_path", metavar="SOCKET", callback=socket_address, default=None,
              help="Serve on this unix socket instead (a path with a /), which only you may "
                   "open: no key needed.")
def report(output: Path, serving: bool, port: int, socket_path: int | Path | None) -> None:
    """Rebuild OUTPUT/report/ from a tournament's output folder (a running tournament keeps it
    current by itself): open report/index.html in a browser, from the disk or any web server.

    \b
    Example:
      ct-referee report results/demo
      ct-referee report results/demo --serve
      ct-referee report results/demo --serve --socket ./demo.sock
    """
    from referee.cli.league import report_league  # a league's folder has a page of its own

    if socket_path is not None and not isinstance(socket_path, Path):
        raise click.UsageError("--socket takes a path with a / (./report.sock); --port a port")
    address: int | Path = socket_path if socket_path is not None else port
    if report_league(output, serving=serving, address=address):
        return
    try:
        path = build(output)
    except ReportError as err:
        click.echo(f"error: {err}", err=True)
        raise SystemExit(2) from None
    except OSError as err:
        click.echo(f"error: cannot write {err.filename or output}: {err.strerror or err}",
                   err=True)
        raise SystemExit(1) from None
    click.echo(f"report: {path}")
    if not serving:
        return
    server = open_server(output, Kind.TOURNAMENT, address, marker=OutputFolder(output).marker,
                         live=partial(run_is_live, output))
    try:
        started = server.start()
    except OSError as err:
        server.close()
        click.echo(f"error: cannot write the key into {output}: {err.strerror or err}",
                   err=True)
        raise SystemExit(1) from None
    click.echo(f"serving {output} {served_words(server, started)}; Ctrl-C stops", nl=True)
    until_stopped(server)
