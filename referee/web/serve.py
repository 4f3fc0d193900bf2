"""The report server (``--serve`` of ``ct-referee tournament``, ``league`` and ``report``): the
sockets of :class:`referee.web.routes.Site`. It answers only who may read the output folder:
over a unix socket that only the organiser (and root) may open, or on 127.0.0.1 to whoever
holds the folder's key (``.report-key``: the first folder of the address it prints,
``http://127.0.0.1:PORT/KEY/``, under which every page's links stay). No request it fails to
answer prints anything (a browser's aborted request above all). Why: ``docs/report.md``
(*Serving the report*), ``docs/security.md``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import socketserver
import stat
import tempfile
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from referee.web.routes import Kind, Reply, Site, folder_key

__all__ = ["CONNECTIONS", "ReportServer"]

CONNECTIONS = 32
"""Requests answered at once; a connection past them is closed at once (a login that opens
thousands holds no more threads of the referee's process than this)."""
REQUEST_S = 20.0
"""A connection that has not sent its request (or taken its reply) in this long is closed."""
SOCKET_PATH_MAX = 107
"""The longest path a unix socket may have (``sun_path``, less its closing NUL)."""


class _Handler(BaseHTTPRequestHandler):
    """One request: :class:`Site`'s reply, nothing logged (a browser's aborted request says
    nothing either); every reply says ``Cache-Control: no-cache`` (the pages change as the run
    plays: a browser asks again, and gets a 304 where a file did not change)."""

    timeout = REQUEST_S

    def version_string(self) -> str:
        return "ct-referee"

    def do_GET(self) -> None:
        self._send(body=True)

    def do_HEAD(self) -> None:
        self._send(body=False)

    def _send(self, *, body: bool) -> None:
        site: Site | None = getattr(self.server, "site", None)
        headers: dict[str, str] = {}
        for name, value in self.headers.items():
            key = name.title()
            headers[key] = f"{headers[key]}, {value}" if key in headers else value
        try:
            reply = (Reply.text(503, "starting") if site is None
                     else site.answer(self.path, headers))
        except Exception:  # a mistake here is a 500, never a traceback
            reply = Reply.text(500, "the report server could not answer this request")
        try:
            self.send_response(reply.status)
            named = {k.lower() for k, _ in reply.headers}
            for name, value in reply.headers:
                self.send_header(name, value)
            if "content-length" not in named and reply.status != 304:
                self.send_header("Content-Length", str(reply.size()))
            self.send_header("Cache-Control", "no-cache")
            self.send_header("X-Content-Type-Options", "nosniff")
            self.send_header("Referrer-Policy", "no-referrer")
            self.end_headers()
            if body and reply.file is not None:
                shutil.copyfileobj(reply.file, self.wfile, 1 << 16)
            elif body:
                self.wfile.write(reply.body)
        finally:
            reply.close()

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _Quiet:
    """A server that answers :data:`CONNECTIONS` requests at once and says nothing of a
    request that failed (a browser closing the connection: ``BrokenPipeError``,
    ``ConnectionResetError``; a handler's own mistakes are answered 500 before this)."""

    site: Site | None = None
    daemon_threads = True
    block_on_close = False

    def __init__(self) -> None:
        self._slots = threading.BoundedSemaphore(CONNECTIONS)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slots.acquire(blocking=False):
            self.shutdown_request(request)  # type: ignore[attr-defined]
            return
        try:
            super().process_request(request, client_address)  # type: ignore[misc]
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)  # type: ignore[misc]
        finally:
            self._slots.release()

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass


class _TcpServer(_Quiet, ThreadingHTTPServer):
    def __init__(self, port: int) -> None:
        _Quiet.__init__(self)
        ThreadingHTTPServer.__init__(self, ("127.0.0.1", port), _Handler)


