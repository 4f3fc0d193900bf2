"""Fault kinds, and the reasons a bot's error gives for itself.

Pure code, no I/O. A :class:`Fault` is what the referee records and tells the bot (``forfeit
timeout``); its values are the words of protocol v1 and of the game record. A :class:`Reason`
says more precisely what went wrong in a bot's start-up or request, so that tools (the
conformance checker's hints) key on it rather than on a message meant for people.

>>> Fault.TIMEOUT == "timeout", f"forfeit {Fault.CRASH}"
(True, 'forfeit crash')
"""

from __future__ import annotations

from enum import StrEnum


class Fault(StrEnum):
    """The kinds of fault of protocol v1, in the order the standings show them."""

    TIMEOUT = "timeout"
    ILLEGAL = "illegal"
    GARBLED = "garbled"
    CRASH = "crash"
    STARTUP = "startup"
    MEMORY = "memory"

    @classmethod
    def order(cls, kind: str) -> tuple[int, str]:
        """A sort key: the kinds in table order, then any unknown kind (from an old or foreign
        record) by name."""
        kinds = list(cls)
        return (kinds.index(cls(kind)) if kind in kinds else len(kinds), kind)


class Reason(StrEnum):
    """Why a bot's start-up or request failed, within its :class:`Fault`."""

    NO_ANSWER = "no-answer"
    """No line came before the deadline (``timeout``; ``startup`` if it was the first)."""
    PARTIAL_LINE = "partial-line"
    """Only part of a line, with no newline, came before the deadline."""
    NOT_READING = "not-reading"
    """The bot's input pipe stayed full until the deadline: it does not read."""
    EXITED = "exited"
    """The process exited (``crash``; ``startup`` before ``ready``)."""
    CLOSED_OUTPUT = "closed-output"
    """Its stdout closed while the process still ran."""
    CLOSED_INPUT = "closed-input"
    """Its stdin closed: a write to it failed."""
    NOT_RUNNING = "not-running"
    """Asked after it was stopped (or before it was started)."""
    LONG_LINE = "long-line"
    """A line over the length limit."""
    UNSOLICITED = "unsolicited"
    """A line when no request was pending."""
    NOT_READY = "not-ready"
    """A first line that is not ``ready [name]``."""
    STOPPED = "stopped"
    """The start-up was stopped from outside (Ctrl-C) before ``ready``."""
    LEFT = "left"
    """A person at the terminal left the match."""
    SPAWN_FAILED = "spawn-failed"
    """The command was found but could not be started, twice (``startup``)."""
    OUT_OF_MEMORY = "out-of-memory"
    """The memory limit killed a process of the bot (``memory``)."""
    DISQUALIFIED = "disqualified"
    """The entrant was disqualified (``max_faults``): its seat has no process."""
