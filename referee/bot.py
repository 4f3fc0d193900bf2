"""One bot process: spawn, handshake, timed requests, capped stderr, quit and kill.

A :class:`Bot` runs in its own session and process group (Ctrl-C at the referee's terminal
does not reach it), optionally inside a bubblewrap sandbox, under resource limits set by the
``prlimit`` wrapper (or, where ``prlimit`` is missing, by ``setrlimit`` in a ``preexec_fn``
between fork and exec). Requests are read with ``poll`` and ``os.read`` against a monotonic
deadline, so no bot can stall the referee: not one that is silent, writes half a line, or floods
its output. Its stderr is drained at all times by a daemon thread into a size-capped file.

>>> with Bot(["./greedy-bot"], workdir=Path("bots")) as bot:  # doctest: +SKIP
...     bot.start(startup_ms=5000)
...     bot.send("match id demo-17 seat 1 ...")
...     answer = bot.request("go hand 7c Kd table 3h stock 24 ms 1000", timeout_ms=1000)
"""

from __future__ import annotations

import contextlib
import functools
import logging
import math
import os
import resource
import select
import shlex
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import BinaryIO

from referee import protocol

logger = logging.getLogger(__name__)

FAULTS = ("timeout", "illegal", "garbled", "crash", "startup")

LINE_MAX = 4096  #: longest answer line accepted, in bytes, without its newline
SEND_BATCH = 1 << 16  #: queued event bytes past which ``Bot.send`` writes at once
INFO_MAX = 1024  #: ``info`` lines are cut to this many characters
INFO_KEEP = 32  #: at most this many ``info`` lines are kept per request
CHUNK = 1 << 16
STOP_POLL_S = 0.1  #: how often a start-up wait looks at its stop event, in seconds
_POLLIN = select.POLLIN | select.POLLHUP | select.POLLERR
_SPAWNER = ThreadPoolExecutor(1, thread_name_prefix="bot-spawner")
"""Every bot is forked from this one thread, which lives as long as the referee."""


class BotError(RuntimeError):
    """A bot broke the protocol; :attr:`fault` names the fault, :attr:`detail` says how."""

    fault = "crash"

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class BotTimeout(BotError):
    """No complete answer line within the time allowed."""

    fault = "timeout"


class BotCrash(BotError):
    """The process exited or closed its stdout (or its stdin)."""

    fault = "crash"


class BotGarbled(BotError):
    """A line over 4 KiB, or a line that arrived when no request was pending."""

    fault = "garbled"


class BotStartupError(BotError):
    """No ``ready`` within the start-up limit, a wrong first line, or an exit before it."""

    fault = "startup"


class BotCommandError(ValueError):
    """The bot's command cannot be started at all (empty, unparsable, not found, not
    executable, or a script it names is missing); the message is one line."""


@dataclass(frozen=True)
class Answer:
    """One answer line, the time it took and the ``info`` lines that came with it."""

    line: str
    ms: float
    info: tuple[str, ...] = ()


def _quote(data: str | bytes, limit: int = 80) -> str:
    """Quote a bot's text for a one-line message, cut to about ``limit`` characters."""
    if isinstance(data, bytes | bytearray):
        data = bytes(data[: limit + 1]).decode("ascii", "replace")
    text = repr(data[:limit])
    return text + "..." if len(data) > limit else text


SCRIPT_SUFFIXES = (".py", ".js", ".mjs", ".cjs", ".ts", ".rb", ".pl", ".sh", ".bash", ".jar",
                   ".lua", ".php", ".R", ".jl", ".exs", ".dart", ".hs", ".tcl")
"""Command arguments with these endings are taken for script files, which must exist."""


