"""Prints a debug line on stdout after each answer."""

from base import run, write


def say(line: str, flush: bool) -> None:
    write(line)
    write(f"debug: I played {line}")


run(say=say)
