"""How far apart two backends' mean estimates may be: the |z| bound of sampler_agreement.

Each backend gives R replicate estimates of a quantity; the check divides the difference
of their means by its standard error from the pooled replicate variance. That is the
two-sample t statistic with 2R - 2 degrees of freedom, not a normal z: with R = 4 (the
quick check) a bound of 3 is passed by chance in 2.4 % of comparisons, not 0.27 %, and a
check of six comparisons fails a correct backend about one time in ten. The bound is the
t quantile at the normal's 3-sigma tail probability, so the check's false alarms are what
"3 sigma" promises whatever R (large R: 3).
"""

from __future__ import annotations

import functools
import math

import numpy as np

SIGMAS = 3.0
# P(|Z| > 3) for a standard normal: the false-alarm rate a 3-sigma bound means
TAIL = math.erfc(SIGMAS / math.sqrt(2.0))


def t_tail(x: float, df: float) -> float:
    """P(|T| > x) for Student's t with df degrees of freedom (x >= 0)."""
    # 1 - 2 * integral of the density over [0, x], by Simpson's rule on a fine grid
    grid = np.linspace(0.0, x, 20_001)
    log_norm = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    density = np.exp(log_norm - (df + 1) / 2 * np.log1p(grid**2 / df))
    h = x / (len(grid) - 1)
    inside = h / 3 * (density[0] + density[-1] + 4 * density[1:-1:2].sum()
                      + 2 * density[2:-1:2].sum())  # fmt: skip
    return max(0.0, 1.0 - 2.0 * float(inside))


def t_bound(tail: float, df: float) -> float:
    """The x with P(|T| > x) = tail, by bisection."""
    lo, hi = 0.0, 1e3
    for _ in range(80):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if t_tail(mid, df) > tail else (lo, mid)
    return (lo + hi) / 2


@functools.cache
def z_max(replicates: int) -> float:
    """The |z| bound for R replicates per backend: 3-sigma's false alarms at 2R - 2 df."""
    if replicates < 2:
        raise ValueError(f"the agreement check needs at least 2 replicates, got {replicates}")
    return t_bound(TAIL, 2 * replicates - 2)