def split_command(command: str | Sequence[str]) -> list[str]:
    """Split a command string like a POSIX shell would; pass a sequence through as a list.

    :raises BotCommandError: for an empty command or one a shell could not split (an unclosed
        quote, say).
    """
    if isinstance(command, str):
        try:
            argv = shlex.split(command)
        except ValueError as err:
            raise BotCommandError(f"cannot split the command line: {err}") from None
    else:
        argv = [str(a) for a in command]
    if not argv:
        raise BotCommandError("empty bot command")
    if any("\0" in a for a in argv):
        raise BotCommandError("the command line holds a NUL character")
    return argv


def resolve_command(command: str | Sequence[str], workdir: Path | str | None = None) -> list[str]:
    """Split ``command`` and check that it can be started in ``workdir`` (default: the current
    folder): its program is found and executable (with a slash, relative to ``workdir``; else
    on ``PATH``), and every argument that names a script (see :data:`SCRIPT_SUFFIXES`, options
    excepted) exists. Return the argument list.

    :raises BotCommandError: saying, in one line, what is wrong.
    """
    argv = split_command(command)
    folder = Path(workdir or os.getcwd()).absolute()
    if which_command(argv, folder) is None:
        raise BotCommandError(_not_found(argv[0], folder))
    for arg in argv[1:]:
        if arg.endswith(SCRIPT_SUFFIXES) and not arg.startswith("-"):
            path = folder / arg
            if not path.exists():
                raise BotCommandError(f"{arg!r} does not exist (bot script not found: "
                                      f"{str(path)!r})")
    return argv


def _not_found(prog: str, workdir: Path) -> str:
    where = f"in {str(workdir)!r}" if "/" in prog else "on PATH"
    return f"{prog!r} not found or not executable {where}"


def which_command(argv: Sequence[str], workdir: Path | str | None = None) -> str | None:
    """Resolve ``argv[0]`` like ``execvp`` would: with a slash relative to ``workdir``, else
    on ``PATH``. Return the absolute path of the executable file, or ``None``."""
    if not argv:
        return None
    prog = argv[0]
    if "/" in prog:
        path = Path(workdir or ".", prog).absolute()
        ok = path.is_file() and os.access(path, os.X_OK)
        return str(path) if ok else None
    found = shutil.which(prog)
    return str(Path(found).absolute()) if found else None


@functools.cache
def bwrap_available() -> bool:
    """Whether ``bwrap`` is installed and can build the sandbox here (checked once)."""
    if not shutil.which("bwrap"):
        return False
    argv = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
            "--unshare-net", "--unshare-pid", "--unshare-ipc", "--", "true"]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


@functools.cache
def _warn_no_bwrap() -> None:
    logger.warning("bwrap is not available: bots run without a sandbox")


def resolve_sandbox(mode: str, *, warn: bool = True) -> str:
    """Turn a configured sandbox mode (``auto``, ``bwrap``, ``none``) into ``bwrap`` or
    ``none``. ``auto`` without a working ``bwrap`` logs a warning once per process (unless
    ``warn`` is false: the caller tells the user itself).

    :raises BotCommandError: for an unknown mode, or ``bwrap`` where it does not work.
    """
    if mode == "none":
        return "none"
    if mode not in ("auto", "bwrap"):
        raise BotCommandError(f"unknown sandbox mode: {mode!r} (use auto, bwrap or none)")
    if bwrap_available():
        return "bwrap"
    if mode == "bwrap":
        raise BotCommandError("sandbox 'bwrap' requested but bwrap is missing or does not work")
    if warn:
        _warn_no_bwrap()
    return "none"


