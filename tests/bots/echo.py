"""A well-behaved bot: answers every ``go``/``pick`` request with ``ok <request>`` and logs
every other line to stderr as ``got <line>``."""

import sys


def main() -> None:
    name = " ".join(sys.argv[1:]) or "echo-bot"
    out = sys.stdout
    for line in sys.stdin:
        if line.startswith("chinese-ten"):
            out.write(f"ready {name}\n")
        elif line.startswith(("go", "pick")):
            out.write("ok " + line)
        elif line.startswith("quit"):
            return
        else:
            sys.stderr.write("got " + line)
            sys.stderr.flush()
            continue
        out.flush()


if __name__ == "__main__":
    main()
