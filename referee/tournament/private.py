"""The output folder stays private while a tournament plays: the folder ``0700``, its files
``0600`` (a process umask of ``077`` while :func:`private_files` is entered, and
:func:`make_private` on a folder resumed from an older, readable run). Bots never see it; this
keeps other logins on the machine (an entrant's own, say) from copying live records into a bot
folder. The organiser publishes on purpose (``chmod -R a+rX`` on ``report/``, see
``docs/security.md``)."""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path

PRIVATE_UMASK = 0o077


@contextlib.contextmanager
def private_files() -> Iterator[None]:
    """While inside, files and folders this process (and the worker processes it starts)
    makes are readable by their owner only."""
    old = os.umask(PRIVATE_UMASK)
    try:
        yield
    finally:
        os.umask(old)


def make_private(folder: Path, *, keep: tuple[str, ...] = ("report",)) -> None:
    """``folder`` ``0700``, and everything in it the owner's only (files ``0600``, folders
    ``0700``, executable bits kept for the owner), but for the entries named in ``keep``."""
    folder.chmod(0o700)
    for entry in folder.iterdir():
        if entry.name in keep or entry.is_symlink():
            continue
        paths = [entry]
        if entry.is_dir():
            paths += [Path(d, n) for d, dirs, files in os.walk(entry) for n in (*dirs, *files)]
        for path in paths:
            with contextlib.suppress(OSError):
                mode = path.lstat().st_mode
                if not stat.S_ISLNK(mode) and mode & 0o077:  # most are private already
                    path.chmod(mode & 0o700)
