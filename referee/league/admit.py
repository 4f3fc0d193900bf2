"""One settled folder admitted as a version, or refused in one line (:func:`admit`).

A submission is read once, by handle: its folder opened from a descriptor of the submissions
folder without following a symlink, its device and inode compared with the folder that settled
(before) and with what the name holds once the copy is made (after); the snapshot copied
through that descriptor into the referee's private store; and everything else taken from the
copy, never from the folder again: its ``command.txt``, the paths its command names, the
runtimes its ``#!`` lines name. A folder swapped for a link or for another folder at any moment
is either not opened (a link) or told by its inode: it is looked at again once it settles, never
admitted with what it was swapped for. A house entrant (the organiser's, from the YAML) is
snapshotted from the folder its command names, as a tournament's entrant.

Then the bot is started once from the copy (the pre-flight) and, unless ``check: false``,
driven through ``ct-referee check``'s scripted situations up to their first failure. A refusal
(:class:`Refusal`) says what went wrong in the referee's words, never the bot's output; the
last lines of the bot's own stderr travel beside it, escaped and cut (:func:`tail_of`).
"""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from referee.bots.bot import BotError
from referee.bots.limits import SandboxMode
from referee.bots.policy import SandboxError
from referee.bots.process import BotCommandError, Launcher, resolve_command
from referee.bots.resolve import Binds
from referee.bots.snapshot import (
    Sealed,
    Snapshot,
    Store,
    entrant_folder,
    remove_copy,
    sealed_binds,
    take_snapshot,
)
from referee.game.faults import Reason
from referee.league.config import LeagueConfig
from referee.league.folders import Changed, fingerprint, open_folder
from referee.match.check import StepResult, run_check
from referee.match.play import Entrant
from referee.protocol.escape import escape_controls
from referee.tournament.admission import preflight

__all__ = ["COMMAND_FILE", "TAIL_CHARS", "TAIL_LINES", "Admission", "Refusal", "admit",
           "tail_of"]

COMMAND_FILE = "command.txt"
"""A submission's own command (one line), in place of the league's."""
COMMAND_BYTES = 1024
TAIL_LINES = 8
"""The last lines of a refused bot's stderr shown beside its refusal ..."""
TAIL_CHARS = 1200
"""... at most this many characters in all (each line escaped, cut to 200)."""
STARTS = {
    Reason.NO_ANSWER: "no `ready` line within startup_ms",
    Reason.PARTIAL_LINE: "part of a line without its newline within startup_ms (flush, end "
                         "the line)",
    Reason.EXITED: "it exited before `ready`",
    Reason.CLOSED_OUTPUT: "it closed its output before `ready`",
    Reason.NOT_READING: "it does not read its input",
    Reason.LONG_LINE: "its first line is longer than a line may be",
    Reason.NOT_READY: "its first line is not `ready [name]` (log to stderr, not stdout)",
    Reason.SPAWN_FAILED: "it could not be started",
    Reason.OUT_OF_MEMORY: "the memory limit killed it",
}
"""Why a bot did not start, in the referee's words (never the bot's own output)."""


class Refusal(ValueError):
    """A folder refused: why, in one line, and the end of the bot's stderr where it ran."""

    def __init__(self, reason: str, stderr: Sequence[str] = ()) -> None:
        super().__init__(reason)
        self.reason = reason
        self.stderr = tuple(stderr)


def tail_of(lines: Sequence[str]) -> tuple[str, ...]:
    r"""The end of a bot's stderr as the page and the journal show it: the last
    :data:`TAIL_LINES` lines, control characters escaped, each cut to 200 characters, at most
    :data:`TAIL_CHARS` in all.

    >>> [len(line) for line in tail_of(["x" * 300, "y"])], tail_of(["\x1b[2Jok"])
    ([203, 1], ('\\x1b[2Jok',))
    """
    out: list[str] = []
    left = TAIL_CHARS
    for line in reversed(lines[-TAIL_LINES:]):
        text = escape_controls(line.rstrip("\n"))
        text = text if len(text) <= 200 else text[:200] + "..."
        if len(text) > left:
            break
        out.append(text)
        left -= len(text)
    return tuple(reversed(out))


@dataclass(frozen=True)
class Admission:
    """What to admit: a submission folder by handle, or a house entrant by its command."""

    author: str
    folder: Path
    """Where the bot sees its folder (the submissions folder resolved, and the name)."""
    key: tuple[int, int] | None = None
    """The device and inode of the folder that settled (a submission)."""
    parent: int | None = None
    """A descriptor of the submissions folder (a submission)."""
    command: str | tuple[str, ...] | None = None
    """A house entrant's command (a submission's is its ``command.txt``, else the league's)."""
    workdir: Path | None = None
    """Where a house entrant's command runs."""


