"""``ct-referee report``: rebuild a tournament's report (:mod:`referee.web.report`), or serve
its output folder locally."""

from __future__ import annotations

from pathlib import Path

import click

from referee.web.report import ReportError, build, serve


@click.command()
@click.argument("output", type=click.Path(path_type=Path))
@click.option("--serve", "serving", is_flag=True,
              help="Serve the output folder at http://127.0.0.1:PORT/ until Ctrl-C: the report, "
                   "every match's replay page (drawn on demand), the logs as text.")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True,
              help="The port --serve listens on (0: any free one).")
def report(output: Path, serving: bool, port: int) -> None:
    """Rebuild OUTPUT/report/ from a tournament's output folder (a running tournament keeps it
    current by itself): open report/index.html in a browser, from the disk or any web server.

    \b
    Example:
      ct-referee report results/demo
      ct-referee report results/demo --serve
    """
    from referee.cli.league import report_league  # a league's folder has a page of its own

    if report_league(output, serving=serving, port=port):
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
    try:
        if serving:
            serve(output, port=port, ready=lambda url: click.echo(
                f"serving {output} at {url} (Ctrl-C stops)"))
    except ReportError as err:
        click.echo(f"error: {err}", err=True)
        raise SystemExit(2) from None
    except OSError as err:
        click.echo(f"error: cannot serve on port {port}: {err.strerror or err}", err=True)
        raise SystemExit(1) from None
