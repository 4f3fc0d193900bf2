"""What a referee that is not root does between the seatings of a set in place of a drop of the
kernel's caches (``referee/bots/hygiene.py``, ``referee/bots/opened.py``): the fanotify watch
sees the files another process opened in the watched folders (not the referee's own opens),
and an eviction after the first (every file) evicts the pages of those files only; the pages
are gone (``cachestat``, Linux 6.5+). Real files on a disk-backed folder (a tmpfs page cannot
be evicted), real processes."""

from __future__ import annotations

import ctypes
import errno
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from referee.bots.hygiene import Eviction
from referee.bots.opened import Opened

pytestmark = pytest.mark.process

SYS_CACHESTAT = 451  # x86_64 and aarch64 alike (the generic table)


class _Range(ctypes.Structure):
    _fields_ = [("off", ctypes.c_uint64), ("len", ctypes.c_uint64)]


class _Stat(ctypes.Structure):
    _fields_ = [(name, ctypes.c_uint64) for name in
                ("nr_cache", "nr_dirty", "nr_writeback", "nr_evicted", "nr_recently_evicted")]


def cached_pages(path: Path) -> int:
    """Pages of ``path`` in the page cache (``cachestat``), or skip where there is none."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(path, os.O_RDONLY)
    try:
        found = _Stat()
        if libc.syscall(SYS_CACHESTAT, fd, ctypes.byref(_Range(0, 0)), ctypes.byref(found),
                        0) != 0:
            err = ctypes.get_errno()
            if err in (errno.ENOSYS, errno.EPERM):
                pytest.skip(f"no cachestat here: {os.strerror(err)}")
            pytest.fail(os.strerror(err))
        return int(found.nr_cache)
    finally:
        os.close(fd)


@pytest.fixture
def folder() -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="ct-evict-", dir="/var/tmp"))
    (root / "sub").mkdir()
    for name in ("a", "b", "sub/c"):
        with open(root / name, "wb") as f:
            f.write(os.urandom(64 << 10))
            f.flush()
            os.fsync(f.fileno())  # a dirty page is not evicted
    yield root
    shutil.rmtree(root, ignore_errors=True)


def read_in_another_process(*paths: Path) -> None:
    subprocess.run([sys.executable, "-c", "import sys\nfor p in sys.argv[1:]: "
                    "open(p, 'rb').read()", *map(str, paths)], check=True)


def test_the_watch_sees_another_processs_opens_not_its_own(folder: Path) -> None:
    try:
        watch = Opened([str(folder), str(folder / "sub")])
    except OSError as err:
        pytest.skip(f"no fanotify here: {err}")
    try:
        assert watch.take() == set()
        (folder / "b").read_bytes()  # this process's own: left out
        read_in_another_process(folder / "a", folder / "sub" / "c")
        assert watch.take() == {str(folder / "a"), str(folder / "sub" / "c")}
        assert watch.take() == set()  # forgotten once taken
    finally:
        watch.close()


def test_a_later_eviction_evicts_what_was_opened_since_and_the_pages_are_gone(
        folder: Path) -> None:
    eviction = Eviction((folder,))
    try:
        eviction.prepare()
        eviction.ready()
        eviction()  # nothing opened since the eviction of every file, in the thread
        assert (eviction.full, eviction.files) == (1, 0), eviction.watching
        if eviction.watch is None:
            pytest.skip(f"no fanotify here: {eviction.watching}")
        read_in_another_process(folder / "a", folder / "sub" / "c")
        assert cached_pages(folder / "a") > 0 and cached_pages(folder / "sub" / "c") > 0
        eviction()
        assert (eviction.full, eviction.files) == (1, 2)
        assert cached_pages(folder / "a") == 0 and cached_pages(folder / "sub" / "c") == 0
        eviction()  # nothing opened since
        assert (eviction.full, eviction.files) == (1, 0)
    finally:
        eviction.close()


def test_without_ready_the_first_call_evicts_every_file(folder: Path) -> None:
    """Bots may have started before the watch: the first call evicts every file again."""
    eviction = Eviction((folder,))
    try:
        eviction.prepare()
        read_in_another_process(folder / "b")
        eviction()
        assert (eviction.full, eviction.files) == (2, 3)
        assert cached_pages(folder / "b") == 0
    finally:
        eviction.close()


def test_a_cluster_worker_that_is_not_root_evicts_the_entrants_folders_and_the_system(
        folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before a later seating of a set, a worker that cannot drop the caches evicts the pages of
    the entrants' folders (which a worker binds as they are) and calls the system folders'
    eviction (walked and watched once a worker process: tested above, left out here)."""
    from types import SimpleNamespace

    from referee.bots import hygiene
    from referee.runners import cluster

    calls: list[str] = []
    monkeypatch.setattr(hygiene, "can_drop", lambda *_: False)
    monkeypatch.setattr(cluster, "system_eviction", lambda: lambda: calls.append("system"))
    read_in_another_process(folder / "a", folder / "sub" / "c")
    assert cached_pages(folder / "a") > 0 and cached_pages(folder / "sub" / "c") > 0
    job = SimpleNamespace(entrants=[SimpleNamespace(workdir=folder),
                                    SimpleNamespace(workdir=None)])
    cluster.clear_worker_caches(job)  # type: ignore[arg-type]
    assert calls == ["system"]
    assert cached_pages(folder / "a") == 0 and cached_pages(folder / "sub" / "c") == 0


def test_a_file_held_open_across_a_take_is_named_again_at_its_close(folder: Path) -> None:
    """A bot that opens a file before an eviction and reads it after (holding it open, or
    mapped) keeps no page from the next eviction: its close names the file again."""
    try:
        watch = Opened([str(folder), str(folder / "sub")])
    except OSError as err:
        pytest.skip(f"no fanotify here: {err}")
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys\nf = open(sys.argv[1], 'rb')\nprint('open', "
         "flush=True)\nsys.stdin.readline()\nf.read()\n", str(folder / "a")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "open\n"
        assert str(folder / "a") in (watch.take() or set())  # its open, taken by an eviction
        assert holder.stdin is not None
        holder.stdin.write("read now\n")
        holder.stdin.flush()
        assert holder.wait(30) == 0  # it read the file, then ended (its close)
        assert str(folder / "a") in (watch.take() or set())
    finally:
        holder.kill()
        holder.wait()
        watch.close()
