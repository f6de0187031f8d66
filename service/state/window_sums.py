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
0.03 ms (docs/bench-results/columns_and_sums.py), but 0.12-0.18 ms of the daemon's
checkpoint at 268 on an H100 host (thirty-ninth session): the pass reads every window's
2 KB. A window slid on by one return has its sum from the last one's in a few operations
per row (SlidingSums), reading only the return that left and the one that came.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from service.model_state import ReturnsTable

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)  # odd: 2^64 / the golden ratio
_TWO_GOLDEN = np.uint64(2 * 0x9E3779B97F4A7C15 % 2**64)
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


class SlidingSums:
    """The sums of the rows of windows that slide on one return at a time: those of a
    buffer's columns [start, start + length) (service.model_state.ReturnsTable's), kept
    from one checkpoint to the next. With S the sum and P the plain sum of the bit
    patterns (mod 2^64), the window one return on, x_0 leaving and y coming, has
        S' = S - G x_0 - 2G (P - x_0) + (2T - 1) G y,   P' = P - x_0 + y
    (each weight (2i + 1) G becomes the one before, (2i - 1) G = (2i + 1) G - 2G): the
    same sum as window_sums of the new window, to the bit."""

    def __init__(self, windows: np.ndarray, start: int) -> None:
        self.start, self.length = start, windows.shape[1]
        self.sums = window_sums(windows)
        self.plain: np.ndarray = np.asarray(windows, dtype="<f8").view("<u8").sum(
            axis=1, dtype=np.uint64)  # wraps mod 2^64, as meant
        self._last = np.uint64((2 * self.length - 1) * 0x9E3779B97F4A7C15 % 2**64)

    def slide(self, buffer: np.ndarray) -> None:
        """One return on: the window now starts at column start + 1 of `buffer`, whose
        column start + length is the return that came."""
        leaving, entering = (np.asarray(buffer[:, c], dtype="<f8").view("<u8")
                             for c in (self.start, self.start + self.length))  # fmt: skip
        self.sums = (self.sums - _GOLDEN * leaving - _TWO_GOLDEN * (self.plain - leaving)
                     + self._last * entering)
        self.plain = self.plain - leaving + entering
        self.start += 1


def table_sums(table: ReturnsTable) -> np.ndarray:
    """[rows] the sums of `table`'s windows: slid on from those its last checkpoint kept
    (`table.checks`) where its windows are one return on since, else summed whole."""
    kept = table.checks
    if isinstance(kept, SlidingSums) and kept.start == table.start - 1:
        kept.slide(table.buffer)
    elif not (isinstance(kept, SlidingSums) and kept.start == table.start):
        kept = table.checks = SlidingSums(table.view, table.start)
    return kept.sums
