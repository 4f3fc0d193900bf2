"""One long-lived headless Chromium for the report's browser tests, driven over the Chrome
DevTools Protocol on ``--remote-debugging-pipe``: JSON messages, each ended by a NUL byte, on
the browser's fd 3 (to it) and fd 4 (from it). Standard library only.

Each page gets a target of its own (a tab: created, used, closed), its viewport set as
``--window-size`` set it, and is read as ``--dump-dom`` printed it (the DOM after load, or after
a virtual-time budget as ``--virtual-time-budget`` gave: timers run fast while the page waits on
nothing) or photographed as ``--screenshot`` did. Every read from the pipe has a deadline; a
browser that dies or stops answering is killed, the call fails saying so, and the next call
starts a fresh one."""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--allow-file-access-from-files", "--remote-debugging-pipe")
# Puts the pipe's ends on fds 3 and 4 for the browser (the parent's are any numbers, 10 or over,
# so that neither is overwritten before it is moved), then runs it.
_ON_FDS_3_AND_4 = ("import os, sys\n"
                   "a, b = int(sys.argv[1]), int(sys.argv[2])\n"
                   "os.dup2(a, 3), os.dup2(b, 4), os.close(a), os.close(b)\n"
                   "os.execv(sys.argv[3], sys.argv[3:])\n")


class BrowserError(AssertionError):
    """The browser died, stopped answering in time, or refused a command."""


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


