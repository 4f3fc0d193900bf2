"""The report server's option and words, shared by ``tournament --serve``, ``league --serve``
and ``report --serve`` (:mod:`referee.web.serve`; the guide: ``docs/report.md``, *Serving the
report*)."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from referee.web.routes import Kind
from referee.web.serve import ReportServer

__all__ = ["address", "open_server", "serve_option", "served_words", "until_stopped"]


def address(ctx: click.Context, param: click.Parameter, value: str | None) -> int | Path | None:
    """An option's value as a port on 127.0.0.1 (``0``: any free one) or the path of a unix
    socket (one with a ``/``: ``./report.sock``); a click callback.

    :raises click.BadParameter: for anything else.
    """
    if value is None:
        return None
    if value.isdigit():
        if int(value) <= 65535:
            return int(value)
        raise click.BadParameter(f"{value} is not a port (0 to 65535)")
    if "/" in value:
        return Path(value)
    raise click.BadParameter(f"{value!r} is neither a port (0 to 65535) nor a socket's path "
                             f"(give one with a /: ./report.sock)")


def serve_option(what: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``--serve PORT|SOCKET``: serve ``what`` while the command runs."""
    return click.option(
        "--serve", "serve_at", metavar="PORT|SOCKET", callback=address, default=None,
        help=f"Serve {what} while it runs: on 127.0.0.1:PORT (0: any free port) to whoever "
             f"has the address printed (it holds the folder's key), or on the unix socket "
             f"SOCKET (a path with a /), which only you may open. Nothing of a duplicate set "
             f"is served before every seating of it has ended.")


def open_server(out: Path, kind: Kind, address: int | Path, *, marker: Path | None,
                live: Callable[[], bool] = lambda: True) -> ReportServer:
    """The server of ``out`` listening at ``address`` (answering once started).

    :raises click.ClickException: where the port or the socket cannot be had.
    """
    try:
        return ReportServer(out, kind, address, marker=marker, live=live)
    except OSError as err:
        where = f"port {address}" if isinstance(address, int) else f"the socket {address}"
        raise click.ClickException(f"cannot serve on {where}: {err.strerror or err}") from None


def served_words(server: ReportServer, address: str) -> str:
    """``AT ADDRESS (how to reach it)``."""
    where = "on the socket " if server.socket is not None else "at "
    return f"{where}{address} {server.how()}"


def until_stopped(server: ReportServer) -> None:
    """Serves until Ctrl-C or ``SIGTERM``, then closes the server (the socket it made goes)."""

    def stopped(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stopped)
    try:
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()
    finally:
        server.close()
