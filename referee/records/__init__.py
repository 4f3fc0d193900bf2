"""Game records: the record format (read, write), the one replay of a record's positions, its
verification against the rules, the text replay and the rich text of cards and turns.

May import :mod:`referee.game` and :mod:`referee.protocol`; never a bot process, a match or a
tournament.
"""