def _bwrap_argv(argv: list[str], workdir: Path, hide: Sequence[Path], tmp_mb: int) -> list[str]:
    """The ``bwrap`` command line that runs ``argv`` in ``workdir``: read-only file system,
    private ``/tmp``, no network, own pid and IPC namespaces, ``hide`` folders empty (except
    one that holds the bot's own files: see :func:`_hideable`)."""
    cmd = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    if tmp_mb > 0:
        cmd += ["--size", str(tmp_mb << 20)]
    cmd += ["--tmpfs", "/tmp"]
    # The empty /tmp would hide a bot (or its interpreter, or its venv) that lives under /tmp:
    # bind back, read-only, each top-level /tmp entry that the command line names.
    tmp = Path("/tmp")
    named = _named_paths(argv, workdir)
    for path in named:
        if path.is_relative_to(tmp) and path != tmp:
            top = str(tmp / path.relative_to(tmp).parts[0])
            if top not in cmd:
                cmd += ["--ro-bind", top, top]
    cmd += ["--unshare-net", "--unshare-pid", "--unshare-ipc", "--die-with-parent"]
    for folder in hide:
        folder = Path(folder).absolute()
        if not _hideable(folder, named):
            continue
        if folder.is_dir():
            cmd += ["--tmpfs", str(folder)]
        elif folder.exists():
            cmd += ["--ro-bind", "/dev/null", str(folder)]
    return [*cmd, "--chdir", str(workdir), "--", *argv]


def _named_paths(argv: Sequence[str], workdir: Path) -> list[Path]:
    """The existing paths the bot needs: its folder, every argument that names a file or folder
    (relative to ``workdir``), its program and the interpreter on its ``#!`` line."""
    which = which_command(argv, workdir)
    found: list[Path] = []
    for arg in [str(workdir), *argv, *([which] if which else []), *_shebang(argv, workdir)]:
        if not arg:
            continue
        path = Path(workdir, arg).absolute()
        with contextlib.suppress(OSError):
            if path.exists() and path not in found:
                found.append(path)
    return found


def _hideable(folder: Path, named: Sequence[Path]) -> bool:
    """Whether ``folder`` may be hidden: not if it holds (or is) the bot's folder or a path its
    command line names: a hidden folder must never hide the bot from itself."""
    try:
        real = folder.resolve()
    except OSError:
        real = folder
    for path in named:
        try:
            target = path.resolve()
        except OSError:
            target = path
        if path.is_relative_to(folder) or target.is_relative_to(real):
            _warn_not_hidden(str(folder), str(path))
            return False
    return True


@functools.cache
def _warn_not_hidden(folder: str, path: str) -> None:
    logger.warning("not hiding %s from the bot: it holds the bot's own files (%s)", folder, path)


def _shebang(argv: Sequence[str], workdir: Path) -> list[str]:
    """The interpreter named on the ``#!`` line of the bot's executable, if any."""
    path = which_command(argv, workdir)
    try:
        with open(path or "", "rb") as f:
            head = f.read(256)
    except OSError:
        return []
    if head[:2] != b"#!":
        return []
    return head[2:].split(b"\n")[0].decode(errors="replace").split()[:1]


def _limits(memory_mb: int, file_mb: int) -> list[tuple[int, int]]:
    limits = [(resource.RLIMIT_CORE, 0), (resource.RLIMIT_FSIZE, file_mb << 20)]
    if memory_mb > 0:
        limits.append((resource.RLIMIT_AS, memory_mb << 20))
    return limits


def stderr_tail(path: Path | None, lines: int = 6) -> list[str]:
    """The last ``lines`` lines of a bot's stderr file (``[]`` if there is none): for showing
    why a bot failed. Read it after :meth:`Bot.close`, which flushes the file."""
    if path is None:
        return []
    try:
        text = path.read_text("utf-8", "replace")
    except OSError:
        return []
    return text.splitlines()[-lines:]


def _drain_stderr(fd: int, wake: int, out: BinaryIO | None, cap: int) -> None:
    """Copy the bot's stderr into ``out`` (at most ``cap`` bytes, then a note) and discard
    the rest, until EOF or a byte on the ``wake`` pipe."""
    written, cut = 0, False
    poller = select.poll()
    poller.register(fd, _POLLIN)
    poller.register(wake, _POLLIN)
    try:
        while True:
            ready = {f for f, _ in poller.poll()}
            if fd not in ready:
                return  # woken by close(): a process outside the group holds the pipe
            chunk = os.read(fd, CHUNK)
            if not chunk:
                return
            if out is None or cut:
                continue
            room = cap - written
            out.write(chunk[:room])
            written += min(room, len(chunk))
            if len(chunk) > room:
                cut = True
                out.write(f"\n[ct-referee: stderr cut at {cap} bytes]\n".encode())
    except OSError:
        return
    finally:
        if out:
            out.close()
        os.close(fd)
        os.close(wake)


