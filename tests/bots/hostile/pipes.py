"""A hostile bot's half of a channel between sandboxes through a per-uid kernel counter: the
pipe-buffer pages a uid holds, limited by ``fs.pipe-user-pages-soft``.

``pipes.py hold N`` grows ``N`` pipes to 1 MiB each, prints ``held N`` and waits for a line on
stdin; ``pipes.py measure`` prints how many more pipes its uid can grow to 1 MiB (the
headroom: 64 on a uid holding none, with the default soft limit), which falls by one for each
1 MiB pipe another process of the same uid holds."""

import fcntl
import os
import sys

F_SETPIPE_SZ = 1031
MIB = 1 << 20


def grow(count: int) -> list[tuple[int, int]]:
    """Up to ``count`` pipes of 1 MiB, as many as the uid may have."""
    pipes = []
    while len(pipes) < count:
        r, w = os.pipe()
        try:
            fcntl.fcntl(w, F_SETPIPE_SZ, MIB)
        except OSError:
            os.close(r)
            os.close(w)
            break
        pipes.append((r, w))
    return pipes


if sys.argv[1] == "hold":
    held = grow(int(sys.argv[2]))
    print(f"held {len(held)}", flush=True)
    sys.stdin.readline()
else:
    print(f"headroom {len(grow(1000))}", flush=True)
