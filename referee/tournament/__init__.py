"""Tournaments: the configuration, the schedule and formats (each a type), the stopping rule
and ratings, who is admitted, the dispatch policy over a runner, the output folder, and the
session that runs one over it.

May import :mod:`referee.runners` and every layer below; never the web pages or the CLI.
"""
