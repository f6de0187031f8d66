"""Each transition's random numbers, drawn for a block of iterations at a time.

An HMC transition needs, per lane, D momentum normals and one uniform for its Metropolis
test. One Philox call costs ~140 small numpy operations whatever its size, so drawing
them at every iteration cost ~0.6 ms per transition on the host: a fifth of a whole
gradient of 4 chains x 5,000 bars (`fit`). The numbers are the same bits either way
(`rng.normals` at an iteration is `rng.normal` there), so a run does not depend on BLOCK.
"""

from __future__ import annotations

import numpy as np

from regime_model import hmc, rng
from regime_model.types import FloatArray

BLOCK = 32  # iterations per draw: 32 x 1,072 lanes x 20 dimensions is 5.5 MB at most


class TransitionKeys:
    """hmc.Keys for increasing iterations of one stream, refilled a BLOCK at a time."""

    def __init__(self, stream: rng.Stream, dim: int) -> None:
        self._stream, self._dim = stream, dim
        self._first = 0
        self._momentum: FloatArray = np.empty((len(stream.key), 0, dim))
        self._accept: FloatArray = np.empty((len(stream.key), 0))

    def key(self, iteration: int) -> hmc.Key:
        j = iteration - self._first
        if not 0 <= j < self._accept.shape[1]:
            its = np.arange(iteration, iteration + BLOCK)
            self._momentum = rng.normals(self._stream, its, rng.Purpose.MOMENTUM, self._dim)
            self._accept = rng.uniforms(self._stream, its, rng.Purpose.ACCEPT, 1)[:, :, 0]
            self._first, j = iteration, 0
        return hmc.Key(self._stream, iteration, self._momentum[:, j], self._accept[:, j])
