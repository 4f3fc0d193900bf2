"""An asymptotic confidence sequence on a mean, its variance learnt from the data (pure).

Waudby-Smith, Arbour, Sinha, Kennedy and Ramdas, *Time-uniform central limit theory and
asymptotic confidence sequences* (Annals of Statistics, 2024), the Gaussian-mixture boundary
(their Theorem 2.2 with the running sample variance): after ``t`` values of mean ``m`` and
sample variance ``s^2``,

    m +- sqrt( 2 (t s^2 r^2 + 1) / (t^2 r^2) * log( sqrt(t s^2 r^2 + 1) / alpha ) )

covers the mean at every ``t`` at once with probability tending to at least ``1 - alpha``,
for any distribution with a finite variance. ``r`` tunes where it is tightest
(:func:`tuned_for`); a prior spread enters with the weight of :data:`PRIOR_WEIGHT` values
only. Why and the coverage measured: docs/statistics.md.

>>> low, high = interval(100, 500.0, 100 * 25.0 + 99 * 100.0, 0.05)  # mean 5, sd 10
>>> round(low, 2), round(high, 2)
(1.02, 8.98)
"""

from __future__ import annotations

import math

__all__ = ["PRIOR_WEIGHT", "REFERENCE_ALPHA", "TUNED_FOR", "half_width", "interval",
           "log_evidence", "tuned_for"]

TUNED_FOR = 40.0
"""The sequence is tightest after this many values (deals: about 7 sets of two players at
target 1000, where close pairs are decided; a choice, not a measured figure)."""
PRIOR_WEIGHT = 12.0
"""The weight, in values, of the prior spread in the variance: it vanishes as the values
accrue, and keeps a skewed pair (rare large losses not yet seen) from a narrow interval in its
first sets. A choice made with ``bench/intervals.py`` (1,000 tournaments): with 6, the most
skewed pair simulated (behind by 51 one deal in 14) was missed in 6.6%, with 12 in 3.7%, for a
pair 5 points apart decided about one set later."""
REFERENCE_ALPHA = 0.05 / 3
"""The level ``r`` is tuned at (a pair of a field of three at 95%; a choice): one ``r`` for
every level, so that whether the sequence has left 0 is one number however it is asked
(:func:`log_evidence`)."""


def tuned_for(t_star: float, alpha: float) -> float:
    """The mixture's ``r`` that makes the boundary tightest after ``t_star`` values (their
    eq. (13))."""
    la = -2 * math.log(alpha)
    return math.sqrt((la + math.log(la + 1)) / t_star)


def half_width(t: int, var: float, alpha: float, r: float | None = None) -> float:
    """The boundary's half-width after ``t`` values of sample variance ``var``."""
    if t <= 0:
        return math.inf
    rho = tuned_for(TUNED_FOR, REFERENCE_ALPHA) if r is None else r
    v = t * var * rho * rho + 1
    return math.sqrt(2 * v / (t * t * rho * rho) * math.log(math.sqrt(v) / alpha))


def _variance(t: int, total: float, squares: float, prior_sd: float) -> float:
    mean = total / t
    ss = max(0.0, squares - t * mean * mean)
    return (ss + PRIOR_WEIGHT * prior_sd ** 2) / (t - 1 + PRIOR_WEIGHT)


def log_evidence(t: int, total: float, squares: float, *, prior_sd: float = 15.0) -> float:
    """The largest ``log(1 / alpha)`` at which the sequence after these values excludes 0:
    it does at ``alpha`` exactly when this is at least ``log(1 / alpha)`` (0 before any).

    >>> e = log_evidence(100, 500.0, 100 * 25.0 + 99 * 100.0, prior_sd=15.0)
    >>> interval(100, 500.0, 100 * 25.0 + 99 * 100.0, math.exp(-e) * 1.001)[0] > 0
    True
    """
    if t <= 0:
        return 0.0
    rho = tuned_for(TUNED_FOR, REFERENCE_ALPHA)
    var = _variance(t, total, squares, prior_sd)
    v = t * var * rho * rho + 1
    mean = total / t
    return max(0.0, t * t * rho * rho * mean * mean / (2 * v) - math.log(math.sqrt(v)))


def interval(t: int, total: float, squares: float, alpha: float, *,
             prior_sd: float = 15.0) -> tuple[float, float]:
    """The sequence at ``alpha`` after ``t`` values with this sum and sum of squares:
    ``(-inf, inf)`` before any."""
    if t <= 0:
        return -math.inf, math.inf
    mean = total / t
    w = half_width(t, _variance(t, total, squares, prior_sd), alpha)
    return mean - w, mean + w
