"""A hostile bot that says who it is on the host before ``ready``: ``HOSTUID <uid> <gid>``
(from its namespace's maps: the host ids it runs as, where that namespace's parent is the
host's), ``GROUPS``, ``CAPS`` (effective, permitted, bounding), ``NNP`` and ``SECCOMP``,
``LIMITS`` (its rlimits) on stderr; then, for each path its command names, ``READ <path>:
<first line>`` or ``DENIED <path>: <error>``; then it plays as ``bench/instant_bot.py``
(which the tests copy beside it)."""

import os
import sys

import instant_bot


def host(kind: str, mine: int) -> int:
    """The host id ``mine`` (this process's id inside) maps to."""
    with open(f"/proc/self/{kind}_map") as f:
        for line in f:
            inside, outside, count = map(int, line.split())
            if inside <= mine < inside + count:
                return outside + mine - inside
    return -1


with open("/proc/self/status") as lines:
    status = dict(line.rstrip("\n").split(":\t", 1) for line in lines if ":\t" in line)
print(f"HOSTUID {host('uid', os.getuid())} {host('gid', os.getgid())}", file=sys.stderr)
print(f"GROUPS [{status['Groups'].strip()}]", file=sys.stderr)
print(f"CAPS {status['CapEff']} {status['CapPrm']} {status['CapBnd']}", file=sys.stderr)
print(f"NNP {status['NoNewPrivs']} SECCOMP {status['Seccomp']}", file=sys.stderr)
with open("/proc/self/limits") as lines:
    limits = {line[:26].strip(): line[26:].split()[0] for line in lines}
print(f"LIMITS nproc={limits['Max processes']} data={limits['Max data size']} "
      f"fsize={limits['Max file size']} core={limits['Max core file size']}", file=sys.stderr)
for path in sys.argv[1:]:
    try:
        with open(path, errors="replace") as f:
            print(f"READ {path}: {f.readline().strip()}", file=sys.stderr)
    except OSError as err:
        print(f"DENIED {path}: {err.strerror}", file=sys.stderr)
sys.stderr.flush()
instant_bot.main()  # then it plays like the instant bot (copied beside it)
