"""Robust per-instrument scaling of return windows.

The model works on r / s with s = 1.4826 * MAD (a consistent sd under normality that one
crash bar cannot inflate), so its priors are stated in "robust sd" units whatever the
instrument's volatility. Where more than half the returns are identical (MAD = 0, e.g. a
halted or illiquid name) the plain sd stands in; an all-constant window gets scale 1.
"""

from __future__ import annotations

import numpy as np

from regime_model.types import FloatArray

MAD_TO_SD = 1.4826


def robust_scale(returns: FloatArray) -> FloatArray:
    """Scale s [N] of each window [N, T]."""
    med = np.median(returns, axis=1, keepdims=True)
    mad = MAD_TO_SD * np.median(np.abs(returns - med), axis=1)
    sd = returns.std(axis=1)
    return np.where(mad > 0, mad, np.where(sd > 0, sd, 1.0))
