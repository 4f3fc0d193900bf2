"""Bot text made safe to show: nothing a bot writes can drive a terminal.

Pure code, no I/O. Every terminal output that shows text a bot wrote (``info`` comments, the
``ready`` name, stderr lines, answers quoted in fault details) passes it through
:func:`escape_controls` first, and shows it as plain text (a rich ``Text``, never markup).

>>> escape_controls("\\x1b[2J fake\\tline\\u202e")
'\\\\x1b[2J fake\\\\tline\\\\u202e'
>>> quote("ready " + "x" * 80, limit=10), quote(b"7c 3h")
("'ready xxxx'...", "'7c 3h'")
"""

from __future__ import annotations

import re

_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""C0 controls (tab and newline too), DEL, C1 controls, and the bidi embeddings, overrides and
isolates that can reorder what a line appears to say."""

_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escape(m: re.Match[str]) -> str:
    c = m.group()
    return _NAMED.get(c) or (f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}")


def escape_controls(text: str) -> str:
    """``text`` with every control character (C0, DEL, C1) and bidi control written as a
    visible escape (``\\x1b``, ``\\t``, ``\\u202e``); everything else, backslashes included,
    unchanged."""
    return _CONTROLS.sub(_escape, text)


def quote(data: str | bytes | bytearray, limit: int = 80) -> str:
    """A bot's text quoted for a one-line message (a Python ``repr``: controls escaped), cut to
    about ``limit`` characters (``...`` after the quote says it was cut); bytes are read as
    ASCII, anything else a replacement character."""
    if isinstance(data, bytes | bytearray):
        data = bytes(data[: limit + 1]).decode("ascii", "replace")
    text = repr(data[:limit])
    return text + "..." if len(data) > limit else text
