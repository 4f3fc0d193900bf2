#!/usr/bin/env python3
"""A bot that writes every line it receives to the file named by its first argument and plays
the first legal move (the first offered card for a pick)."""

import sys

from legal import answer


def main(path: str) -> None:
    with open(path, "w") as log:
        for line in sys.stdin:
            log.write(line)
            log.flush()
            tokens = line.split()
            if tokens[0] == "chinese-ten":
                print("ready log", flush=True)
            elif tokens[0] == "quit":
                return
            elif tokens[0] in ("go", "pick"):
                print(answer(line), flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
