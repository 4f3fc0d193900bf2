"""A league: a season whose entrants join, update and retire while it plays (``ct-referee
league``).

The layer just above :mod:`referee.tournament`, whose parts it reuses (the output folder's
journal and lines, the sealing of entrants, the pre-flight, the dispatch over a
:class:`~referee.runners.local.Runner`, TrueSkill's settings); it imports ``tournament`` and the
layers below, and only :mod:`referee.cli` imports it.

* :mod:`~referee.league.config`: the league's YAML, checked as a tournament's is;
* :mod:`~referee.league.matchmaker`: who plays next (pure): placement, then the pairs that
  teach most, with a fair-share floor;
* :mod:`~referee.league.table`: the ratings per duplicate set and their history (pure, bounded);
* :mod:`~referee.league.verdicts`: each pair's sequential verdict and the fair-play audit, the
  tournament's tests read online (pure, bounded by the pairs of versions playing);
* :mod:`~referee.league.submissions`: the submissions folder watched, each settled folder
  admitted (snapshot, pre-flight, conformance) off the league's own thread;
* :mod:`~referee.league.journal`: the league's events and results on disk, read back on a
  restart (a finished match is never lost);
* :mod:`~referee.league.page`: the live page, a static file;
* :mod:`~referee.league.season`: the league's loop.
"""
