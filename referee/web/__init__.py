"""Pages for people: a tournament's report and the replay viewer.

May import :mod:`referee.tournament` and every layer below; never the CLI.
"""