class Bot:
    """One bot process, talking protocol v1 over its stdin and stdout.

    :param command: the command, a string (split like a shell would) or an argument list.
    :param workdir: the folder it runs in (and its relative ``argv[0]`` is found in).
    :param stderr_path: where its stderr goes (parents created); ``None`` discards it.
    :param stderr_cap: at most this many bytes of stderr are kept.
    :param sandbox: ``auto``, ``bwrap`` or ``none``.
    :param hide: folders the sandboxed bot sees empty (files: it cannot read them).
    :param memory_mb: address-space limit in MiB (0: none).
    :param file_mb: largest file it may write, in MiB.
    :param tmp_mb: size of the sandbox's private ``/tmp``, in MiB (0: tmpfs default).

    Call :meth:`close` (or :meth:`forfeit`) after any error; the context manager does it.
    """

    def __init__(self, command: str | Sequence[str], *, workdir: Path | None = None,
                 stderr_path: Path | None = None, stderr_cap: int = 1 << 20,
                 sandbox: str = "none", hide: Sequence[Path] = (), memory_mb: int = 0,
                 file_mb: int = 64, tmp_mb: int = 256) -> None:
        self.argv = split_command(command)
        self.workdir = Path(workdir or os.getcwd()).absolute()
        self.stderr_path = stderr_path
        self.stderr_cap = stderr_cap
        self.sandbox = sandbox
        self.hide = tuple(hide)
        self.memory_mb = memory_mb
        self.file_mb = file_mb
        self.tmp_mb = tmp_mb
        self.name = ""
        self.pid: int | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._in = self._out = -1
        self._buf = bytearray()
        self._pending = bytearray()  # event bytes the bot's full stdin pipe has not taken
        self._poll = select.poll()  # stdout
        self._poll_exit = select.poll()  # stdout and the leader's exit (pidfd)
        self._eof = self._broken = self._closed = False
        self._thread: threading.Thread | None = None
        self._wake = -1
        self._pidfd: int | None = None

    # -- life cycle ----------------------------------------------------------------------

    def start(self, startup_ms: float, stop: threading.Event | None = None) -> str:
        """Spawn the bot, send ``chinese-ten 1`` (:data:`referee.protocol.HELLO`) and wait for
        ``ready [name]``.

        :param stop: when set while waiting, give up within :data:`STOP_POLL_S` seconds.
        :return: the name it gave (``""`` if none).
        :raises BotCommandError: if the command cannot be started.
        :raises BotStartupError: on anything else that goes wrong before ``ready`` (or if
            ``stop`` was set).
        """
        self._spawn()
        try:
            deadline = time.monotonic() + startup_ms / 1000
            self._write(f"{protocol.HELLO}\n".encode(), deadline)
            line = self._wait_ready(deadline, stop)
        except BotTimeout:
            raise BotStartupError(f"no ready within {startup_ms:g} ms") from None
        except BotCrash as e:
            raise BotStartupError(f"{e.detail} before ready") from None
        except BotGarbled as e:
            raise BotStartupError(f"wrong first line: {e.detail}") from None
        try:
            self.name = protocol.parse_ready(line)[:74].strip()
        except protocol.GarbledError as err:
            raise BotStartupError(str(err)) from None
        return self.name

    def _wait_ready(self, deadline: float, stop: threading.Event | None) -> str:
        """The first line, waited for in slices of :data:`STOP_POLL_S` while ``stop`` is
        unset."""
        if stop is None:
            return self._wait_line(deadline, [])
        while True:
            if stop.is_set():
                raise BotStartupError("stopped before ready")
            try:
                return self._wait_line(min(deadline, time.monotonic() + STOP_POLL_S), [])
            except BotTimeout:
                if time.monotonic() >= deadline:
                    raise

    def _spawn(self) -> None:
        if which_command(self.argv, self.workdir) is None:
            raise BotCommandError(_not_found(self.argv[0], self.workdir))
        argv = self.argv
        if resolve_sandbox(self.sandbox) == "bwrap":
            argv = _bwrap_argv(argv, self.workdir, self.hide, self.tmp_mb)
        limits = _limits(self.memory_mb, self.file_mb)
        prlimit = _prlimit()
        preexec = None
        if prlimit:  # exec'd wrapper: no Python code runs between fork and exec
            names = {resource.RLIMIT_CORE: "core", resource.RLIMIT_FSIZE: "fsize",
                     resource.RLIMIT_AS: "as"}
            argv = [prlimit, *(f"--{names[k]}={v}" for k, v in limits), "--", *argv]
        else:
            def preexec() -> None:
                for key, value in limits:
                    resource.setrlimit(key, (value, value))
        out = None
        if self.stderr_path:
            self.stderr_path.parent.mkdir(parents=True, exist_ok=True)
            out = open(self.stderr_path, "wb", buffering=0)  # noqa: SIM115 (the thread closes it)
        try:
            # Forked from one long-lived thread: bwrap's --die-with-parent (PR_SET_PDEATHSIG)
            # fires when the *thread* that forked it exits, e.g. a short-lived start-up thread.
            proc = _SPAWNER.submit(
                subprocess.Popen, argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, cwd=self.workdir, start_new_session=True, bufsize=0,
                preexec_fn=preexec).result()
        except OSError as e:
            if out:
                out.close()
            raise BotCommandError(f"cannot start bot command {self.argv[0]!r}: {e}") from None
        assert proc.stdin and proc.stdout and proc.stderr
        self._proc, self.pid = proc, proc.pid
        self._in, self._out = proc.stdin.fileno(), proc.stdout.fileno()
        os.set_blocking(self._in, False)
        os.set_blocking(self._out, False)
        self._poll.register(self._out, _POLLIN)
        self._poll_exit.register(self._out, _POLLIN)
        self._pidfd = _pidfd_open(proc.pid)
        if self._pidfd is not None:
            self._poll_exit.register(self._pidfd, select.POLLIN)
        wake_r, self._wake = os.pipe()
        err_fd = os.dup(proc.stderr.fileno())
        proc.stderr.close()
        self._thread = threading.Thread(
            target=_drain_stderr, args=(err_fd, wake_r, out, self.stderr_cap),
            name=f"bot-stderr-{proc.pid}", daemon=True)
        self._thread.start()

    def close(self, grace_ms: float = 200) -> None:
        """Send ``quit``, give the bot ``grace_ms`` to exit, then kill its process group.

        Idempotent, and safe after any fault.
        """
        if self._closed:
            return
        self._closed = True
        proc = self._proc
        if proc is None:
            return
        if not self._broken:
            with contextlib.suppress(OSError):
                os.write(self._in, self._pending + b"quit\n")
        self._wait_exit(grace_ms / 1000)
        # The leader is not reaped yet (a zombie keeps its pid), so the group id is still
        # ours: kill the whole group even if the leader is gone.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=5)
        for f in (proc.stdin, proc.stdout):
            with contextlib.suppress(OSError):
                f.close()  # type: ignore[union-attr]
        if self._pidfd is not None:
            os.close(self._pidfd)
            self._pidfd = None
        if self._thread:
            self._thread.join(timeout=1)
            if self._thread.is_alive():  # a process that left the group holds stderr open
                with contextlib.suppress(OSError):
                    os.write(self._wake, b"x")
                self._thread.join(timeout=1)
        with contextlib.suppress(OSError):
            os.close(self._wake)

    def forfeit(self, fault: str) -> None:
        """Tell the bot ``forfeit <fault>``, then :meth:`close` it."""
        self.send(protocol.format_forfeit(fault))
        self.close()

    @property
    def returncode(self) -> int | None:
        """The exit status once closed (negative: killed by that signal), else ``None``."""
        return self._proc.returncode if self._proc else None

    def __enter__(self) -> Bot:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<Bot {shlex.join(self.argv)!r} pid={self.pid}>"

    # -- talking -------------------------------------------------------------------------

    def send(self, line: str) -> None:
        """Queue an event line. Queued lines go out in order, in one write with the next request
        (or :meth:`close`), so events cost the bot no extra wake-up; past :data:`SEND_BATCH`
        bytes they are written at once. Never raises nor blocks: a full pipe keeps the rest for
        later, a broken one is remembered and the next request raises :class:`BotCrash`."""
        if self._proc is None or self._broken or self._closed:
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
        if self._proc is None or self._closed:
            raise BotCrash("bot is not running")
        info: list[str] = []
        if self._buf or self._eof or self._poll.poll(0):
            self._check_unsolicited(info)
        data = line.encode("ascii", "replace") + b"\n"
        t0 = time.monotonic()
        deadline = t0 + timeout_ms / 1000
        try:
            self._write(data, deadline)
            answer = self._wait_line(deadline, info)
        except BotTimeout as e:
            waited = (time.monotonic() - t0) * 1000
            raise BotTimeout(f"no answer within {timeout_ms:g} ms (waited {waited:.0f} ms)"
                             f"{e.detail}") from None
        return Answer(answer, (time.monotonic() - t0) * 1000, tuple(info))

    def drain(self, wait_ms: float, *, quit: bool = False) -> str:
        """Return the bot's unread stdout, partial line included, after waiting up to
        ``wait_ms`` for a complete line (with ``quit``: for the bot to close its stdout, after
        ``quit`` is sent and its stdin closed). For diagnosis after a timeout: a late answer
        shows up, and at ``quit`` an answer the bot held in an unflushed buffer. Call
        :meth:`close` afterwards as usual.
        """
        if self._proc is None or self._closed:
            return ""
        if quit and not self._broken:
            with contextlib.suppress(OSError):
                os.write(self._in, self._pending + b"quit\n")
            self._pending.clear()
            self._broken = True  # nothing more is written to it
            with contextlib.suppress(OSError):
                self._proc.stdin.close()  # type: ignore[union-attr]
        deadline = time.monotonic() + wait_ms / 1000
        while not self._eof and (quit or b"\n" not in self._buf):
            wait = deadline - time.monotonic()
            if wait <= 0 or len(self._buf) > LINE_MAX:
                break
            if self._poll.poll(math.ceil(wait * 1000)):
                self._fill()
        text = self._buf.decode("ascii", "replace")
        self._buf.clear()
        return text

    # -- internals -----------------------------------------------------------------------

    def _check_unsolicited(self, info: list[str]) -> None:
        for _ in range(16):  # bounded: a bot flooding info lines cannot keep us here
            if not self._poll.poll(0) or not self._fill():
                break
        while (text := self._take_line()) is not None:
            if not _keep_info(text, info):
                raise BotGarbled(f"unsolicited line: {_quote(text)}")
        if self._eof:
            raise self._crash()

    def _push(self) -> bool:
        """Writes as much of the queued bytes as the pipe takes now, without blocking;
        ``False`` (and remembered) if the bot closed its input."""
        try:
            del self._pending[: os.write(self._in, self._pending)]
        except BlockingIOError:
            pass
        except OSError:
            self._broken = True
        return not self._broken

    def _write(self, data: bytes, deadline: float) -> None:
        """Queues ``data`` after the pending events and writes it all by ``deadline``."""
        if self._broken:
            raise self._crash("closed its input")
        self._pending += data
        poller = None
        while True:
            if not self._push():
                raise self._crash("closed its input")
            if not self._pending:
                return
            wait = deadline - time.monotonic()
            if wait <= 0:
                raise BotTimeout(" (it does not read its input)")
            if poller is None:
                poller = select.poll()
                poller.register(self._in, select.POLLOUT)
            poller.poll(math.ceil(wait * 1000))

    def _fill(self) -> bool:
        """Read what is there into the buffer; ``False`` at EOF."""
        try:
            chunk = os.read(self._out, CHUNK)
        except BlockingIOError:
            return True
        except OSError:
            chunk = b""
        if chunk:
            self._buf += chunk
            return True
        self._eof = True
        return False

    def _take_line(self) -> str | None:
        """Pop one complete line from the buffer, without its ``\\r\\n``."""
        buf = self._buf
        i = buf.find(b"\n")
        if i < 0:
            if len(buf) > LINE_MAX:
                raise BotGarbled(f"line over {LINE_MAX} bytes: {_quote(buf)}")
            return None
        if i > LINE_MAX + 1 or (i == LINE_MAX + 1 and buf[i - 1] != 13):
            raise BotGarbled(f"line over {LINE_MAX} bytes: {_quote(buf)}")
        end = i - 1 if i and buf[i - 1] == 13 else i
        text = buf[:end].decode("ascii", "replace")
        del buf[: i + 1]
        return text

    def _wait_line(self, deadline: float, info: list[str]) -> str:
        """Wait for one complete non-``info`` line until ``deadline``."""
        buf = self._buf
        while True:
            text = self._take_line() if buf else None
            if text is not None:
                if text.startswith("info") and _keep_info(text, info):
                    continue
                return text
            if self._eof:
                raise self._crash()
            wait = deadline - time.monotonic()
            if wait <= 0:
                part = f", partial line {_quote(buf)}" if buf else ""
                raise BotTimeout(part)
            if self._poll_exit.poll(int(wait * 1000) + 1):
                try:
                    chunk = os.read(self._out, CHUNK)
                except BlockingIOError:
                    if self._exit_status(0):  # a process the leader left holds stdout
                        raise self._crash() from None
                    continue
                except OSError:
                    chunk = b""
                if chunk:
                    buf += chunk
                else:
                    self._eof = True

    def _crash(self, what: str = "closed its output") -> BotCrash:
        status = self._exit_status(0.1)
        return BotCrash(status or what)

    def _wait_exit(self, seconds: float) -> bool:
        """Wait until the leader has exited, without reaping it."""
        if self._pidfd is not None:
            poller = select.poll()
            poller.register(self._pidfd, select.POLLIN)
            return bool(poller.poll(max(0, math.ceil(seconds * 1000))))
        deadline = time.monotonic() + seconds
        while self._exit_status(0) is None and time.monotonic() < deadline:
            time.sleep(0.005)
        return self._exit_status(0) is not None

    def _exit_status(self, wait_s: float) -> str | None:
        """Describe how the leader exited (``None`` if it is still running); no reaping."""
        proc = self._proc
        if proc is None:
            return None
        if proc.returncode is not None:
            return _describe(proc.returncode)
        if wait_s and not self._wait_exit(wait_s):
            return None
        try:
            got = os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return None
        if got is None:
            return None
        code = got.si_status if got.si_code == os.CLD_EXITED else -got.si_status
        return _describe(code)


def _describe(code: int) -> str:
    if code >= 0:
        return f"exited with code {code}"
    with contextlib.suppress(ValueError):
        return f"killed by {signal.Signals(-code).name}"
    return f"killed by signal {-code}"


def _keep_info(text: str, info: list[str]) -> bool:
    """If ``text`` is an ``info`` comment, keep it in ``info`` (cut, bounded) and say so."""
    if text.startswith("info ") or text == "info":
        if len(info) < INFO_KEEP:
            info.append(text[:INFO_MAX])
        return True
    return False


def _pidfd_open(pid: int) -> int | None:
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


@functools.cache
def _prlimit() -> str | None:
    return shutil.which("prlimit")