class _UnixServer(_Quiet, socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    """A unix socket at ``path``, mode 0600: only its owner (and root) may connect. It is made
    in a private folder beside ``path`` and moved there, so that no one can connect in
    between; a socket left at ``path`` by a server that is gone is replaced."""

    def __init__(self, path: Path) -> None:
        _Quiet.__init__(self)
        self.inode: int | None = None
        socketserver.UnixStreamServer.__init__(self, str(path), _Handler)

    def server_bind(self) -> None:
        path = Path(str(self.server_address)).absolute()
        if len(os.fsencode(path)) > SOCKET_PATH_MAX:
            raise OSError(f"the socket's path is {len(os.fsencode(path))} bytes long, past "
                          f"the {SOCKET_PATH_MAX} a unix socket may have: choose a shorter one")
        _check_free(path)
        folder = tempfile.mkdtemp(prefix=".ct-", dir=path.parent)
        try:
            inner = os.path.join(folder, "s")
            if len(os.fsencode(inner)) > SOCKET_PATH_MAX:
                raise OSError(f"the socket's folder {str(path.parent)!r} is too deep for a "
                              f"unix socket: choose a path of fewer than about 90 bytes")
            self.socket.bind(inner)
            os.chmod(inner, 0o600)
            os.rename(inner, path)
            self.inode = path.lstat().st_ino
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        self.server_address = str(path)


def _check_free(path: Path) -> None:
    """:raises OSError: where ``path`` is taken: a live server's socket, or not a socket."""
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(mode):
        raise OSError(f"{str(path)!r} exists and is not a socket")
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.settimeout(2)
        probe.connect(str(path))
    except OSError:
        return  # a server gone: its socket is replaced
    finally:
        probe.close()
    raise OSError(f"another server answers on {str(path)!r}")


class ReportServer:
    """The report server of the output folder ``out``: listening from the start (a port
    taken, or a unix socket made at ``address``, a :class:`~pathlib.Path`), answering from
    :meth:`start` (a tournament's folder is made ready in between); :meth:`close` ends it.

    :raises OSError: where the port or the socket cannot be had (the message says why).
    """

    def __init__(self, out: Path, kind: Kind, address: int | Path, *,
                 marker: Path | None = None, live: Callable[[], bool] = lambda: True) -> None:
        self.out, self.kind, self.marker, self._live = out, kind, marker, live
        self._server: _TcpServer | _UnixServer = (
            _UnixServer(address) if isinstance(address, Path) else _TcpServer(address))
        self.socket = Path(str(self._server.server_address)) if isinstance(
            self._server, _UnixServer) else None
        self.port = None if isinstance(self._server, _UnixServer) else \
            int(self._server.server_port)
        self.key: str | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> str:
        """Answers from now on, on a thread of its own; returns where (see :meth:`address`).
        Over TCP, the folder's key is read or made now (:func:`folder_key`).

        :raises OSError: where the key cannot be written into the folder.
        """
        if self.socket is None:
            self.key = folder_key(self.out)
        self._server.site = Site(self.out, self.kind, key=self.key, marker=self.marker,
                                 live=self._live)
        self._thread = threading.Thread(target=self._server.serve_forever, name="report-server",
                                        daemon=True)
        self._thread.start()
        return self.address()

    def address(self) -> str:
        """The address to open: ``http://127.0.0.1:PORT/KEY/``, or the socket's path."""
        if self.socket is not None:
            return str(self.socket)
        return f"http://127.0.0.1:{self.port}/" + (f"{self.key}/" if self.key else "")

    def how(self) -> str:
        """How to reach it, in one sentence after the address."""
        if self.socket is not None:
            return (f"(mode 0600: you and root alone may connect; a browser through ssh -L "
                    f"8000:{self.socket} this-host, then http://127.0.0.1:8000/; or curl "
                    f"--unix-socket {self.socket} http://x/report/index.html)")
        return ("(the key in it is the password: whoever has this address reads what the "
                "server serves)")

    @property
    def started(self) -> bool:
        """Whether it answers (:meth:`start` was called, :meth:`close` not yet)."""
        return self._thread is not None

    def close(self) -> None:
        """Stops answering, and removes the socket it made."""
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join()
            self._thread = None
        self._server.server_close()
        if isinstance(self._server, _UnixServer) and self.socket is not None:
            with contextlib.suppress(OSError):
                if self.socket.lstat().st_ino == self._server.inode:
                    self.socket.unlink()
