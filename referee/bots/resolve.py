"""What a bot's command is and what it may be shown: its program found (``PATH``, pyenv
shims, ``#!`` lines), its own folders and its runtimes (:class:`Binds`), and the checks on
them before play (docs/security.md, *What stops it*)."""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import stat
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import referee
from referee.bots.elf import shebang
from referee.bots.expiring import expiring
from referee.bots.policy import BASE_PATH, SYSTEM_DIRS, SandboxError, _run

# -- what a bot may see -------------------------------------------------------------------------


LOOKUP_TTL_S = 60.0
"""How long a program found on a ``PATH`` (and what a pyenv shim runs) is remembered: a
tournament looked each entrant's up (10,000 ``which``, and as many ``pyenv which`` processes
for ``python3 bot.py`` in 10,000 folders), and every spawn looked up ``prlimit``."""


def which(prog: str, path: str | None = None) -> str | None:
    """:func:`shutil.which` of ``prog`` on ``path`` (default: ``PATH``), remembered for
    :data:`LOOKUP_TTL_S` per program and ``PATH``."""
    return _which(prog, os.environ.get("PATH") if path is None else path)


@expiring(LOOKUP_TTL_S)
def _which(prog: str, path: str | None) -> str | None:
    return shutil.which(prog, path=path)


def resolve_executable(prog: str, workdir: Path) -> Path | None:
    """The absolute path that runs for ``prog`` (relative to ``workdir`` when it has a slash,
    else on ``PATH``), symlinks kept (a venv's ``bin/python`` stays one); a pyenv shim resolves
    to ``pyenv which`` as run in ``workdir`` (once per version that selects)."""
    if "/" in prog:
        found = Path(os.path.abspath(Path(workdir, prog)))
        return found if found.is_file() else None
    exe = which(prog)
    if exe is None:
        return None
    shim = Path(exe)
    if shim.parent.name == "shims" and (shim.parent.parent / "libexec" / "pyenv").is_file():
        return _pyenv_which(str(shim), prog, _pyenv_selector(workdir), str(workdir))
    return Path(os.path.abspath(exe))


def _pyenv_selector(workdir: Path) -> tuple[str, str]:
    """What picks the version a pyenv shim runs in ``workdir`` (as ``pyenv version-file``
    finds it): ``PYENV_VERSION``, else the text of the nearest ``.python-version`` in
    ``workdir`` or a folder above it, else the global version; equal selectors, the same
    program."""
    env = os.environ.get("PYENV_VERSION")
    if env:
        return ("env", env)
    here = Path(os.path.abspath(workdir))
    for folder in (here, *here.parents):
        text = _small_file(folder / ".python-version")
        if text is not None:
            return ("file", text)
    return ("global", os.environ.get("PYENV_ROOT", ""))


def _small_file(path: Path) -> str | None:
    """The first 4 KiB of ``path`` if it is a regular file (a fifo in a bot's folder does not
    block), else ``None``."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return os.read(fd, 4096).decode("utf-8", "replace")
    except OSError:
        return None
    finally:
        os.close(fd)


@expiring(LOOKUP_TTL_S, key=lambda shim, prog, selector, workdir: (shim, prog, selector))
def _pyenv_which(shim: str, prog: str, selector: tuple[str, str], workdir: str) -> Path:
    """What a pyenv shim runs in ``workdir`` (``pyenv which``, run there once per
    ``selector``, :func:`_pyenv_selector`)."""
    pyenv = Path(shim).parent.parent / "libexec" / "pyenv"
    done = _run([str(pyenv), "which", prog], cwd=workdir,
                env={**os.environ, "PATH": os.environ.get("PATH", BASE_PATH)})
    out = done.stdout.strip() if done.returncode == 0 else ""
    return Path(os.path.abspath(out or shim))


def _install_prefix(exe: Path) -> Path:
    return exe.parent.parent if exe.parent.name == "bin" else exe.parent


def _shebang(exe: Path) -> str | None:
    """The interpreter ``exe``'s ``#!`` line names, read as the kernel does (words split at
    spaces and tabs only); after the system's ``env``, the program it runs."""
    line = shebang(exe)
    words = [w for w in line.split(" ") if w] if line is not None else []
    if len(words) > 1 and Path(words[0]).name == "env" and \
            _system(Path(os.path.realpath(words[0]))):
        return words[1]
    return words[0] if words else None


