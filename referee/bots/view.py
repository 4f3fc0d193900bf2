"""What a sandbox shows a bot, from memory: the runtime tree its command needs
(:mod:`referee.bots.runtime`, :mod:`referee.bots.image`), worked out once per process and
command, and the mounts that show it.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path

from referee.bots import image
from referee.bots.runtime import Closure, RuntimeError_, closure

NEUTRAL = "/ct"
"""Where a bot folder that lies inside a runtime's folder is shown (``/ct/N``)."""


@dataclass(frozen=True)
class View:
    """A runtime tree (``tree``: its path on the host, in memory) and what to mount from it:
    ``roots`` (folders: root ``N`` is the tree's ``rN``, bound read-only, at its own name for a
    system folder, else at ``/ct/M`` with a symlink at its host path) and ``links``
    (top-level symlinks such as ``/bin -> usr/bin``)."""

    tree: Path
    roots: tuple[str, ...]
    links: tuple[tuple[str, str], ...]
    size: int
    files: int
    key: str
    """The closure's key (:meth:`referee.bots.runtime.Closure.key`): one tree per key."""


class ViewError(ValueError):
    """A runtime that cannot be shown."""


_LOCK = threading.Lock()


def runtime_view(exe: Path, runtime: tuple[Path, ...], own: tuple[Path, ...]) -> View:
    """The view of a bot whose program is ``exe`` with the install prefixes ``runtime`` and
    its own folders ``own`` (:class:`referee.bots.resolve.Binds`), worked out once per process;
    the tree stays held (no other run removes it) while this process lives.

    :raises ViewError: for a runtime too large, or when ``/dev/shm`` cannot hold it.
    """
    with _LOCK:  # one at a time: two bots of one command wait for one tree
        shown = _SHOWN.get((exe, runtime, own))
        if shown is None:
            shown = _SHOWN[exe, runtime, own] = _runtime_view(exe, runtime, own)
            if len(_SHOWN) > MAX_SHOWN:  # the oldest: its tree stays held (_TREES)
                del _SHOWN[next(iter(_SHOWN))]
        return shown


def _runtime_view(exe: Path, runtime: tuple[Path, ...], own: tuple[Path, ...]) -> View:
    try:
        found = closure(exe, runtime, own=own)
    except RuntimeError_ as err:
        raise ViewError(str(err)) from None
    key = found.key()  # hashes every entry: once
    same = _TREES.get(key)  # another command may show the same tree
    if same is not None:
        return _view(same.tree, found, key)
    if sum(v.size for v in _TREES.values()) + found.size > MAX_HELD_BYTES:
        raise ViewError(f"the runtimes of this run would hold more than "
                        f"{MAX_HELD_BYTES >> 20} MiB in {image.SHM} with this one "
                        f"({found.size >> 20} MiB for {str(exe)!r}): give the entrants fewer "
                        f"different runtimes")
    try:
        tree = image.runtime_tree(found, key)
    except OSError as err:
        raise ViewError(f"cannot prepare the bot's runtime in {image.SHM}: "
                        f"{err.strerror or err}") from None
    _HELD.append(tree)
    shown = _TREES[key] = _view(tree.path, found, key)
    return shown


_HELD: list[image.Tree] = []
_SHOWN: dict[tuple[Path, tuple[Path, ...], tuple[Path, ...]], View] = {}
"""The one cache of views: every view this process shows, by the arguments of
:func:`runtime_view`."""
MAX_SHOWN = 4096
"""Views :data:`_SHOWN` keeps (a league adds one a version for as long as it runs)."""
_TREES: dict[str, View] = {}
"""The first view of each distinct tree, by its closure's key: each tree is held once
(:data:`_HELD`) and counted once against :data:`MAX_HELD_BYTES`, found without a scan of
every entrant's view (a field of 10,000 has as many)."""
MAX_HELD_BYTES = 6 << 30
"""The most the runtime trees one referee process shows may hold together (in ``/dev/shm``,
memory): each distinct runtime is a tree of its own, and a bot's files choose part of it."""


def _view(tree: Path, found: Closure, key: str) -> View:
    links = tuple(sorted((r, found.links[r]) for r in found.roots if r in found.links
                         and os.path.dirname(r) == "/"))
    return View(tree, tuple(found.ordered_roots()), links, found.size, len(found.files), key)
