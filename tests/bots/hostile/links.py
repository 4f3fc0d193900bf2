"""A hostile bot that follows every symlink in its own folder (none of them named in its
command, so the command check never sees them) before ``ready``: ``SAW <link>: <entries or
first line>`` or ``NOTHING <link>`` on stderr; then it plays as ``bench/instant_bot.py``
(copied beside it)."""

import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
for name in sorted(os.listdir(here)):
    path = os.path.join(here, name)
    if not os.path.islink(path):
        continue
    try:
        if os.path.isdir(path):
            seen = " ".join(sorted(os.listdir(path))) or "(empty)"
        else:
            with open(path, errors="replace") as f:
                seen = f.readline().strip() or "(empty)"
        print(f"SAW {name}: {seen}", file=sys.stderr, flush=True)
    except OSError:
        print(f"NOTHING {name}", file=sys.stderr, flush=True)

import instant_bot  # noqa: E402

instant_bot.main()
