"""A hostile bot whose ``#!`` line names a file of its own called ``env`` (which runs it) and,
after it, a program in a folder only root can reach (``CT_PROBE_PRIVATE``'s folder): a
referee taking any ``env`` for the system's would bind that folder for the bot to read.
Prints ``ALLOWED read: ...`` or ``refused read``."""

import os

path = os.environ.get("CT_PROBE_PRIVATE", "/nonexistent")
try:
    with open(path) as f:
        print(f"ALLOWED read: {f.read().strip()}", flush=True)
except OSError:
    print("refused read", flush=True)
