"""Flushes its ``ready`` but forgets to flush its answers: they sit in the stdout buffer
until it exits."""

import sys

from base import run

# A block-buffered stdout even under PYTHONUNBUFFERED=1 (flushed by Python at exit).
sys.stdout = open(1, "w", buffering=1 << 16, closefd=False)  # noqa: SIM115
run(flush_answers=False)
