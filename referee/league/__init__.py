"""A league: a season whose entrants join, update and retire while it plays (``ct-referee
league``). The layer just above :mod:`referee.tournament`, whose parts it reuses; only
:mod:`referee.cli` imports it. Its modules: docs/architecture.md (*referee/league*); the guide:
docs/league.md.
"""