class _Connection:
    """One running browser and its pipe."""

    def __init__(self, executable: str, timeout: float) -> None:
        self.timeout = timeout
        self.profile = tempfile.TemporaryDirectory(prefix="ct-chromium-")
        self.log = open(Path(self.profile.name) / "stderr", "w+b")  # noqa: SIM115
        pipes = os.pipe(), os.pipe()
        # the browser reads commands from to_read (its fd 3), writes answers to from_write (4)
        (to_read, self._to), (self._from, from_write) = pipes
        for_it = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in (to_read, from_write)]
        os.close(to_read)
        os.close(from_write)
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-c", _ON_FDS_3_AND_4, *map(str, for_it), executable, *FLAGS,
                 f"--user-data-dir={self.profile.name}", "about:blank"],
                stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log,
                pass_fds=for_it, start_new_session=True)
        except BaseException:
            os.close(self._to)
            os.close(self._from)
            raise
        finally:
            for fd in for_it:
                os.close(fd)
        self._buffer = b""
        self._next_id = 0
        self._events: list[dict[str, Any]] = []
        self.dead = False

    def close(self) -> None:
        self.dead = True
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):  # its own session: the renderers
                os.killpg(self.process.pid, signal.SIGKILL)  # go with it
        self.process.wait(timeout=30)
        for fd in (self._to, self._from):
            with contextlib.suppress(OSError):
                os.close(fd)
        self.log.close()
        self.profile.cleanup()

    def _fail(self, why: str) -> BrowserError:
        """Kills the browser (the next call starts another) and says why, with its stderr."""
        self.log.flush()
        self.log.seek(0)
        tail = self.log.read()[-2000:].decode(errors="replace")
        self.close()
        return BrowserError(f"chromium: {why}\n{tail}")

    def _read_message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise self._fail(f"no answer within {self.timeout:g} s")
            ready, _, _ = select.select([self._from], [], [], left)
            if not ready:
                continue
            chunk = os.read(self._from, 1 << 20)
            if not chunk:
                raise self._fail(f"the browser closed its pipe (exit {self.process.poll()})")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        message = json.loads(raw)
        assert isinstance(message, dict)
        return message

    def send(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        """Sends a command and returns its result (the events that come first are kept)."""
        if self.dead:
            raise BrowserError("chromium: the browser is gone")
        self._next_id += 1
        ident = self._next_id
        message: dict[str, Any] = {"id": ident, "method": method, "params": params}
        if session is not None:
            message["sessionId"] = session
        data = json.dumps(message).encode() + b"\0"
        while data:
            _, ready, _ = select.select([], [self._to], [], self.timeout)
            if not ready:
                raise self._fail(f"{method}: the browser takes no command")
            try:
                data = data[os.write(self._to, data):]
            except OSError as error:  # a broken pipe: the browser is gone
                raise self._fail(f"{method}: {error}") from None
        deadline = time.monotonic() + self.timeout
        while True:
            answer = self._read_message(deadline)
            if answer.get("id") == ident:
                if "error" in answer:
                    raise BrowserError(f"chromium: {method}: {answer['error']}")
                result = answer.get("result", {})
                assert isinstance(result, dict)
                return result
            if "method" in answer:
                self._events.append(answer)

    def wait_for(self, method: str, session: str, **match: object) -> dict[str, Any]:
        """The params of the first event ``method`` of ``session`` whose params hold ``match``
        (kept or still to come)."""
        deadline = time.monotonic() + self.timeout
        while True:
            for k, event in enumerate(self._events):
                if (event["method"] == method and event.get("sessionId") == session
                        and all(event.get("params", {}).get(key) == value
                                for key, value in match.items())):
                    del self._events[k]
                    params = event.get("params", {})
                    assert isinstance(params, dict)
                    return params
            message = self._read_message(deadline)
            if "method" in message:
                self._events.append(message)

    def forget(self, session: str) -> None:
        """Drops the events kept of ``session`` and of the browser itself."""
        self._events = [e for e in self._events if e.get("sessionId") not in (session, None)]


class Browser:
    """Headless Chromium, started on first use and again after it died. ``timeout``: the
    longest wait for any one answer or event, in seconds."""

    def __init__(self, executable: str, timeout: float = 120.0) -> None:
        self.executable = executable
        self.timeout = timeout
        self._connection: _Connection | None = None

    @property
    def pid(self) -> int | None:
        """The running browser's process id (its process group's too), if one runs."""
        if self._connection is None or self._connection.dead:
            return None
        return self._connection.process.pid

    def close(self) -> None:
        if self._connection is not None and not self._connection.dead:
            self._connection.close()
        self._connection = None

    def _live(self) -> _Connection:
        if self._connection is None or self._connection.dead:
            self._connection = _Connection(self.executable, self.timeout)
        return self._connection

    def _open(self, url: Path | str, size: tuple[int, int], budget_ms: int | None,
              then: str) -> dict[str, Any]:
        """Loads ``url`` in a new tab of ``size``, waits for its load event or, given a
        ``budget_ms``, for that much virtual time, then runs command ``then`` on it."""
        address = url.as_uri() if isinstance(url, Path) else url
        browser = self._live()
        browser.timeout = self.timeout
        target = browser.send("Target.createTarget", url="about:blank")["targetId"]
        session = ""
        try:
            session = browser.send("Target.attachToTarget", targetId=target,
                                   flatten=True)["sessionId"]
            browser.send("Page.enable", session)
            browser.send("Page.setLifecycleEventsEnabled", session, enabled=True)
            browser.send("Network.enable", session)  # every file read afresh, as by a new
            browser.send("Network.setCacheDisabled", session, cacheDisabled=True)  # browser
            browser.send("Emulation.setDeviceMetricsOverride", session, width=size[0],
                         height=size[1], deviceScaleFactor=1, mobile=False)
            went = browser.send("Page.navigate", session, url=address)
            if went.get("errorText"):
                raise BrowserError(f"chromium: {address}: {went['errorText']}")
            # the load of this document (not of about:blank before it, nor of a frame in it)
            browser.wait_for("Page.lifecycleEvent", session, name="load",
                             frameId=went["frameId"], loaderId=went["loaderId"])
            if budget_ms is not None:  # as --virtual-time-budget: from the load on, timers
                # fire as fast as they come, the clock held while anything is fetched
                browser.send("Emulation.setVirtualTimePolicy", session,
                             policy="pauseIfNetworkFetchesPending", budget=budget_ms)
                browser.wait_for("Emulation.virtualTimeBudgetExpired", session)
            if then == "dom":
                return browser.send("Runtime.evaluate", session,
                                    expression="document.documentElement.outerHTML",
                                    returnByValue=True)
            return browser.send("Page.captureScreenshot", session, format="png")
        finally:
            if not browser.dead:
                browser.send("Target.closeTarget", targetId=target)
                browser.forget(session)

    def dom(self, url: Path | str, *, size: tuple[int, int] = (1000, 700),
            budget_ms: int | None = None) -> str:
        """What ``chromium --headless --dump-dom`` prints: the DOM after the scripts ran."""
        result = self._open(url, size, budget_ms, "dom")
        value = result["result"].get("value")
        if not isinstance(value, str):
            raise BrowserError(f"chromium: no DOM from {url}: {result}")
        return value

    def screenshot(self, url: Path | str, to: Path, *, size: tuple[int, int] = (1000, 700),
                   budget_ms: int | None = None) -> None:
        """Writes the PNG ``chromium --headless --screenshot`` would write to ``to``."""
        to.write_bytes(base64.b64decode(self._open(url, size, budget_ms, "png")["data"]))
