"""One match: a job that describes it (plain data that can travel), the match loop that plays it
from seats and deals and returns its record, a person as a seat, a bot re-asked against a
record, and the conformance checker.

May import :mod:`referee.game`, :mod:`referee.protocol`, :mod:`referee.records` and
:mod:`referee.bots`; never runners, tournaments or pages.
"""
