"""Bot processes, without the protocol: commands, the sandbox, limits, spawning, stderr, kill.

:func:`start_process` runs a bot command in its own session and process group (Ctrl-C at the
referee's terminal does not reach it), optionally inside the :class:`Sandbox`, under
:class:`Rlimits`, forked by a :class:`Spawner`; its stderr is drained at all times by a daemon
thread into a size-capped file. The :class:`Process` it returns hands its stdin and stdout, both
non-blocking, to whoever speaks to it (:class:`referee.bot.Bot`), says how it exited, and kills
its whole group.

No Python code runs in the child between fork and exec (the referee is threaded): limits are set
by the ``prlimit`` wrapper, or, where it is missing, by ``resource.prlimit`` on the child's pid
while a ``/bin/sh`` gate holds it before it execs the bot.

>>> p = start_process(["./greedy-bot"], workdir=Path("bots"))  # doctest: +SKIP
>>> p.stop(grace_s=0.2)  # doctest: +SKIP
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
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Protocol

logger = logging.getLogger(__name__)

CHUNK = 1 << 16
_POLLIN = select.POLLIN | select.POLLHUP | select.POLLERR


class BotCommandError(ValueError):
    """The bot's command cannot be started at all (empty, unparsable, not found, not
    executable, or a script it names is missing); the message is one line."""


# -- commands -----------------------------------------------------------------------------------

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


# -- the sandbox --------------------------------------------------------------------------------


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


@dataclass(frozen=True)
class Sandbox:
    """The bubblewrap sandbox: read-only file system, private ``/tmp`` of ``tmp_mb`` MiB (0:
    tmpfs default), no network, own pid and IPC namespaces, the ``hide`` folders seen empty
    (files: unreadable), except one that holds the bot's own files."""

    hide: tuple[Path, ...] = ()
    tmp_mb: int = 256

    def wrap(self, argv: Sequence[str], workdir: Path) -> list[str]:
        """The ``bwrap`` command line that runs ``argv`` in ``workdir``."""
        cmd = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        if self.tmp_mb > 0:
            cmd += ["--size", str(self.tmp_mb << 20)]
        cmd += ["--tmpfs", "/tmp"]
        # The empty /tmp would hide a bot (or its interpreter, or its venv) that lives under
        # /tmp: bind back, read-only, each top-level /tmp entry that the command line names.
        tmp = Path("/tmp")
        named = _named_paths(argv, workdir)
        for path in named:
            if path.is_relative_to(tmp) and path != tmp:
                top = str(tmp / path.relative_to(tmp).parts[0])
                if top not in cmd:
                    cmd += ["--ro-bind", top, top]
        cmd += ["--unshare-net", "--unshare-pid", "--unshare-ipc", "--die-with-parent"]
        for folder in self.hide:
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


# -- limits -------------------------------------------------------------------------------------

_GATE = ["/bin/sh", "-c", 'IFS= read -r _ && exec "$@"', "ct-referee-gate"]
"""Waits for one line on stdin, then execs its arguments: holds the child while its limits are
set by pid. A shell reads a pipe a byte at a time, so the bot's input starts after that line."""


@dataclass(frozen=True)
class Rlimits:
    """Resource limits of a bot process (and of everything it starts): no core files, files up
    to ``file_mb`` MiB, an address space of ``memory_mb`` MiB (0: unlimited)."""

    memory_mb: int = 0
    file_mb: int = 64

    def pairs(self) -> list[tuple[int, int]]:
        """``(resource, bytes)`` for each limit set."""
        limits = [(resource.RLIMIT_CORE, 0), (resource.RLIMIT_FSIZE, self.file_mb << 20)]
        if self.memory_mb > 0:
            limits.append((resource.RLIMIT_AS, self.memory_mb << 20))
        return limits

    def wrap(self, argv: Sequence[str], *, prlimit: str | None) -> tuple[list[str], bool]:
        """The command line that runs ``argv`` under these limits: behind the ``prlimit``
        wrapper (path given) or else the gate; and whether it is the gate, which
        :meth:`apply` must then release."""
        if prlimit:
            names = {resource.RLIMIT_CORE: "core", resource.RLIMIT_FSIZE: "fsize",
                     resource.RLIMIT_AS: "as"}
            return [prlimit, *(f"--{names[k]}={v}" for k, v in self.pairs()), "--", *argv], False
        return [*_GATE, *argv], True

    def apply(self, pid: int) -> None:
        """Set the limits on the running process ``pid`` (held at the gate)."""
        for key, value in self.pairs():
            resource.prlimit(pid, key, (value, value))


