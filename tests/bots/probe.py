"""A bot for the sandbox tests: each request ``go <probe> <arg>`` is answered ``yes`` or
``no <error>``, saying whether the probe worked."""

import os
import socket
import sys


def probe(kind: str, arg: str) -> None:
    if kind == "read":  # fails on an empty file too: a hidden file reads as empty
        with open(arg) as f:
            if not f.read():
                raise ValueError("empty")
    elif kind == "write":
        with open(arg, "w") as f:
            f.write("written by a bot\n")
    elif kind == "exists":
        if not os.path.exists(arg):
            raise FileNotFoundError(arg)
    elif kind == "connect":
        host, port = arg.rsplit(":", 1)
        with socket.create_connection((host, int(port)), timeout=2):
            pass


def main() -> None:
    for line in sys.stdin:
        words = line.split()
        if words[0] == "chinese-ten":
            answer = "ready probe"
        elif words[0] == "go":
            try:
                probe(words[1], words[2])
                answer = "yes"
            except Exception as e:
                answer = f"no {type(e).__name__}"
        elif words[0] == "quit":
            return
        else:
            continue
        sys.stdout.write(answer + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
