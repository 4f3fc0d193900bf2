"""The entrant folder check: what each entrant's sandbox must show empty, before play.

Each entrant's bot is shown its own folders (and runtimes); the output folder, the
configuration and the other entrants' folders must not be readable through them. The check
resolves every path once (symlinks and ``..``), sorts the real paths, and finds the paths that
lie inside a folder as one range of that sorted list: O(n log n) in the entrants, plus what it
finds (the quadratic pairwise check took about 2 hours at 10,000 entrants, at every resume).
"""

from __future__ import annotations

import bisect
import contextlib
import os
from collections.abc import Iterator, Sequence
from pathlib import Path

from referee.bots.policy import SandboxError
from referee.bots.resolve import Binds, bot_binds, check_readable
from referee.tournament.config import Config, ConfigError

__all__ = ["check_entrant_folders", "hidden_paths", "refused_entrant"]


def check_entrant_folders(config: Config) -> dict[str, tuple[Path, ...]]:
    """What each entrant's sandbox must show empty: the output folder, the configuration file
    and the other entrants' folders, where they lie inside the folders it is shown (symlinks and
    ``..`` resolved). Refuses, before play, an entrant that lives inside the output folder or
    the configuration.

    :return: the hidden paths by entrant name.
    :raises ConfigError: naming the entrant and the path.
    """
    binds: list[Binds] = []
    for e in config.entrants:
        try:
            binds.append(bot_binds(e.argv, e.workdir))
            if os.geteuid() == 0:  # bots run as users of their own
                check_readable(binds[-1])
        except SandboxError as err:
            raise ConfigError(f"{config.path}: entrant {e.name!r}: {err}") from None
    with refused_entrant(config, [e.name for e in config.entrants]):
        hidden = hidden_paths(binds, protected=(config.output, config.path))
    return {e.name: h for e, h in zip(config.entrants, hidden, strict=True)}


@contextlib.contextmanager
def refused_entrant(config: Config, names: Sequence[str]) -> Iterator[None]:
    """Turns :func:`hidden_paths` refusing an entrant into a :class:`ConfigError` naming it."""
    try:
        yield
    except _Refused as refused:
        name = names[refused.entrant]
        raise ConfigError(f"{config.path}: entrant {name!r}: {refused.error}") from None


class _Refused(Exception):
    def __init__(self, entrant: int, error: SandboxError) -> None:
        self.entrant, self.error = entrant, error


def _real(path: Path, cache: dict[Path, str]) -> str:
    real = cache.get(path)
    if real is None:
        real = cache[path] = os.path.realpath(path)
    return real


def hidden_paths(binds: list[Binds], *, protected: tuple[Path, ...] = (),
                 owned: Sequence[tuple[Path, ...]] | None = None) -> list[tuple[Path, ...]]:
    """For each entrant's :class:`~referee.bots.resolve.Binds`, the paths inside the folders
    it is shown that it must be shown empty (as :func:`referee.bots.resolve.check_binds` with
    the other entrants' folders as ``others``: ``owned``, by entrant, else their bot folders).

    :raises _Refused: for a bot folder that is, or lies inside, a protected path.
    """
    cache: dict[Path, str] = {}
    # (real path, kind, owner, position): kind 0 protected, 1 an entrant's bot folder
    entries: list[tuple[str, int, int, int, Path]] = []
    for k, path in enumerate(protected):
        entries.append((_real(path, cache), 0, -1, k, path))
    for i, b in enumerate(binds):
        for k, folder in enumerate(b.bot if owned is None else owned[i]):
            entries.append((_real(folder, cache), 1, i, k, folder))
    entries.sort(key=lambda e: e[0])
    keys = [e[0] for e in entries]
    protected_real = sorted(_real(p, cache) for p in protected)
    out: list[tuple[Path, ...]] = []
    for i, b in enumerate(binds):
        hidden: list[tuple[tuple[int, int, int], Path]] = []
        seen: set[Path] = set()
        for folder in b.all:
            real = _real(folder, cache)
            for p in protected_real:
                if real == p or real.startswith(p.rstrip("/") + "/"):
                    j = next(k for k, q in enumerate(protected) if _real(q, cache) == p)
                    raise _Refused(i, SandboxError(
                        f"the bot folder {str(folder)!r} is inside the protected path "
                        f"{str(protected[j])!r} (move the bot, or that path, elsewhere)"))
            prefix = real.rstrip("/") + "/"
            lo = bisect.bisect_left(keys, prefix)
            hi = bisect.bisect_left(keys, real.rstrip("/") + "0")  # "0" follows "/"
            for other, kind, owner, position, _ in entries[lo:hi]:
                if kind == 1 and owner == i:
                    continue  # its own folder (another entrant's equal one is found too)
                seen_as = Path(folder) / os.path.relpath(other, real)
                if seen_as not in seen:
                    seen.add(seen_as)
                    hidden.append(((kind, owner, position), seen_as))
        out.append(tuple(path for _, path in sorted(hidden, key=lambda h: h[0])))
    return out
