"""Bound folders served from overlays, so that a bot's mount table names no host path.

A bind mount's line in ``/proc/self/mountinfo`` names its mount point and, in its fourth
field, the source's path inside its file system, whatever the mount point: a bot bound at
``/ct/0`` from ``/srv/out/.store/alice-17`` would still read that path. An overlay's root is
``/``, and its options name its lower layers as they were written at mount time. So a root
referee starts each sandboxed bot through :func:`stage_command`: ``unshare`` makes a private
mount namespace (propagation private: nothing reaches the host, and the mounts are gone with
the bot), and each folder to show gets a read-only overlay on ``STAGE/m<i>``, mounted from
inside the folder (``cd``) with the lower layers ``.`` and ``STAGE/e`` (an empty folder: an
overlay without an upper layer needs two). A folder no overlay can be stacked on (``/proc``, or
a file system already stacked twice) is bound as it is instead, naming its path as before.
bwrap, run in that namespace, binds ``STAGE/m<i>``
at a neutral name (``/ct/N``), and a symlink at the folder's host path points there, so that
every path the bot's command, its runtime (a venv's ``bin/python``, ``pyvenv.cfg``) and its
files name still resolves.

The bot's mount table then shows ``/ct/N`` with root ``/`` and ``lowerdir=.:STAGE/e``; the
host paths remain as the symlinks' names and targets, which the bot reads as before
(``docs/security.md``, *What remains*). Cost: ``unshare``, ``sh`` and one ``mount`` per
folder, a few milliseconds each.
"""

from __future__ import annotations

import contextlib
import os
import stat
import subprocess
from collections.abc import Sequence

STAGE = "/run/ct-referee-stage"
"""Where the overlays are mounted, in the bot's private mount namespace only (root's empty
folders on the host, made on first use: ``e`` and the mount points ``m<i>``)."""
NEUTRAL = "/ct"
"""Where the sandbox shows the folders (``/ct/0``, ``/ct/1``, ...)."""
PATH = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"
FAILED = 112
"""The launcher's exit status when the staging failed (111: the gate saw no line)."""
SCRIPT = f"""\
n=$1; shift; i=0
while [ "$i" -lt "$n" ]; do
  cd -P -- "$1" || exit {FAILED}
  mount -n -t overlay ctro -o "ro,lowerdir=.:{STAGE}/e" "{STAGE}/m$i" 2>/dev/null \
    || mount -n --rbind . "{STAGE}/m$i" || exit {FAILED}
  shift; i=$((i+1))
done
cd / && exec "$@"
"""


def mount_point(index: int) -> str:
    """Where the ``index``-th staged folder is mounted (the bwrap bind source)."""
    return f"{STAGE}/m{index}"


def ensure_stage(count: int) -> None:
    """Make :data:`STAGE` with the empty folders the overlays need (``e``, the second lower
    layer, and the mount points ``m0`` to ``m<count - 1>``), root's, ``0755``, where missing.

    :raises OSError: if one is not a folder of root's that only root may write.
    """
    for path in (STAGE, f"{STAGE}/e", *(mount_point(i) for i in range(count))):
        with contextlib.suppress(FileExistsError):
            os.mkdir(path, 0o755)
        st = os.lstat(path)
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != 0 or st.st_mode & 0o022:
            raise OSError(f"{path!r} is not a folder of root's that only root may write: "
                          f"remove it")
        if stat.S_IMODE(st.st_mode) != 0o755:
            os.chmod(path, 0o755)
    if os.listdir(f"{STAGE}/e"):  # a lower layer of every bot's folder: it would show
        raise OSError(f"{STAGE}/e is not empty: empty it")


def stage_command(folders: Sequence[str], argv: Sequence[str]) -> list[str]:
    """The command that stages ``folders`` (host paths, in the order of their mount points)
    in a private mount namespace, then execs ``argv`` there."""
    return ["unshare", "--mount", "--propagation", "private", "/bin/sh", "-c", SCRIPT,
            "ct-stage", str(len(folders)), *folders, *argv]


def probe_staging() -> tuple[bool, str]:
    """Whether a bot can be staged here (root, ``unshare``, ``mount``, overlayfs): tried once
    on ``/usr``, with what it shows as the mount table."""
    if os.geteuid() != 0:
        return False, "the referee is not root"
    try:
        ensure_stage(1)
        done = subprocess.run(
            stage_command(["/usr"], ["cat", "/proc/self/mountinfo"]), capture_output=True,
            text=True, timeout=10, check=False, env={"PATH": PATH}, cwd="/")
    except (OSError, subprocess.SubprocessError) as err:
        return False, str(err)
    line = next((row for row in done.stdout.splitlines() if f" {mount_point(0)} " in row), "")
    if done.returncode != 0 or " / " not in line or "lowerdir=.:" not in line:
        return False, (done.stderr.strip().splitlines() or ["fails"])[-1]
    return True, "no host path in it (overlays in a private mount namespace)"