@functools.cache
def _prlimit() -> str | None:
    return shutil.which("prlimit")


# -- spawning -----------------------------------------------------------------------------------


PopenCall = Callable[[], "subprocess.Popen[bytes]"]
"""A call of ``subprocess.Popen`` with its arguments bound."""


class Spawner(Protocol):
    """Runs the fork of a bot process (a call of ``subprocess.Popen``) somewhere."""

    def run(self, popen: PopenCall) -> subprocess.Popen[bytes]:
        """Call ``popen`` and return the process (or raise its ``OSError``)."""
        ...


class ThreadSpawner:
    """Forks every child from one thread of its own, which lives until :meth:`close`.

    bwrap's ``--die-with-parent`` (``PR_SET_PDEATHSIG``) fires when the *thread* that forked it
    exits: forking from a short-lived thread (a match's start-up thread) would kill the bot.
    """

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="bot-spawner")

    def run(self, popen: PopenCall) -> subprocess.Popen[bytes]:
        """Call ``popen`` on the spawner thread."""
        return self._pool.submit(popen).result()

    def close(self) -> None:
        """Stop the thread; sandboxed bots it forked are killed with it."""
        self._pool.shutdown()


@functools.cache
def default_spawner() -> ThreadSpawner:
    """The spawner bots use unless given one: made on first use, it lives as long as the
    referee."""
    return ThreadSpawner()


# -- one process --------------------------------------------------------------------------------


def start_process(argv: Sequence[str], *, workdir: Path, sandbox: Sandbox | None = None,
                  limits: Rlimits = Rlimits(),
                  stderr_path: Path | None = None, stderr_cap: int = 1 << 20,
                  spawner: Spawner | None = None) -> Process:
    """Start ``argv`` in ``workdir``, in its own session, under ``limits``, inside ``sandbox``
    (``None``: none), forked by ``spawner`` (default: :func:`default_spawner`); its stderr goes
    to ``stderr_path`` (parents created; ``None``: discarded), at most ``stderr_cap`` bytes.

    :raises BotCommandError: if the command cannot be started.
    """
    if which_command(argv, workdir) is None:
        raise BotCommandError(_not_found(argv[0], workdir))
    cmd = list(argv)
    if sandbox is not None:
        cmd = sandbox.wrap(cmd, workdir)
    cmd, gated = limits.wrap(cmd, prlimit=_prlimit())
    out = None
    if stderr_path:
        stderr_path.parent.mkdir(parents=True, exist_ok=True)
        out = open(stderr_path, "wb", buffering=0)  # noqa: SIM115 (the drain thread closes it)

    def popen() -> subprocess.Popen[bytes]:
        return subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, cwd=workdir, start_new_session=True,
                                bufsize=0)

    try:
        proc = (spawner or default_spawner()).run(popen)
    except OSError as e:
        if out:
            out.close()
        raise BotCommandError(f"cannot start bot command {argv[0]!r}: {e}") from None
    process = Process(proc, out, stderr_cap)
    if gated:
        try:
            limits.apply(proc.pid)
            os.write(process.stdin, b"\n")
        except OSError as e:
            process.stop(0)
            raise BotCommandError(f"cannot limit bot command {argv[0]!r}: {e}") from None
    os.set_blocking(process.stdin, False)
    return process


