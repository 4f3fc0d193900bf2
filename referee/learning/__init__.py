"""Learning: a PettingZoo environment over the rules (the ``rl`` extra) and the bridge that enters
a policy as a bot.

May import :mod:`referee.game` and :mod:`referee.protocol` only.
"""
