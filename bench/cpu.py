"""CPU seconds of a benchmark's whole process tree, worker processes forked by a fork server
included (they are the server's children, so this process's ``RUSAGE_CHILDREN`` never counts
them: the server's own counters do, once it has reaped them)."""

from __future__ import annotations

import os
import resource
from pathlib import Path


def forkserver_seconds() -> float:
    """User and system CPU seconds of this process's fork server (``multiprocessing``'s), its
    reaped children (worker processes, and with them their bots) included; 0 if none runs."""
    from multiprocessing import forkserver

    pid = getattr(forkserver._forkserver, "_forkserver_pid", None)
    if pid is None:
        return 0.0
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    ticks = sum(int(x) for x in fields[11:15])  # utime stime cutime cstime
    return ticks / os.sysconf("SC_CLK_TCK")


def tree_seconds() -> tuple[float, float]:
    """CPU seconds so far: this process's own, and its descendants' (reaped children, and
    what the fork server's reaped children used)."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (me.ru_utime + me.ru_stime,
            kids.ru_utime + kids.ru_stime + forkserver_seconds())