class Process:
    """A started bot process: its pipes, its exit, its stderr drain, and its group's kill.

    :attr:`stdin` and :attr:`stdout` are file descriptors, which the caller reads and writes;
    :attr:`stdout` is non-blocking, and :attr:`stdin` is once :func:`start_process` returns.
    """

    def __init__(self, proc: subprocess.Popen[bytes], out: BinaryIO | None, cap: int) -> None:
        assert proc.stdin and proc.stdout and proc.stderr
        self.pid = proc.pid
        self._proc = proc
        self.stdin, self.stdout = proc.stdin.fileno(), proc.stdout.fileno()
        os.set_blocking(self.stdout, False)
        self.pidfd = _pidfd_open(proc.pid)
        """A file descriptor readable once the leader has exited (``None`` where unsupported)."""
        wake_r, self._wake = os.pipe()
        err_fd = os.dup(proc.stderr.fileno())
        proc.stderr.close()
        self._thread = threading.Thread(
            target=_drain_stderr, args=(err_fd, wake_r, out, cap),
            name=f"bot-stderr-{proc.pid}", daemon=True)
        self._thread.start()
        self._stopped = False

    @property
    def returncode(self) -> int | None:
        """The exit status once stopped (negative: killed by that signal), else ``None``."""
        return self._proc.returncode

    @property
    def draining(self) -> bool:
        """Whether the stderr thread still runs."""
        return self._thread.is_alive()

    def close_stdin(self) -> None:
        """Close the bot's input (it reads end of file)."""
        with contextlib.suppress(OSError):
            self._proc.stdin.close()  # type: ignore[union-attr]

    def wait_exit(self, seconds: float) -> bool:
        """Wait until the leader has exited, without reaping it."""
        if self.pidfd is not None:
            poller = select.poll()
            poller.register(self.pidfd, select.POLLIN)
            return bool(poller.poll(max(0, math.ceil(seconds * 1000))))
        deadline = time.monotonic() + seconds
        while self.exit_status(0) is None and time.monotonic() < deadline:
            time.sleep(0.005)
        return self.exit_status(0) is not None

    def exit_status(self, wait_s: float) -> str | None:
        """Describe how the leader exited (``None`` if it is still running after ``wait_s``
        seconds); no reaping."""
        proc = self._proc
        if proc.returncode is not None:
            return describe_exit(proc.returncode)
        if wait_s and not self.wait_exit(wait_s):
            return None
        try:
            got = os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return None
        if got is None:
            return None
        code = got.si_status if got.si_code == os.CLD_EXITED else -got.si_status
        return describe_exit(code)

    def stop(self, grace_s: float) -> None:
        """Give the leader ``grace_s`` seconds to exit, kill the whole process group, reap the
        leader, close the pipes and finish the stderr file. Idempotent."""
        if self._stopped:
            return
        self._stopped = True
        proc = self._proc
        self.wait_exit(grace_s)
        # The leader is not reaped yet (a zombie keeps its pid), so the group id is still
        # ours: kill the whole group even if the leader is gone.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=5)
        for f in (proc.stdin, proc.stdout):
            with contextlib.suppress(OSError):
                f.close()  # type: ignore[union-attr]
        if self.pidfd is not None:
            os.close(self.pidfd)
            self.pidfd = None
        self._thread.join(timeout=1)
        if self._thread.is_alive():  # a process that left the group holds stderr open
            with contextlib.suppress(OSError):
                os.write(self._wake, b"x")
            self._thread.join(timeout=1)
        with contextlib.suppress(OSError):
            os.close(self._wake)


def describe_exit(code: int) -> str:
    """``exited with code 3``, ``killed by SIGKILL``: a return code in words."""
    if code >= 0:
        return f"exited with code {code}"
    with contextlib.suppress(ValueError):
        return f"killed by {signal.Signals(-code).name}"
    return f"killed by signal {-code}"


def stderr_tail(path: Path | None, lines: int = 6) -> list[str]:
    """The last ``lines`` lines of a bot's stderr file (``[]`` if there is none): for showing
    why a bot failed. Read it after the process is stopped, which flushes the file."""
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
                return  # woken by stop(): a process outside the group holds the pipe
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


def _pidfd_open(pid: int) -> int | None:
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None
