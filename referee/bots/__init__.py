"""A bot as a process: command resolution, the sandbox (bubblewrap, seccomp, cgroups), the
process itself, and :class:`~referee.bots.bot.Bot`, which speaks protocol v1 over it.

May import :mod:`referee.game` and :mod:`referee.protocol`; never a match, a record or a
tournament.
"""