def admit(what: Admission, name: str, *, config: LeagueConfig, store: Store,
          mode: SandboxMode, logs: Path, stop: threading.Event,
          before: str) -> tuple[Entrant, Snapshot, tuple[str, ...]]:
    """Admits ``what`` as entrant ``name``: its entrant, snapshot and command. ``before``: the
    folder's fingerprint when it settled.

    :raises Refusal: a refusal (the snapshot, if one was made, removed).
    :raises InterruptedError: the folder changed or was swapped while it was read (try again
        once it settles).
    """
    if what.parent is None:
        snap, argv, workdir = _house(what, name, config=config, store=store)
    else:
        snap, argv, workdir = _submission(what, name, config=config, store=store, before=before)
    try:
        entrant = _entrant(snap, argv, workdir, name, config=config, mode=mode)
        _fly(entrant, config=config, mode=mode, logs=logs, stop=stop)
        if config.check:
            _conform(entrant, config=config, mode=mode, stop=stop)
    except BaseException:
        remove_copy(snap.copy)
        raise
    return entrant, snap, argv


def _house(what: Admission, name: str, *, config: LeagueConfig,
           store: Store) -> tuple[Snapshot, tuple[str, ...], Path]:
    """A house entrant: the folder its command names (the organiser's), snapshotted."""
    workdir = what.workdir or what.folder
    assert what.command is not None
    try:
        argv = tuple(resolve_command(what.command, workdir))
        folder = entrant_folder(argv, workdir, shared=config.shared, given=False)
        snap = take_snapshot(folder, store, name, cap_mb=config.snapshot_mb,
                             exclude=(config.output, config.path))
    except (BotCommandError, SandboxError) as err:
        raise Refusal(str(err)) from None
    return snap, argv, workdir


def _submission(what: Admission, name: str, *, config: LeagueConfig, store: Store,
                before: str) -> tuple[Snapshot, tuple[str, ...], Path]:
    """A submission, read once by handle (see the module); its command from the copy."""
    assert what.parent is not None
    try:
        fd = open_folder(what.parent, what.author)
    except (ValueError, Changed):
        raise InterruptedError(what.author) from None  # a link or gone now: not settled
    try:
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) != what.key:
            raise InterruptedError(what.author)  # another folder than the one that settled
        if st.st_dev != os.fstat(what.parent).st_dev:
            raise Refusal("its folder is another file system (a mount point): copy the files "
                          "in instead")
        try:
            snap = take_snapshot(what.folder, store, name, cap_mb=config.snapshot_mb,
                                 exclude=(config.output, config.path), opened=fd)
        except SandboxError as err:
            if _moved(what, fd, before, config):  # a copy cut short by a change: later
                raise InterruptedError(what.author) from None
            raise Refusal(str(err)) from None
        if _moved(what, fd, before, config):
            remove_copy(snap.copy)
            raise InterruptedError(what.author)
    finally:
        os.close(fd)
    try:
        argv = tuple(resolve_command(_command(snap.copy, config.command), snap.copy))
        folder = entrant_folder(argv, snap.copy, shared=config.shared, given=True)
    except (BotCommandError, SandboxError, ValueError) as err:
        remove_copy(snap.copy)
        raise Refusal(str(err).replace(str(snap.copy), str(what.folder))) from None
    if folder != Path(os.path.realpath(snap.copy)):
        remove_copy(snap.copy)
        raise Refusal("its command runs files outside its own folder (a symlink out?): a "
                      "submission may run only its own files")
    return snap, argv, what.folder


def _moved(what: Admission, fd: int, before: str, config: LeagueConfig) -> bool:
    """Whether the folder's name no longer holds the folder ``fd`` opened, or that folder no
    longer is as its fingerprint ``before`` saw it."""
    assert what.parent is not None
    try:
        st = os.stat(what.author, dir_fd=what.parent, follow_symlinks=False)
        now = os.fstat(fd)
        if not stat.S_ISDIR(st.st_mode) or (st.st_dev, st.st_ino) != (now.st_dev, now.st_ino):
            return True
        return fingerprint(what.folder, cap_mb=config.snapshot_mb, parent=what.parent) != before
    except (OSError, ValueError, Changed):
        return True


