"""Standard output that may stop being read: ``ct-referee tournament … | head``."""

from __future__ import annotations

import contextlib
import os
import re
from typing import TextIO

_TRAILING = re.compile(r"[ \t]+(?=\n)")


class ClosedPipeSafe:
    """A text stream over ``stream`` (standard output) that survives its reader going away:
    the first write that meets a closed pipe points the file descriptor at ``/dev/null``, and
    everything after is dropped. :attr:`closed_pipe` says whether that happened. Unless it is
    a terminal, lines lose their trailing blanks (a table padded to the console's width)."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.closed_pipe = False
        self.strip = not self.isatty()

    def write(self, text: str) -> int:
        if not self.closed_pipe:
            try:
                self.stream.write(_TRAILING.sub("", text) if self.strip else text)
                self.stream.flush()
            except (BrokenPipeError, ValueError):
                self._drop()
        return len(text)

    def flush(self) -> None:
        if not self.closed_pipe:
            try:
                self.stream.flush()
            except (BrokenPipeError, ValueError):
                self._drop()

    def isatty(self) -> bool:
        try:
            return self.stream.isatty()
        except ValueError:
            return False

    def fileno(self) -> int:
        return self.stream.fileno()

    @property
    def encoding(self) -> str:
        return getattr(self.stream, "encoding", None) or "utf-8"

    def _drop(self) -> None:
        self.closed_pipe = True
        with contextlib.suppress(OSError, ValueError):  # no flush at exit that fails again
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, self.stream.fileno())
            os.close(null)