def _public(path: Path) -> bool:
    """Whether any user can traverse every folder down to ``path`` (mode bits), or it is
    inside the referee's own Python install (a bot folder's venv made from it)."""
    own = {Path(os.path.realpath(p)) for p in (sys.prefix, sys.base_prefix)}
    return reachable(path, -1, -1) or any(path.is_relative_to(p) for p in own)


def sealed_off(path: Path, *, within: bool = False) -> bool:
    """Whether only root (or the referee's own uid) can change what ``path`` holds: it and
    every folder above it are theirs (symlinks too), and none is writable by others but a
    sticky folder above it (``/tmp``). A runtime a bot's own files name must be one: an
    entrant's login could otherwise change a folder it owns (``/var/tmp/mine``) during play,
    outside the snapshot. ``shared`` data is checked the same way, and everything inside it
    too (``within``)."""
    mine = {0, os.geteuid()}
    for real in {path, Path(os.path.realpath(path))}:
        parts = [*reversed(real.parents), real]
        for part in parts:
            try:
                st = os.lstat(part)
            except OSError:
                return False
            sticky_above = part != real and st.st_mode & stat.S_ISVTX
            if st.st_uid not in mine or (st.st_mode & 0o022 and not sticky_above
                                         and not stat.S_ISLNK(st.st_mode)):
                return False
    if within:
        for top, dirs, files in os.walk(path):
            for name in (*dirs, *files):
                try:
                    st = os.lstat(os.path.join(top, name))
                except OSError:
                    return False
                if st.st_uid not in mine or (st.st_mode & 0o022 and not stat.S_ISLNK(st.st_mode)):
                    return False
    return True


def within(path: Path, folder: Path) -> bool:
    """``path.is_relative_to(folder)`` for absolute, normalised paths (no ``..``, as
    ``abspath`` and ``realpath`` give them), by string: pathlib's took a tenth of the time a
    10,000-entrant tournament spent resolving its entrants."""
    inner, outer = str(path), str(folder)
    return inner == outer or inner.startswith(outer if outer.endswith("/") else outer + "/")


def _system(path: Path) -> bool:
    text = str(path)  # string prefixes: called for every entrant of a tournament
    return any(text == d or text.startswith(d + "/") for d in SYSTEM_DIRS)


@functools.cache
def _package() -> Path:
    """The referee package's folder (bots may import the rules)."""
    return Path(referee.__file__).resolve().parent


@dataclass(frozen=True)
class Binds:
    """The folders a bot is shown: its own (``bot``: those of the files its command names,
    its program if given relative to the working folder, else its working folder) and
    runtimes (``runtime``: install prefixes of its program and ``#!`` interpreter, symlinks
    and resolved, and the referee package), with the program's path."""

    exe: Path
    bot: tuple[Path, ...]
    runtime: tuple[Path, ...]

    @property
    def all(self) -> tuple[Path, ...]:
        return (*self.bot, *self.runtime)


