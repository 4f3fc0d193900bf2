"""One bot, talking protocol v1: handshake, timed requests, queued events, quit.

A :class:`Bot` speaks the protocol over its :class:`~referee.bots.transport.Transport`, which
its spawn makes when it starts: a :class:`~referee.bots.spawn.BotCommand` starts a
:class:`referee.bots.process.Process` (own process group, optional sandbox, resource limits,
stderr drained to a capped file). Requests are read with ``poll`` and ``os.read`` against a
monotonic deadline, so no bot can stall the referee: not one that is silent, writes half a line,
or floods its output.
Every way a bot breaks the protocol is a :class:`BotError` carrying its
:class:`~referee.game.faults.Fault` and a :class:`~referee.game.faults.Reason`.

>>> with Bot(BotCommand.of(["./greedy-bot"], workdir=Path("bots"))) as bot:  # doctest: +SKIP
...     bot.start(startup_ms=5000)
...     bot.send("match id demo-17 seat 1 ...")
...     answer = bot.request("go hand 7c Kd table 3h stock 24 ms 1000", timeout_ms=1000)
"""

from __future__ import annotations

import contextlib
import json
import time
from dataclasses import dataclass
from types import TracebackType
from typing import Protocol

from referee.bots.process import SpawnError
from referee.bots.transport import Spawn, Transport
from referee.game.faults import Fault, Reason
from referee.protocol import wire as protocol
from referee.protocol.escape import quote

LINE_MAX = 4096  #: longest answer line accepted, in bytes, without its newline
SEND_BATCH = 1 << 16  #: queued event bytes past which ``Bot.send`` writes at once
INFO_MAX = 1024  #: ``info`` lines are cut to this many characters
INFO_KEEP = 32  #: at most this many ``info`` lines are kept per request
INFO_BUDGET = 1 << 18  #: bytes of ``info`` lines (as JSON) kept per bot process (one match)
CHUNK = 1 << 16
STOP_POLL_S = 0.1  #: how often a start-up wait looks at its stop event, in seconds


class CancelSignal(Protocol):
    """What a bot starting up, or a running match, watches to know it must stop: a
    :class:`threading.Event` is one, and so is a cancel signal that crosses process boundaries
    (see :mod:`referee.runners.local`)."""

    def is_set(self) -> bool:
        """Whether to stop."""
        ...


