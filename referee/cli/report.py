"""``ct-referee report``: rebuild a tournament's report page (:mod:`referee.web.report`)."""

from __future__ import annotations

from pathlib import Path

import click

from referee.web.report import ReportError, build


@click.command()
@click.argument("output", type=click.Path(path_type=Path))
def report(output: Path) -> None:
    """Rebuild OUTPUT/report/index.html and every match's replay page from a tournament's
    output folder (a running tournament refreshes it by itself)."""
    try:
        path = build(output)
    except ReportError as err:
        click.echo(f"error: {err}", err=True)
        raise SystemExit(2) from None
    click.echo(f"report: {path}")
