"""How a :class:`~referee.bots.bot.Bot` reaches its bot: the :class:`Transport` protocol, and
:class:`MockTransport`, a synchronous scripted double of it shipped with the package (as
python-chess ships its engine's ``MockTransport``).

A transport is the bot's process seen as bytes: written without blocking (:meth:`Transport.write`
takes what it can), read without blocking (:meth:`Transport.read`), and waited on until
readable, writable or exited, with the process's exit, memory fault and stop.
:class:`referee.bots.process.Process` is the real one (pipes, ``poll``, a pidfd); a
:class:`MockTransport` answers from a script, in the calling thread: no process, no pipe, no
thread, so a test of the ``Bot``'s protocol logic is decided by its script alone.

>>> t = MockTransport().expect("chinese-ten 1", "ready mock").expect("quit")
>>> bot = t.bot()
>>> bot.start(1000)
'mock'
>>> bot.close()
>>> t.assert_done()
"""

from __future__ import annotations

import time
from collections import deque
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from referee.bots.bot import Bot
    from referee.bots.cgroups import Cgroup

__all__ = ["MockTransport", "Spawn", "Transport"]


class Transport(Protocol):
    """A started bot as the :class:`~referee.bots.bot.Bot` drives it."""

    pid: int
    cgroup: Cgroup | None
    """Its cgroup (its CPU weight on and off move), ``None``: none."""

    @property
    def returncode(self) -> int | None:
        """The exit status once stopped (negative: killed by that signal), else ``None``."""

    def write(self, data: bytes | bytearray) -> int:
        """Writes what of ``data`` the bot's input takes now, without blocking; returns how
        many bytes.

        :raises BlockingIOError: if it takes nothing now.
        :raises OSError: if the bot closed its input.
        """

    def wait_writable(self, seconds: float) -> None:
        """Waits up to ``seconds`` until the bot's input takes more."""

    def read(self, size: int) -> bytes:
        """Up to ``size`` bytes of the bot's output that are there, without blocking; ``b""``
        at its end.

        :raises BlockingIOError: if none is there yet.
        """

    def wait_readable(self, seconds: float, *, or_exit: bool = False) -> bool:
        """Waits up to ``seconds`` for output (or its end; ``or_exit``: or the bot's exit);
        whether there is."""

    def exit_status(self, wait_s: float) -> str | None:
        """How the bot exited (``None``: still running after ``wait_s`` seconds)."""

    def memory_fault(self) -> bool:
        """Whether the memory limit killed a process of the bot."""

    def close_stdin(self) -> None:
        """Closes the bot's input (it reads end of file)."""

    def stop(self, grace_s: float) -> None:
        """Gives the bot ``grace_s`` to exit, then ends it and what it started."""


class Spawn(Protocol):
    """What makes a bot's transport when the :class:`~referee.bots.bot.Bot` starts:
    :class:`referee.bots.spawn.BotCommand` starts its process; a :class:`MockTransport` is its
    own."""

    @property
    def memory_mb(self) -> int:
        """The memory limit the bot runs under, in MiB, as its memory fault says (0: none)."""

    def __call__(self) -> Transport:
        """Start the bot.

        :raises referee.bots.process.SpawnError: if it could not be started.
        """


class MockTransport:
    """A bot played from a script, synchronously: each :meth:`expect` names a line the ``Bot``
    must write and the lines the bot answers with, which are there to read as soon as that line
    is written. The first line that differs ends the script at once (the bot "exits", and
    :meth:`assert_done` says what differed); so does the end of the script (the bot exits
    after answering its last expected line) and the ``Bot`` closing its input. Waiting for an
    answer that never comes takes the wait asked for, then says there is none."""

    def __init__(self) -> None:
        self.script: deque[tuple[str, tuple[str | bytes, ...]]] = deque()
        self.error: str | None = None
        self.pid = 0
        self.cgroup: Cgroup | None = None
        self.returncode: int | None = None
        self.ended = False
        """Whether the scripted bot has exited (its output ends once read)."""
        self._in = bytearray()
        self._out = bytearray()

    def say(self, *lines: str | bytes) -> MockTransport:
        """Lines the bot writes at once, before reading anything."""
        self._out += b"".join(_bytes(line) for line in lines)
        return self

    def expect(self, line: str, *answers: str | bytes) -> MockTransport:
        """The next line the ``Bot`` must write, and the lines the bot answers (none: it was an
        event); an answer in bytes is written as it is (a partial line, say)."""
        self.script.append((line, answers))
        return self

    memory_mb = 0
    """No memory limit: a script is its own :class:`Spawn`."""

    def __call__(self) -> MockTransport:
        return self

    def __str__(self) -> str:
        return "mock-bot"

    def bot(self) -> Bot:
        """A ``Bot`` speaking to this script (started by its :meth:`~Bot.start`)."""
        from referee.bots.bot import Bot

        bot = Bot(self)
        if not self.script:  # nothing to read: it exits once it has said its lines
            self._end()
        return bot

    def assert_done(self) -> None:
        """The ``Bot`` wrote every expected line and nothing else."""
        assert self.error is None, self.error
        assert not self.script, f"never written: {[line for line, _ in self.script]}"

    def _end(self, error: str | None = None) -> None:
        if not self.ended:
            self.ended, self.returncode = True, 0
            self.error = self.error or error

    # -- the Transport ----------------------------------------------------------------------

    def write(self, data: bytes | bytearray) -> int:
        if self.ended:
            raise BrokenPipeError("the scripted bot has exited")
        self._in += data
        while not self.ended and (i := self._in.find(b"\n")) >= 0:
            line = self._in[:i].decode("ascii", "replace")
            del self._in[: i + 1]
            if not self.script:
                self._end(f"nothing more expected, got {line!r}")
                break
            expected, answers = self.script.popleft()
            if line != expected:
                self._end(f"expected {expected!r}, got {line!r}")
                break
            self._out += b"".join(_bytes(answer) for answer in answers)
            if not self.script:
                self._end()
        return len(data)

    def wait_writable(self, seconds: float) -> None:
        """It always takes everything."""

    def read(self, size: int) -> bytes:
        if self._out:
            chunk = bytes(self._out[:size])
            del self._out[:size]
            return chunk
        if self.ended:
            return b""
        raise BlockingIOError("nothing written yet")

    def wait_readable(self, seconds: float, *, or_exit: bool = False) -> bool:
        if self._out or self.ended:
            return True
        time.sleep(max(0.0, seconds))  # nothing will come: the wait asked for, then none
        return False

    def exit_status(self, wait_s: float) -> str | None:
        if not self.ended:
            return None
        return f"mock script ended: {self.error}" if self.error else "exited with code 0"

    def memory_fault(self) -> bool:
        return False

    def close_stdin(self) -> None:
        if self.script:
            self._end(f"input closed, still expected {self.script[0][0]!r}")
        self._end()

    def stop(self, grace_s: float) -> None:
        self.close_stdin()


def _bytes(line: str | bytes) -> bytes:
    return line if isinstance(line, bytes) else f"{line}\n".encode()