class BotError(RuntimeError):
    """A bot broke the protocol: :attr:`fault` is the fault to record, :attr:`code` the
    reason (what tools key on), :attr:`detail` the one-line message for people, and
    :attr:`quoted` the offending bot text, quoted as in the detail (``None``: there is none)."""

    fault = Fault.CRASH

    def __init__(self, detail: str, *, code: Reason, fault: Fault | None = None,
                 quoted: str | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.code = code
        self.quoted = quoted
        if fault is not None:
            self.fault = fault


class BotTimeout(BotError):
    """No complete answer line within the time allowed."""

    fault = Fault.TIMEOUT


class BotCrash(BotError):
    """The process exited or closed its stdout (or its stdin)."""

    fault = Fault.CRASH


class BotGarbled(BotError):
    """A line over :data:`LINE_MAX` bytes, or a line that arrived when no request was
    pending."""

    fault = Fault.GARBLED


class BotMemory(BotError):
    """The memory limit killed a process of the bot (where a memory cgroup tells)."""

    fault = Fault.MEMORY


class BotStartupError(BotError):
    """No ``ready`` within the start-up limit, a wrong first line, or an exit before it; the
    code says which (as the error it stands for would)."""

    fault = Fault.STARTUP


@dataclass(frozen=True)
class Answer:
    """One answer line, the time it took and the ``info`` comments that came with it (their
    text, after ``info ``)."""

    line: str
    ms: float
    info: tuple[str, ...] = ()


class Bot:
    """One bot, talking protocol v1 over its transport, which ``spawn`` makes when the bot
    starts (:class:`referee.bots.spawn.BotCommand`: its process; a
    :class:`~referee.bots.transport.MockTransport` is its own).

    Call :meth:`close` (or :meth:`forfeit`) after any error; the context manager does it.
    """

    def __init__(self, spawn: Spawn) -> None:
        self.spawn = spawn
        self.name = ""
        self.process: Transport | None = None
        self._buf = bytearray()
        self._pending = bytearray()  # event bytes the bot's full stdin pipe has not taken
        self._eof = self._broken = self._closed = False
        self._info_left = INFO_BUDGET

    @property
    def pid(self) -> int | None:
        """The process id (of the outermost wrapper, which leads the group), once started."""
        return self.process.pid if self.process else None

    # -- life cycle ----------------------------------------------------------------------

    def start(self, startup_ms: float, stop: CancelSignal | None = None) -> str:
        """Spawn the bot (unless it was: its spawn is called once), send ``chinese-ten 1``
        (:data:`referee.protocol.wire.HELLO`) and wait for ``ready [name]``.

        :param stop: when set while waiting, give up within :data:`STOP_POLL_S` seconds.
        :return: the name it gave (``""`` if none).
        :raises referee.bots.process.BotCommandError: if the command cannot be found or sandboxed.
        :raises BotStartupError: on anything else that goes wrong before ``ready`` (or if
            ``stop`` was set, or it could not be spawned, twice); its code is the one of the
            error it stands for.
        :raises BotMemory: if the memory limit killed it before ``ready``.
        """
        if self.process is None:
            try:  # a spawn tries twice (fork EAGAIN, say), then it is a fault of the seat
                self.process = self.spawn()
            except SpawnError as err:
                raise BotStartupError(str(err), code=Reason.SPAWN_FAILED) from None
        try:
            return self._handshake(startup_ms, stop)
        finally:  # ready or not: a bot that failed its start burns at the least weight too
            self._on_move(False)

    def _handshake(self, startup_ms: float, stop: CancelSignal | None) -> str:
        """``chinese-ten 1``, then ``ready [name]`` within ``startup_ms`` (see :meth:`start`)."""
        try:
            deadline = time.monotonic() + startup_ms / 1000
            self._write(f"{protocol.HELLO}\n".encode(), deadline)
            line = self._wait_ready(deadline, stop)
        except BotTimeout as e:
            raise BotStartupError(f"no ready within {startup_ms:g} ms", code=e.code,
                                  quoted=e.quoted) from None
        except BotCrash as e:
            self._check_memory(e)
            raise BotStartupError(f"{e.detail} before ready", code=e.code) from None
        except BotGarbled as e:
            raise BotStartupError(f"wrong first line: {e.detail}", code=e.code,
                                  quoted=e.quoted) from None
        try:
            self.name = protocol.parse_ready(line)[:74].strip()
        except protocol.GarbledError as err:
            raise BotStartupError(str(err), code=Reason.NOT_READY, quoted=quote(line)) from None
        return self.name

    def _on_move(self, moving: bool) -> None:
        """Whether the bot is on move, for its CPU weight (see
        :meth:`referee.bots.cgroups.Cgroup.on_move`; a bot without a cpu cgroup: nothing)."""
        cgroup = self.process.cgroup if self.process is not None else None
        if cgroup is not None:
            cgroup.on_move(moving)

    def _wait_ready(self, deadline: float, stop: CancelSignal | None) -> str:
        """The first line, waited for in slices of :data:`STOP_POLL_S` while ``stop`` is
        unset."""
        if stop is None:
            return self._wait_line(deadline, [])
        while True:
            if stop.is_set():
                raise BotStartupError("stopped before ready", code=Reason.STOPPED)
            try:
                return self._wait_line(min(deadline, time.monotonic() + STOP_POLL_S), [])
            except BotTimeout:
                if time.monotonic() >= deadline:
                    raise

    def close(self, grace_ms: float = 200) -> None:
        """Send ``quit``, give the bot ``grace_ms`` to exit, then kill its process group.

        Idempotent, and safe after any fault.
        """
        if self._closed:
            return
        self._closed = True
        if self.process is None:
            return
        if not self._broken:
            with contextlib.suppress(OSError):
                self.process.write(self._pending + b"quit\n")
        self.process.stop(grace_ms / 1000)

    def forfeit(self, fault: Fault) -> None:
        """Tell the bot ``forfeit <fault>``, then :meth:`close` it."""
        self.send(protocol.format_forfeit(fault))
        self.close()

    @property
    def returncode(self) -> int | None:
        """The exit status once closed (negative: killed by that signal), else ``None``."""
        return self.process.returncode if self.process else None

    def __enter__(self) -> Bot:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<Bot {str(self.spawn)!r} pid={self.pid}>"

    # -- talking -------------------------------------------------------------------------

    def send(self, line: str) -> None:
        """Queue an event line. Queued lines go out in order, in one write with the next request
        (or :meth:`close`), so events cost the bot no extra wake-up; past :data:`SEND_BATCH`
        bytes they are written at once. Never raises nor blocks: a full pipe keeps the rest for
        later, a broken one is remembered and the next request raises :class:`BotCrash`."""
        if self.process is None or self._broken or self._closed:
            return
        self._pending += line.encode("ascii", "replace") + b"\n"
        if len(self._pending) >= SEND_BATCH:
            self._push()

    def request(self, line: str, timeout_ms: float) -> Answer:
        """Write a request line and wait for one complete non-``info`` answer line.

        Lines already waiting before the request are unsolicited (``info`` lines excepted).

        :raises BotGarbled: on an unsolicited or over-long line.
        :raises BotTimeout: if no answer line is complete within ``timeout_ms``.
        :raises BotCrash: if the bot exited or closed its stdin or stdout.
        """
        if self.process is None or self._closed:
            raise BotCrash("bot is not running", code=Reason.NOT_RUNNING)
        info: list[str] = []
        if self._buf or self._eof or self.process.wait_readable(0):
            try:
                self._check_unsolicited(info)
            except BotCrash as e:
                self._check_memory(e)
                raise
        data = line.encode("ascii", "replace") + b"\n"
        self._on_move(True)
        t0 = time.monotonic()
        deadline = t0 + timeout_ms / 1000
        try:
            self._write(data, deadline)
            answer = self._wait_line(deadline, info)
        except BotCrash as e:
            self._check_memory(e)
            raise
        except BotTimeout as e:
            self._check_memory(e)
            waited = (time.monotonic() - t0) * 1000
            raise BotTimeout(f"no answer within {timeout_ms:g} ms (waited {waited:.0f} ms)"
                             f"{e.detail}", code=e.code, quoted=e.quoted) from None
        finally:
            self._on_move(False)
        kept, self._info_left = _budget(info, self._info_left)
        return Answer(answer, (time.monotonic() - t0) * 1000, kept)

    def drain(self, wait_ms: float, *, quit: bool = False) -> str:
        """Return the bot's unread stdout, partial line included, after waiting up to
        ``wait_ms`` for a complete line (with ``quit``: for the bot to close its stdout, after
        ``quit`` is sent and its stdin closed). For diagnosis after a timeout: a late answer
        shows up, and at ``quit`` an answer the bot held in an unflushed buffer. Call
        :meth:`close` afterwards as usual.
        """
        if self.process is None or self._closed:
            return ""
        if quit and not self._broken:
            with contextlib.suppress(OSError):
                self.process.write(self._pending + b"quit\n")
            self._pending.clear()
            self._broken = True  # nothing more is written to it
            self.process.close_stdin()
        deadline = time.monotonic() + wait_ms / 1000
        while not self._eof and (quit or b"\n" not in self._buf):
            wait = deadline - time.monotonic()
            if wait <= 0 or len(self._buf) > LINE_MAX:
                break
            if self.process.wait_readable(wait):
                self._fill()
        text = self._buf.decode("ascii", "replace")
        self._buf.clear()
        return text

    # -- internals -----------------------------------------------------------------------

    def _check_unsolicited(self, info: list[str]) -> None:
        assert self.process is not None
        for _ in range(16):  # bounded: a bot flooding info lines cannot keep us here
            if not self.process.wait_readable(0) or not self._fill():
                break
        while (text := _take_line(self._buf)) is not None:
            if not _keep_info(text, info):
                quoted = quote(text)
                raise BotGarbled(f"unsolicited line: {quoted}", code=Reason.UNSOLICITED,
                                 quoted=quoted)
        if self._eof:
            raise _crash(self.process)

    def _push(self) -> bool:
        """Writes as much of the queued bytes as the pipe takes now, without blocking;
        ``False`` (and remembered) if the bot closed its input."""
        assert self.process is not None
        try:
            del self._pending[: self.process.write(self._pending)]
        except BlockingIOError:
            pass
        except OSError:
            self._broken = True
        return not self._broken

    def _write(self, data: bytes, deadline: float) -> None:
        """Queues ``data`` after the pending events and writes it all by ``deadline``."""
        assert self.process is not None
        if self._broken:
            raise _crash(self.process, closed_input=True)
        self._pending += data
        while True:
            if not self._push():
                raise _crash(self.process, closed_input=True)
            if not self._pending:
                return
            wait = deadline - time.monotonic()
            if wait <= 0:
                raise BotTimeout(" (it does not read its input)", code=Reason.NOT_READING)
            self.process.wait_writable(wait)

    def _fill(self) -> bool:
        """Read what is there into the buffer; ``False`` at EOF."""
        assert self.process is not None
        try:
            chunk = self.process.read(CHUNK)
        except BlockingIOError:
            return True
        if chunk:
            self._buf += chunk
            return True
        self._eof = True
        return False

    def _wait_line(self, deadline: float, info: list[str]) -> str:
        """Wait for one complete non-``info`` line until ``deadline``."""
        buf = self._buf
        process = self.process
        assert process is not None
        while True:
            text = _take_line(buf) if buf else None
            if text is not None:
                if text.startswith("info") and _keep_info(text, info):
                    continue
                return text
            if self._eof:
                raise _crash(process)
            wait = deadline - time.monotonic()
            if wait <= 0:
                if not buf:
                    raise BotTimeout("", code=Reason.NO_ANSWER)
                quoted = quote(buf)
                raise BotTimeout(f", partial line {quoted}", code=Reason.PARTIAL_LINE,
                                 quoted=quoted)
            if process.wait_readable(wait + 0.001, or_exit=True):
                try:
                    chunk = process.read(CHUNK)
                except BlockingIOError:
                    if process.exit_status(0):  # a process the leader left holds stdout
                        raise _crash(process) from None
                    continue
                if chunk:
                    buf += chunk
                else:
                    self._eof = True

    def _check_memory(self, err: BotError) -> None:
        """Raise :class:`BotMemory` instead of ``err`` if the memory limit killed a process
        of the bot."""
        if self.process is not None and self.process.memory_fault():
            raise BotMemory(f"memory limit ({self.spawn.memory_mb} MiB) exceeded: "
                            f"{err.detail.strip(' ,')}", code=Reason.OUT_OF_MEMORY) from None


def _budget(info: list[str], left: int) -> tuple[tuple[str, ...], int]:
    """The ``info`` lines that fit in ``left`` bytes of :data:`INFO_BUDGET`, and what is left
    then: each counted as the record writes it (JSON: a control character or a replaced byte
    costs six), so a bot cannot bloat its match record past the budget whatever it sends."""
    kept: list[str] = []
    for text in info:
        cost = len(json.dumps(text)) - 2
        if cost > left:
            return tuple(kept), 0
        left -= cost
        kept.append(text)
    return tuple(kept), left


def _take_line(buf: bytearray) -> str | None:
    """Pop one complete line from ``buf``, without its ``\\r\\n``."""
    i = buf.find(b"\n")
    if i < 0:
        if len(buf) > LINE_MAX:
            raise _long_line(buf)
        return None
    if i > LINE_MAX + 1 or (i == LINE_MAX + 1 and buf[i - 1] != 13):
        raise _long_line(buf)
    end = i - 1 if i and buf[i - 1] == 13 else i
    text = buf[:end].decode("ascii", "replace")
    del buf[: i + 1]
    return text


def _crash(process: Transport, closed_input: bool = False) -> BotCrash:
    """The crash error: how ``process`` exited if it did (within 0.1 s), else which of its
    pipes it closed."""
    status = process.exit_status(0.1)
    if status:
        return BotCrash(status, code=Reason.EXITED)
    if closed_input:
        return BotCrash("closed its input", code=Reason.CLOSED_INPUT)
    return BotCrash("closed its output", code=Reason.CLOSED_OUTPUT)


def _long_line(buf: bytearray) -> BotGarbled:
    quoted = quote(buf)
    return BotGarbled(f"line over {LINE_MAX} bytes: {quoted}", code=Reason.LONG_LINE,
                      quoted=quoted)


def _keep_info(text: str, info: list[str]) -> bool:
    """If ``text`` is an ``info`` comment, keep its text (after ``info ``) in ``info`` (cut,
    bounded) and say so."""
    if text.startswith("info ") or text == "info":
        if len(info) < INFO_KEEP:
            info.append(text[5:][:INFO_MAX])
        return True
    return False
