"""A scratch folder for a benchmark's bots and output, removed when the benchmark ends."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def scratch(prefix: str, where: str | None = "/var/tmp") -> Iterator[Path]:
    """A new folder under ``where`` (``None``: the system's temporary folder) that every user
    may enter and list (mode 755: a sandboxed bot runs as a uid of its own), removed with all
    it holds on leaving."""
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir=where))
    try:
        folder.chmod(0o755)
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
