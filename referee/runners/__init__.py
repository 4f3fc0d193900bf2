"""Where matches run: the :class:`~referee.runners.local.Runner` seam and its thread, process
and Dask implementations. A runner plays :class:`~referee.match.job.MatchJob` objects and
hands back records and live faults; it decides nothing about order or fairness.

May import the layers below it (:mod:`referee.match` and down); never a tournament.
"""