def bot_binds(argv: Sequence[str], workdir: Path) -> Binds:
    """What :func:`build_argv` binds for ``argv`` run in ``workdir``.

    :raises SandboxError: when the program or its ``#!`` interpreter cannot be found.
    """
    workdir = Path(os.path.abspath(workdir))
    exe = resolve_executable(argv[0], workdir)
    if exe is None:
        raise SandboxError(f"bot command not found: {argv[0]!r}")
    bot: list[Path] = []
    program = Path(os.path.abspath(Path(workdir, argv[0])))
    in_venv = program.parent.name == "bin" and (program.parent.parent / "pyvenv.cfg").exists()
    # A program given by a relative path is the bot's own, unless it is a virtual
    # environment's (a runtime: its prefix is bound as one, below).
    named = [argv[0]] if "/" in argv[0] and not argv[0].startswith("/") and not in_venv else []
    named += [a for a in argv[1:] if not a.startswith("-")]
    # ``FILE.py:FUNCTION`` (a policy for ``ct-referee bot``) names FILE.py too.
    named += [a.rpartition(":")[0] for a in named if ":" in a]
    for arg in named:
        if not arg:
            continue
        path = Path(os.path.abspath(Path(workdir, arg)))
        with contextlib.suppress(OSError):
            folder = path if path.is_dir() else path.parent if path.is_file() else None
            if folder is not None and folder not in bot:
                bot.append(folder)
    if not bot:
        bot.append(workdir)
    runtime: list[Path] = []
    # (path, trusted): the organiser's command and PATH are trusted; a path the bot's own
    # files choose (its #! line, a symlink in its folder) may only show what anyone can reach;
    # a public path's own symlinks (a venv's python, say) are the host's, not the bot's
    def inside(path: Path) -> bool:
        return any(within(path, b) for b in bot)

    paths = [(exe, True), (Path(os.path.realpath(exe)), not inside(exe))]
    interpreter = _shebang(exe)
    if interpreter:
        found = resolve_executable(interpreter, workdir)
        if found is None:
            raise SandboxError(f"interpreter {interpreter!r} (named by {str(exe)!r}) not found")
        by_path = "/" not in interpreter
        paths += [(found, by_path), (Path(os.path.realpath(found)),
                                     by_path or not inside(found))]
    for path, trusted in paths:
        prefix = _install_prefix(path)
        if _system(path) or inside(prefix) or prefix in runtime:
            continue
        if not trusted and not _public(prefix):
            raise SandboxError(f"{str(path)!r} (named by {str(exe)!r}) is in a folder other "
                               f"users cannot reach: a bot's own #! line or symlink may only "
                               f"name a runtime anyone can reach, or one on PATH")
        if not trusted and not sealed_off(prefix):
            raise SandboxError(f"{str(path)!r} (named by {str(exe)!r}) is in a folder someone "
                               f"other than root can change during play: a bot's own #! line "
                               f"or symlink may only name a runtime root owns (or the "
                               f"organiser names it in the command)")
        runtime.append(prefix)
    package = _package()  # bots may import the rules
    if not any(within(package, b) for b in (*bot, *runtime)):
        runtime.append(package)
    return Binds(exe, tuple(bot), tuple(runtime))


def check_binds(binds: Binds, *, protected: Sequence[Path] = (),
                others: Sequence[Path] = ()) -> tuple[Path, ...]:
    """The paths inside the bot's folders that it must be shown empty: a ``protected`` path
    (the output folder, the configuration) or another entrant's folder (``others``; an equal
    folder is shared, not another's) that lies inside one of them, symlinks and ``..``
    resolved, written as the sandbox sees them (pass them to :func:`build_argv` as ``hidden``).

    :raises SandboxError: for a bot folder that is, or lies inside, a protected path: it
        cannot be hidden from the bot that lives in it.
    """
    hidden: list[Path] = []
    for folder in binds.all:
        real = Path(os.path.realpath(folder))
        for path in protected:
            other = Path(os.path.realpath(path))
            if real.is_relative_to(other):
                raise SandboxError(f"the bot folder {str(folder)!r} is inside the protected path "
                                   f"{str(path)!r} (move the bot, or that path, elsewhere)")
        for path in [*protected, *others]:
            other = Path(os.path.realpath(path))
            if other != real and other.is_relative_to(real):
                seen = Path(folder) / other.relative_to(real)
                if seen not in hidden:
                    hidden.append(seen)
    return tuple(hidden)


def reachable(path: Path, uid: int, gid: int) -> bool:
    """Whether ``uid``/``gid`` (no other groups, no capabilities) can traverse every folder
    down to ``path`` and read it (mode bits only)."""
    parts = [*reversed(path.parents), path]
    for i, part in enumerate(parts):
        try:
            st = os.stat(part)
        except OSError:
            return False
        need = 1 if (stat.S_ISDIR(st.st_mode) or i < len(parts) - 1) else 4
        shift = 6 if st.st_uid == uid else 3 if st.st_gid == gid else 0
        if not (st.st_mode >> shift) & need:
            return False
    return True


def check_readable(binds: Binds, uid: int | None = None) -> None:
    """Refuse a bot folder that the bot's uid (any bot uid, with ``None``) cannot list and read:
    a referee running as root starts bots as users of their own.

    :raises SandboxError: naming the folder and the fix.
    """
    for folder in binds.bot:
        st = os.stat(folder)
        if st.st_uid != uid and (st.st_mode & 0o005) != 0o005:
            who = "the bot's uid" if uid is None else f"the bot's uid {uid}"
            what = "runtime" if folder in binds.runtime else "bot folder"
            raise SandboxError(f"the {what} {str(folder)!r} is not readable by {who} "
                               f"(mode {stat.filemode(st.st_mode)}): chmod o+rx it")
