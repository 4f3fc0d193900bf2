"""Protocol v1: the lines that cross the wire (``wire``), which lines each seat receives and in
what order (``narration``), and bot text made safe for a terminal (``escape``).

Pure code, no I/O. May import :mod:`referee.game` only.
"""
