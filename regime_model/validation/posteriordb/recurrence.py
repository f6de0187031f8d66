"""First-order linear recurrences x_t = c x_{t-1} + d_t (x_{-1} = 0), vectorised over time.

Recursive doubling: after the level with shift s, x_t holds sum_{j<2s} c^j d_{t-j}; log2(T)
whole-array steps instead of a Python loop over T. GARCH variances and ARMA errors are
such recurrences with a per-lane constant c, and so are their adjoints (run backwards).
"""

from __future__ import annotations

from regime_model.types import FloatArray


def forward(c: FloatArray, d: FloatArray) -> FloatArray:
    """x [L, T] for coefficients c [L] and drives d [L, T]."""
    x = d.copy()
    power = c.copy()
    shift = 1
    while shift < x.shape[1]:
        x[:, shift:] = x[:, shift:] + power[:, None] * x[:, :-shift]
        power = power * power
        shift *= 2
    return x


def backward(c: FloatArray, g: FloatArray) -> FloatArray:
    """lam_t = g_t + c lam_{t+1} (lam_T = 0): the adjoint of `forward`, dL/dd = lam."""
    out: FloatArray = forward(c, g[:, ::-1])[:, ::-1]
    return out
