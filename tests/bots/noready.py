"""Reads its input but never says ``ready``."""

import sys

for line in sys.stdin:
    if line.startswith("quit"):
        break
