"""Bot processes, without the protocol: commands, the sandbox, limits, spawning, stderr, kill.

:func:`start_process` runs a bot command in its own session and process group (Ctrl-C at the
referee's terminal does not reach it), optionally inside the hardened sandbox
(:mod:`referee.bots.sandbox`, given a :class:`~referee.bots.policy.SandboxPolicy`), else under
:class:`~referee.bots.limits.Rlimits`, as its :class:`Launcher` says, forked by a
:class:`Spawner`; its stderr is drained at all times by a daemon
thread into a size-capped file. The :class:`Process` it returns hands its stdin and stdout, both
non-blocking, to whoever speaks to it (:class:`referee.bots.bot.Bot`), says how it exited, and kills
its whole group.

No Python code runs in the child between fork and exec (the referee is threaded): limits are set
by the ``prlimit`` wrapper, or, where it is missing, by ``resource.prlimit`` on the child's pid
while a ``/bin/sh`` gate holds it before it execs the bot; a sandboxed bot always starts behind
the gate, which holds it until it is in its cgroup.

>>> p = start_process(["./greedy-bot"], workdir=Path("bots"))  # doctest: +SKIP
>>> p.stop(grace_s=0.2)  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import functools
import logging
import math
import os
import select
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Protocol

from referee.bots.cgroups import Cgroup
from referee.bots.limits import Limits, Rlimits, SandboxMode
from referee.bots.policy import SandboxError, SandboxPolicy
from referee.bots.probing import capabilities
from referee.bots.resolve import Binds, which
from referee.bots.sandbox import Launch, prepare
from referee.bots.uids import Lease

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
        # A shell expands a leading ~ (~/bot.py, ~user/bot.py): so does a command string.
        argv = [os.path.expanduser(a) if a.startswith("~") else a for a in argv]
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


INTERPRETERS = {".py": "python3", ".js": "node", ".mjs": "node", ".cjs": "node",
                ".ts": "npx tsx", ".rb": "ruby", ".pl": "perl", ".sh": "sh", ".bash": "bash",
                ".jar": "java -jar", ".lua": "lua", ".php": "php", ".R": "Rscript",
                ".jl": "julia", ".exs": "elixir", ".dart": "dart run", ".hs": "runghc",
                ".tcl": "tclsh"}
"""The interpreter a script of each ending is run with, when its first line does not say."""


def interpreter(path: Path) -> str:
    """The command that runs the script ``path``: its ``#!`` line's (``/usr/bin/env perl``:
    ``perl``), else the one of its ending (:data:`INTERPRETERS`), else ``python3``."""
    try:
        with open(path, "rb") as f:
            first = f.readline(200).decode("utf-8", "replace").strip()
    except OSError:
        first = ""
    if first.startswith("#!"):
        words = first[2:].split()
        if words and Path(words[0]).name == "env" and len(words) > 1:
            words = [w for w in words[1:] if not w.startswith("-")]
        if words:
            return " ".join([Path(words[0]).name, *words[1:]])
    return INTERPRETERS.get(path.suffix, "python3")


def _not_found(prog: str, workdir: Path) -> str:
    path = workdir / prog
    if path.is_file() and not os.access(path, os.X_OK):
        how = (f"run it with its interpreter ({interpreter(path)} {prog}, say)"
               if prog.endswith(SCRIPT_SUFFIXES) or interpreter(path) != "python3"
               else f"chmod +x {prog}")
        return f"{prog!r} is in {str(workdir)!r} but not executable: {how}"
    if "/" not in prog and path.is_file():
        return (f"{prog!r} is not on PATH, but a file of that name is in {str(workdir)!r}: "
                f"write ./{prog}, or run it with its interpreter")
    if "/" not in prog:
        for venv in (Path(sys.executable).parent, workdir / ".venv" / "bin"):
            found = venv / prog
            if found.is_file() and os.access(found, os.X_OK):
                return (f"{prog!r} not found or not executable on PATH, but it is in a "
                        f"virtual environment: write {found} (or activate it: "
                        f". {venv}/activate)")
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
    found = which(prog)  # remembered per PATH: it was asked at every spawn
    return str(Path(found).absolute()) if found else None


# -- the sandbox --------------------------------------------------------------------------------


def bwrap_available() -> bool:
    """Whether the hardened sandbox can be built here, in some mode (probed once)."""
    return capabilities().works


@functools.cache
def _warn_no_bwrap() -> None:
    logger.warning("no working sandbox here: bots run unsandboxed (%s)", capabilities().summary())


def resolve_sandbox(mode: SandboxMode | str, *, warn: bool = True) -> SandboxMode:
    """Turn a configured sandbox mode into :attr:`SandboxMode.BWRAP` or :attr:`SandboxMode.NONE`.
    ``auto`` without a working sandbox logs a warning once per process (unless ``warn`` is
    false: the caller tells the user itself).

    :raises BotCommandError: for an unknown mode, or ``bwrap`` where it does not work.
    """
    try:
        mode = SandboxMode.parse(mode)
    except ValueError as err:
        raise BotCommandError(str(err)) from None
    if mode is SandboxMode.NONE:
        return mode
    if bwrap_available():
        return SandboxMode.BWRAP
    if mode is SandboxMode.BWRAP:
        raise BotCommandError(f"sandbox 'bwrap' requested but it does not work here: "
                              f"{capabilities().summary()} (see ct-referee sandbox)")
    if warn:
        _warn_no_bwrap()
    return SandboxMode.NONE


@dataclass(frozen=True)
class Launcher:
    """How bot processes start, worked out once (:meth:`resolve`) and handed to every spawn:
    inside the hardened sandbox under :attr:`policy`, or (``None``) unsandboxed under
    :attr:`rlimits`; at most :attr:`stderr_cap` bytes of stderr kept. Plain data: it travels to
    worker processes."""

    policy: SandboxPolicy | None = None
    rlimits: Rlimits = field(default_factory=Rlimits)
    stderr_cap: int = 1 << 20

    @classmethod
    def resolve(cls, mode: SandboxMode | str, limits: Limits, *, warn: bool = True) -> Launcher:
        """The launcher of bots under ``limits`` in sandbox ``mode`` on this machine (see
        :func:`resolve_sandbox`, whose errors it raises)."""
        boxed = resolve_sandbox(mode, warn=warn) is SandboxMode.BWRAP
        return cls(SandboxPolicy.of(limits) if boxed else None, limits.rlimits(),
                   limits.stderr_cap)

    @property
    def mode(self) -> SandboxMode:
        """``bwrap`` or ``none``: what the bots run in."""
        return SandboxMode.NONE if self.policy is None else SandboxMode.BWRAP


# -- limits -------------------------------------------------------------------------------------


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


def _process_cpus() -> None:
    """The calling thread back on the CPUs of the process's main thread: a thread starts on
    those of the thread that started it, and the spawner's is started by whichever thread
    first asks it to fork, perhaps one pinned to a CPU for a match of its own (a runner's
    bridge): every bot forked later would keep to that CPU."""
    with contextlib.suppress(OSError, AttributeError):
        os.sched_setaffinity(0, os.sched_getaffinity(os.getpid()))


class ThreadSpawner:
    """Forks every child from one thread of its own, which lives until :meth:`close`.

    bwrap's ``--die-with-parent`` (``PR_SET_PDEATHSIG``) fires when the *thread* that forked it
    exits: forking from a short-lived thread (a match's start-up thread) would kill the bot.
    """

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="bot-spawner",
                                        initializer=_process_cpus)
        self._pins = 0  # pin calls not released yet (read and written on the pool's thread)
        self._free: set[int] | None = None  # the CPUs before the first of them

    def run(self, popen: PopenCall) -> subprocess.Popen[bytes]:
        """Call ``popen`` on the spawner thread."""
        return self._pool.submit(popen).result()

    def pin(self, cpus: Collection[int]) -> None:
        """Bots forked from now on may run on ``cpus`` only (they inherit the spawner thread's
        CPU affinity), until every :meth:`pin` is matched by a :meth:`release`."""
        def move() -> None:
            if self._pins == 0:
                self._free = os.sched_getaffinity(0)  # 0: this thread
            os.sched_setaffinity(0, cpus)
            self._pins += 1

        self._pool.submit(move).result()

    def release(self) -> None:
        """Undoes one :meth:`pin`; after the last, bots may run where they could before the
        first."""
        def back() -> None:
            self._pins -= 1
            if self._pins == 0 and self._free is not None:
                os.sched_setaffinity(0, self._free)

        self._pool.submit(back).result()

    def close(self) -> None:
        """Stop the thread; sandboxed bots it forked are killed with it."""
        self._pool.shutdown()


@functools.cache
def default_spawner() -> ThreadSpawner:
    """The spawner bots use unless given one: made on first use, it lives as long as the
    referee."""
    return ThreadSpawner()


# -- one process --------------------------------------------------------------------------------


class SpawnError(RuntimeError):
    """The bot's command was found but could not be started this time (fork ``EAGAIN``, an
    exec error, a cgroup that cannot be made): a fault of the seat, not the end of play."""


def start_process(argv: Sequence[str], *, workdir: Path, launcher: Launcher = Launcher(),
                  hidden: Sequence[Path] = (), stderr_path: Path | None = None,
                  spawner: Spawner | None = None, binds: Binds | None = None,
                  sources: Mapping[Path, Path] | None = None) -> Process:
    """Start ``argv`` in ``workdir``, in its own session, as ``launcher`` says (inside the
    hardened sandbox under its policy, or under its rlimits), forked by ``spawner`` (default:
    :func:`default_spawner`); its stderr goes to ``stderr_path`` (parents created; ``None``:
    discarded), at most the launcher's ``stderr_cap`` bytes. ``hidden``: folders inside the bot's
    own that the sandboxed bot sees empty. ``binds`` and ``sources``: what the sandbox shows,
    resolved before, and where folders are served from (a sealed entrant:
    :mod:`referee.bots.snapshot`).

    :raises BotCommandError: if the command cannot be found or sandboxed.
    :raises SpawnError: if it was found but could not be started.
    """
    if which_command(argv, workdir) is None:
        raise BotCommandError(_not_found(argv[0], workdir))
    launch: Launch | None = None
    limits = launcher.rlimits
    if launcher.policy is not None:
        try:
            launch = prepare(argv, workdir, policy=launcher.policy, hidden=hidden, binds=binds,
                             sources=sources)
        except SandboxError as err:
            raise BotCommandError(str(err)) from None
        except OSError as err:
            raise SpawnError(f"cannot prepare the sandbox of {argv[0]!r} (its cgroup, its "
                             f"uid): {err}") from None
        cmd, gated, extra = launch.argv, True, launch.popen_kwargs()
    else:
        cmd, gated = limits.wrap(list(argv), prlimit=_prlimit())
        extra = {"cwd": workdir}
    out = None
    if stderr_path:
        stderr_path.parent.mkdir(parents=True, exist_ok=True)
        out = open(stderr_path, "wb", buffering=0)  # noqa: SIM115 (the drain thread closes it)

    def popen() -> subprocess.Popen[bytes]:
        proc: subprocess.Popen[bytes] = subprocess.Popen(  # type: ignore[call-overload]
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            start_new_session=True, bufsize=0, **extra)
        return proc

    try:
        proc = (spawner or default_spawner()).run(popen)
    except OSError as e:
        if out:
            out.close()
        if launch is not None:
            launch.discard()
        raise SpawnError(f"cannot start bot command {argv[0]!r}: {e}") from None
    finally:
        if launch is not None:
            launch.cleanup()
    process = Process(proc, out, launcher.stderr_cap, cgroup=launch.cgroup if launch else None,
                      lease=launch.lease if launch else None)
    process.active = launch.active if launch else []
    if gated:
        try:
            if launch is not None:
                launch.attach(proc.pid)
            else:
                limits.apply(proc.pid)
            os.write(process.stdin, b"go\n")
        except OSError as e:
            process.stop(0)
            raise SpawnError(f"cannot limit bot command {argv[0]!r}: {e}") from None
    os.set_blocking(process.stdin, False)
    return process


class Process:
    """A started bot process: its pipes, its exit, its stderr drain, and its group's kill.

    :attr:`stdin` and :attr:`stdout` are file descriptors, which the caller reads and writes;
    :attr:`stdout` is non-blocking, and :attr:`stdin` is once :func:`start_process` returns.
    A sandboxed process has its :attr:`cgroup` (where the machine has one), emptied and
    removed by :meth:`stop`.
    """

    def __init__(self, proc: subprocess.Popen[bytes], out: BinaryIO | None, cap: int,
                 cgroup: Cgroup | None = None, lease: Lease | None = None) -> None:
        assert proc.stdin and proc.stdout and proc.stderr
        self.pid = proc.pid
        self._proc = proc
        self.cgroup = cgroup
        self.lease = lease
        """The bot's uid, given back once every process of it is gone."""
        self.outlived: tuple[int, ...] = ()
        """Processes of the bot's uid still alive once it was stopped (its lease quarantined:
        :meth:`referee.bots.uids.Lease.release`); a note in its stderr file says so."""
        self.forks_refused = 0
        """Forks its process limit refused (a fork bomb's mark); a note in its stderr file says
        so, where the organiser and the league's refusals show it."""
        self._log = Path(out.name) if out is not None and isinstance(out.name, str) else None
        self.active: list[str] = []
        """The protections in force (empty: not sandboxed)."""
        self.oom_kills = 0
        self.stdin, self.stdout = proc.stdin.fileno(), proc.stdout.fileno()
        os.set_blocking(self.stdout, False)
        self.pidfd = _pidfd_open(proc.pid)
        """A file descriptor readable once the leader has exited (``None`` where unsupported)."""
        self._readable = select.poll()  # stdout
        self._readable.register(self.stdout, _POLLIN)
        self._or_exit = select.poll()  # stdout and the leader's exit
        self._or_exit.register(self.stdout, _POLLIN)
        if self.pidfd is not None:
            self._or_exit.register(self.pidfd, select.POLLIN)
        wake_r, self._wake = os.pipe()
        err_fd = os.dup(proc.stderr.fileno())
        proc.stderr.close()
        self._thread = threading.Thread(
            target=_drain_stderr, args=(err_fd, wake_r, out, cap),
            name=f"bot-stderr-{proc.pid}", daemon=True)
        self._thread.start()
        self._stopped = False

    # -- the Transport (:mod:`referee.bots.transport`) ------------------------------------------

    def write(self, data: bytes | bytearray) -> int:
        """See :meth:`referee.bots.transport.Transport.write`: the pipe to its stdin."""
        return os.write(self.stdin, data)

    def wait_writable(self, seconds: float) -> None:
        """See :meth:`referee.bots.transport.Transport.wait_writable`."""
        poller = select.poll()
        poller.register(self.stdin, select.POLLOUT)
        poller.poll(max(0, math.ceil(seconds * 1000)))

    def read(self, size: int) -> bytes:
        """See :meth:`referee.bots.transport.Transport.read`: the pipe from its stdout (an
        error reading it is its end)."""
        try:
            return os.read(self.stdout, size)
        except BlockingIOError:
            raise
        except OSError:
            return b""

    def wait_readable(self, seconds: float, *, or_exit: bool = False) -> bool:
        """See :meth:`referee.bots.transport.Transport.wait_readable` (the exit: its pidfd's)."""
        poller = self._or_exit if or_exit else self._readable
        return bool(poller.poll(max(0, math.ceil(seconds * 1000))))

    def memory_fault(self) -> bool:
        """Whether the memory limit killed a process of the bot (known only where a memory
        cgroup exists; kept after :meth:`stop`)."""
        if self.cgroup is not None:
            self.oom_kills = max(self.oom_kills, self.cgroup.oom_kills())
        return self.oom_kills > 0

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
        emptied = False
        if self.cgroup is not None:  # what left the group (a double fork) dies here
            self.memory_fault()
            self.forks_refused = self.cgroup.forks_refused()
            emptied = self.cgroup.kill_all()
            self.cgroup.remove()
            self.cgroup = None
        if self.lease is not None:  # once no process of its uid is left (else quarantined)
            self.outlived = self.lease.release(emptied=emptied)
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
        if self.forks_refused and self._log is not None and not self._thread.is_alive():
            with contextlib.suppress(OSError), open(self._log, "ab") as f:  # a fork bomb, seen
                f.write(f"\n[ct-referee: the bot reached its process limit: "
                        f"{self.forks_refused} fork(s) refused]\n".encode())
        if self.outlived and self._log is not None and not self._thread.is_alive():
            with contextlib.suppress(OSError), open(self._log, "ab") as f:
                f.write(f"\n[ct-referee: {len(self.outlived)} process(es) of the bot's uid "
                        f"outlived it (pids {' '.join(map(str, self.outlived))}); the uid "
                        f"stays held, no other bot gets it]\n".encode())


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
