"""Says ``ready`` too late in its first process only (``slowfirst.py MARKER_FILE``): the first
start creates the marker file and waits; every later start is a good bot."""

import sys
import time
from pathlib import Path

from base import run

marker = Path(sys.argv[1])
if not marker.exists():
    marker.write_text("started once\n")
    for line in sys.stdin:
        if line.startswith("quit"):
            break
        time.sleep(0.05)
    sys.exit(0)
run()
