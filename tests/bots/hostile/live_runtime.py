"""A hostile bot run through a ``#!`` line that names an interpreter in a folder the entrant's
own login owns (``#!/var/tmp/mine/bin/python3``, a symlink to the system's Python): that folder
is a "runtime" the sandbox binds live, outside the snapshot, so the login can change it during
play (a channel in from outside, and a place to leave what it learnt between seatings). Before
``ready`` it says on stderr what it sees there (``SAW <file>: <first line>`` or ``NOTHING``),
then plays as ``bench/instant_bot.py`` (copied beside it). The tests write its ``#!`` line."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
prefix = os.path.dirname(os.path.dirname(sys.executable))  # the interpreter's install prefix
live = os.path.join(prefix, "live.txt")
try:
    with open(live) as f:
        print(f"SAW {live}: {f.readline().strip()}", file=sys.stderr, flush=True)
except OSError:
    print(f"NOTHING {live}", file=sys.stderr, flush=True)

import instant_bot  # noqa: E402

instant_bot.main()
