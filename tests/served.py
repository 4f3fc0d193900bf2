"""The report server as the tests reach it: ``ct-referee report OUTPUT --serve`` started (its
address read from what it prints), and a client holding the key the address carries (its
first folder). Standard library only."""

from __future__ import annotations

import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from http.client import HTTPResponse
from pathlib import Path

from conftest import CLI


def address_in(line: str) -> str:
    """The address a ``serving ... at ADDRESS (...)`` line gives."""
    return line.split(" at ", 1)[1].split(" ", 1)[0]


class Client:
    """Requests to one server, as a browser sends them from the address printed: every path
    under its first folder, the key (``http://127.0.0.1:PORT/KEY/report/index.html``)."""

    def __init__(self, address: str) -> None:
        self.base = address.rstrip("/")
        self.key = self.base.rsplit("/", 1)[1]
        self.opener = urllib.request.build_opener()
        with self.opener.open(address, timeout=60) as first:  # led to the report's page
            assert first.status == 200, first.status

    def open(self, path: str, *, method: str = "GET") -> HTTPResponse:
        """``path``'s reply (raises :class:`urllib.error.HTTPError` for a refusal)."""
        reply = self.opener.open(urllib.request.Request(self.base + path, method=method),
                                 timeout=60)
        assert isinstance(reply, HTTPResponse)
        return reply

    def read(self, path: str) -> bytes:
        with self.open(path) as reply:
            return reply.read()

    def status(self, path: str, *, method: str = "GET") -> int:
        try:
            with self.open(path, method=method) as reply:
                reply.read()
                return int(reply.status)
        except urllib.error.HTTPError as err:
            return err.code


@contextmanager
def report_server(folder: Path, *extra: str) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """``ct-referee report FOLDER --serve --port 0 EXTRA...`` running, and the address it
    printed; stopped (Ctrl-C's signal) at the end."""
    server = subprocess.Popen([CLI, "report", str(folder), "--serve", "--port", "0", *extra],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        assert server.stdout.readline().startswith("report: ")
        line = server.stdout.readline()
        assert line.startswith("serving "), (line, server.poll())
        yield server, (address_in(line) if " at " in line else line)
    finally:
        server.terminate()
        server.wait(timeout=30)
