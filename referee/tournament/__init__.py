"""Tournaments: the configuration, the schedule and formats (each a scheduler), the stopping
rule and ratings, who is admitted, the dispatch policy over a runner, and the output folder.

May import :mod:`referee.runners` and every layer below; never the web pages or the CLI.
"""
