"""Subordinate uids: how a referee that is not root gives each bot a host uid of its own.

A user listed in ``/etc/subuid`` and ``/etc/subgid`` owns a range of host ids that nobody else
uses (rootless containers run on them). The setuid helpers ``newuidmap`` and ``newgidmap``
(Debian's ``uidmap``) let that user map one of them into a user namespace it made. Here a
tiny holder process (``unshare --user``) makes the namespace, the helpers map the bot's uid
and gid (one of each, seen inside as :data:`referee.bots.policy.SANDBOX_UID`), and bwrap
joins it with ``--userns``: bwrap still builds the mounts with the organiser's access to
files, and the bot runs as the subordinate uid, which can read only what every user may.

Each bot's pair is leased through the per-host allocator (:mod:`referee.bots.uids`), so no
two live bots of the organiser's referees and worker processes share a uid. Ids another
user's line also names, and the root referee's own bot uids, are never used.
"""

from __future__ import annotations

import contextlib
import functools
import os
import pwd
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

SUBUID = Path("/etc/subuid")
SUBGID = Path("/etc/subgid")
HELPERS = ("newuidmap", "newgidmap")
PATH = "/usr/local/bin:/usr/bin:/bin"
SUGGESTED = 65536
"""How many ids the suggested fix gives (what ``useradd`` gives a new user)."""


class SubIdError(OSError):
    """The namespace of a bot's subordinate uid could not be made; the message is one line."""


@dataclass(frozen=True)
class SubIds:
    """The subordinate ids the organiser may give its bots: ``uids[i]`` goes with ``gids[i]``."""

    user: str
    uids: tuple[int, ...]
    gids: tuple[int, ...]

    def gid(self, uid: int) -> int:
        """The gid paired with ``uid`` (a lookup: it is asked at every spawn)."""
        return self._gid_of[uid]

    @functools.cached_property
    def _gid_of(self) -> dict[int, int]:
        return dict(zip(self.uids, self.gids, strict=True))

    def describe(self) -> str:
        """The ids, for a header: ``100000-165535``, ranges joined by commas."""
        spans: list[str] = []
        start = prev = self.uids[0]
        for uid in (*self.uids[1:], None):
            if uid is not None and uid == prev + 1:
                prev = uid
                continue
            spans.append(f"{start}-{prev}" if prev != start else str(start))
            if uid is not None:
                start = prev = uid
        return ",".join(spans)


def parse(text: str) -> list[tuple[str, int, int]]:
    """The ``(owner, first, count)`` lines of a subordinate id file (bad lines skipped)."""
    out: list[tuple[str, int, int]] = []
    for line in text.splitlines():
        parts = line.strip().split(":")
        if len(parts) != 3 or not parts[0] or parts[0].startswith("#"):
            continue
        with contextlib.suppress(ValueError):
            first, count = int(parts[1]), int(parts[2])
            if first >= 0 and count > 0:
                out.append((parts[0], first, count))
    return out


def _ids(lines: list[tuple[str, int, int]], names: set[str], avoid: range) -> list[int]:
    """The ids ``names`` own in ``lines``, less any another owner's line names and ``avoid``."""
    mine = [range(first, first + count) for owner, first, count in lines if owner in names]
    theirs = [range(first, first + count) for owner, first, count in lines
              if owner not in names]
    out: list[int] = []
    seen: set[int] = set()
    for span in mine:
        for i in span:
            if i in avoid or i in seen or any(i in r for r in theirs):
                continue
            out.append(i)
            seen.add(i)
            if len(out) >= SUGGESTED:
                return out
    return out


def _user(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def find(uid: int, avoid: range, subuid: Path = SUBUID, subgid: Path = SUBGID
         ) -> SubIds | str:
    """The subordinate ids of ``uid`` (by name or number), or why there are none: a sentence
    that ends with the exact fix."""
    user = _user(uid)
    names = {user, str(uid)}
    try:
        uids_lines, gids_lines = parse(subuid.read_text()), parse(subgid.read_text())
    except OSError:
        uids_lines, gids_lines = [], []
    uids, gids = _ids(uids_lines, names, avoid), _ids(gids_lines, names, avoid)
    missing = [h for h in HELPERS if shutil.which(h, path=PATH) is None]
    if uids and gids and not missing:
        n = min(len(uids), len(gids))
        return SubIds(user, tuple(uids[:n]), tuple(gids[:n]))
    if missing:
        return f"{' and '.join(missing)} not found: apt-get install uidmap"
    return (f"user {user} has no subordinate {'uids' if not uids else 'gids'} in "
            f"{subuid if not uids else subgid}: {fix(user, uids_lines + gids_lines)}")


def fix(user: str, lines: Sequence[tuple[str, int, int]]) -> str:
    """The command (as root) that gives ``user`` a range no other line uses."""
    start = max([100000, *(first + count for _, first, count in lines)])
    end = start + SUGGESTED - 1
    return (f"as root, usermod --add-subuids {start}-{end} --add-subgids {start}-{end} {user} "
            f"(or add the line {user}:{start}:{SUGGESTED} to /etc/subuid and /etc/subgid)")


@functools.cache
def mine(avoid: range) -> SubIds | str:
    """:func:`find` for this process's uid, once per process."""
    return find(os.geteuid(), avoid)


def user_namespace(uid: int, gid: int, inner: int) -> int:
    """A user namespace, owned by this process's user, in which ``inner`` is the host ``uid``
    and ``gid``, 0 is this process's own uid and gid (bwrap, as 0, reaches files as the
    organiser), and nothing else is mapped: a file descriptor for bwrap's ``--userns``, which
    keeps it alive. The holder process that made it has exited on return.

    :raises SubIdError: if it cannot be made (the helpers refuse, no user namespaces here).
    """
    try:
        holder = subprocess.Popen(
            ["unshare", "--user", "--", "/bin/sh", "-c", "echo; read _"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd="/", env={"PATH": PATH})
    except OSError as err:
        raise SubIdError(f"cannot start unshare (util-linux): {err}") from None
    assert holder.stdin is not None and holder.stdout is not None and holder.stderr is not None
    try:
        if not holder.stdout.readline():  # the namespace exists once the holder speaks
            why = holder.stderr.read().decode(errors="replace").strip().splitlines()
            raise SubIdError(f"unshare --user failed: {(why or ['no output'])[-1]}")
        for helper, host, own in (("newuidmap", uid, os.getuid()),
                                  ("newgidmap", gid, os.getgid())):
            done = subprocess.run([helper, str(holder.pid), "0", str(own), "1", str(inner),
                                   str(host), "1"],
                                  capture_output=True, text=True, check=False, cwd="/",
                                  env={"PATH": PATH}, timeout=10)
            if done.returncode != 0:
                why = done.stderr.strip().splitlines() or [f"exit {done.returncode}"]
                raise SubIdError(f"{helper} {host} failed: {why[-1]}")
        fd = os.open(f"/proc/{holder.pid}/ns/user", os.O_RDONLY | os.O_CLOEXEC)
        if os.fstat(fd).st_ino == os.stat("/proc/self/ns/user").st_ino:
            os.close(fd)
            raise SubIdError("the holder process is not in a user namespace of its own")
        return fd
    except (OSError, subprocess.SubprocessError) as err:
        if isinstance(err, SubIdError):
            raise
        raise SubIdError(f"cannot map uid {uid} into a user namespace: {err}") from None
    finally:
        with contextlib.suppress(OSError):
            holder.stdin.close()
        try:
            holder.wait(timeout=5)
        except subprocess.TimeoutExpired:
            holder.kill()
            holder.wait()
        holder.stdout.close()
        holder.stderr.close()
