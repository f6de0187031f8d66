"""What a checkpoint keeps of each return window: a 64-bit weighted sum of its values.

The windows are not in the checkpoint but rebuilt from the returns table at a resume
(service.state.returns_rows); the checkpoint's blob keeps a check of each, so a window
rebuilt from a wrong row, shifted by a return, or holding a corrupt value is refused, and
the model digest still covers every input. The check is sum_i w_i * x_i mod 2^64 over the
window's float64 bit patterns x_i (little-endian), with w_i = (2i + 1) * 0x9E3779B97F4A7C15:
each weight odd, so one wrong value ALWAYS changes the sum (an odd multiplier is
invertible mod 2^64), and a wrong or shifted window changes it but for a 2^-64 chance.
CRC-32 (up to the thirty-seventh session) guarded the same and cost 0.17 ms at 268
windows of 256 returns, a row at a time; these sums take one numpy call for all rows,
0.03 ms (docs/bench-results/columns_and_sums.py).
"""

from __future__ import annotations

import numpy as np

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)  # odd: 2^64 / the golden ratio
_WEIGHTS: dict[int, np.ndarray] = {}  # by window length


def _weights(length: int) -> np.ndarray:
    weights = _WEIGHTS.get(length)
    if weights is None:
        odd = 2 * np.arange(length, dtype=np.uint64) + np.uint64(1)
        weights = _WEIGHTS[length] = odd * _GOLDEN  # wraps mod 2^64, as meant
    return weights


def window_sums(windows: np.ndarray) -> np.ndarray:
    """[N] uint64: the check of each row of `windows` [N, T] (float64, little-endian)."""
    bits = np.asarray(windows, dtype="<f8").view("<u8")  # the rows' own bytes, no copy
    sums: np.ndarray = np.einsum("ij,j->i", bits, _weights(bits.shape[1]))  # wraps mod 2^64
    return sums


def window_sum(returns: np.ndarray) -> int:
    """The check of one window (any length, none included)."""
    return int(window_sums(np.asarray(returns, dtype="<f8").reshape(1, -1))[0])