def _command(copy: Path, default: str) -> str:
    """A submission's command: its ``command.txt`` (one line, read from its copy through no
    symlink), else the league's."""
    try:
        fd = os.open(copy / COMMAND_FILE, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK
                     | os.O_CLOEXEC)
    except FileNotFoundError:
        return default
    except OSError as err:
        raise ValueError(f"{COMMAND_FILE}: cannot read: {err.strerror}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError(f"{COMMAND_FILE} is not a file")
        data = os.read(fd, COMMAND_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) > COMMAND_BYTES:
        raise ValueError(f"{COMMAND_FILE} is longer than {COMMAND_BYTES} bytes")
    lines = [x for x in data.decode("utf-8", "replace").splitlines() if x.strip()]
    if len(lines) != 1:
        raise ValueError(f"{COMMAND_FILE} must hold one line (the bot's command)")
    return lines[0].strip()


def _host(path: Path, copy: Path, folder: Path) -> Path:
    """``path`` as the bot sees it: inside the copy, at the same place in its folder."""
    return folder / path.relative_to(copy) if path.is_relative_to(copy) else path


def _entrant(snap: Snapshot, argv: tuple[str, ...], workdir: Path, name: str, *,
             config: LeagueConfig, mode: SandboxMode) -> Entrant:
    """The entrant that plays from ``snap``: in the sandbox, its copy shown at its folder's
    place, what it binds worked out from the copy; without one, run in the copy."""
    rel = os.path.relpath(workdir, snap.folder)
    if mode is SandboxMode.NONE:  # no sandbox: the bot runs in its snapshot's copy (or, given
        inside = not rel.startswith("..")  # a working folder outside it, there)
        return Entrant(name, argv, workdir=Path(os.path.normpath(snap.copy / rel))
                       if inside else workdir)
    copy = Path(os.path.realpath(snap.copy))
    try:
        binds = sealed_binds(argv, Path(os.path.normpath(copy / rel)), copy, config.shared)
    except SandboxError as err:
        raise Refusal(str(err).replace(str(copy), str(snap.folder))) from None
    shown = Binds(_host(binds.exe, copy, snap.folder), (snap.folder,),
                  tuple(_host(p, copy, snap.folder) for p in binds.runtime))
    return Entrant(name, argv, workdir=workdir, hidden=(config.output,),
                   sealed=Sealed(snap, shown))


def _fly(entrant: Entrant, *, config: LeagueConfig, mode: SandboxMode, logs: Path,
         stop: threading.Event) -> None:
    """The pre-flight: the bot started once from its snapshot."""
    try:
        launcher = Launcher.resolve(mode, config.limits)
        [flight] = preflight([entrant], limits=config.limits, launcher=launcher,
                             logs_dir=logs, hidden=(config.output,), stop=stop)
    except (BotCommandError, BotError, SandboxError) as err:
        raise Refusal(f"did not start: {escape_controls(str(err))}"[:300]) from None
    if not flight.ok:
        why = STARTS.get(Reason(flight.code), flight.fault) if flight.code in set(Reason) \
            else flight.fault
        raise Refusal(f"did not start in the pre-flight: {flight.fault}: {why}",
                      tail_of(flight.tail))


class _FirstFailure(Exception):
    def __init__(self, step: StepResult) -> None:
        super().__init__(step.title)
        self.step = step


def _conform(entrant: Entrant, *, config: LeagueConfig, mode: SandboxMode,
             stop: threading.Event) -> None:
    """``ct-referee check``'s scripted situations up to the first failure, the bot run as in
    its matches (sandboxed: from its snapshot; else in the snapshot's copy); a failure is
    checked once more (the matches being played beside it may have cost a bot on a loaded
    machine the time a step allows), and refused if it fails again."""
    limits = config.limits

    def first_failure(step: StepResult) -> None:
        if not step.ok or stop.is_set():
            raise _FirstFailure(step)

    failed: StepResult | None = None
    for _attempt in (1, 2):
        try:
            run_check(entrant.command, move_ms=limits.move_ms, startup_ms=limits.startup_ms,
                      sandbox=mode, workdir=entrant.workdir, limits=limits,
                      sealed=entrant.sealed, on_step=first_failure)
        except _FirstFailure as err:
            failed = err.step
            if stop.is_set():
                raise InterruptedError(entrant.name) from None
            continue
        except (BotCommandError, BotError, SandboxError, OSError) as err:
            raise Refusal(f"the conformance check could not run it: "
                          f"{escape_controls(str(err))}"[:300]) from None
        return
    assert failed is not None
    hint = f"; {failed.hint}" if failed.hint else ""
    expected = failed.expected or failed.status
    raise Refusal(escape_controls(f"failed the conformance check (ct-referee check) twice: "
                                  f"{failed.title}: expected {expected}{hint}")[:400],
                  tail_of(failed.stderr))
