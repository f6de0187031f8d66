"""robust_scale's medians come from a sort rather than numpy's partition (faster on rows of
a few hundred values): the same bits as np.median, whatever the rows hold."""

from __future__ import annotations

import numpy as np
import pytest

from regime_model.scaling import MAD_TO_SD, _median, robust_scale


def _reference(returns: np.ndarray) -> np.ndarray:
    med = np.median(returns, axis=1, keepdims=True)
    mad = MAD_TO_SD * np.median(np.abs(returns - med), axis=1)
    sd = returns.std(axis=1)
    return np.where(mad > 0, mad, np.where(sd > 0, sd, 1.0))


@pytest.mark.parametrize("T", [1, 2, 7, 256, 257])
def test_the_scale_is_np_medians_to_the_bit(T: int) -> None:
    gen = np.random.default_rng(T)
    returns = 0.01 * gen.standard_normal((40, T)) * gen.uniform(0.2, 5.0, (40, 1))
    returns[1] = 0.0  # constant: scale 1
    returns[2, : T // 2 + 1] = 0.003  # more than half identical: MAD 0, the sd stands in
    returns[3] = np.round(returns[3], 3)  # many ties
    assert np.array_equal(robust_scale(returns), _reference(returns))


def test_a_row_with_a_nan_has_a_nan_median_as_numpy_gives() -> None:
    x = np.array([[1.0, np.nan, 3.0, 2.0], [4.0, 1.0, 3.0, 2.0]])
    assert np.array_equal(_median(x), np.median(x, axis=1), equal_nan=True)
