"""Legal, but ignores ``quit`` and its closed stdin: it keeps running."""

import signal
import time

from base import run

signal.signal(signal.SIGTERM, signal.SIG_IGN)
run(on_line=lambda keyword: keyword == "quit" and time.sleep(60))
