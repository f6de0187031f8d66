"""Counter-based randomness: Philox-4x32-10 (Salmon et al. 2011) in numpy uint32/uint64.

No generator state exists: every number is a pure function of
    key     = (seed, instrument key)
    counter = (purpose << 24 | block, iteration, chain, update seq)
so a restart, another host or a WGSL port reproduces the same stream bit for bit. Only
32x32->64 multiplies, xors and adds are used, all expressible in WGSL's u32 arithmetic.
"""

from __future__ import annotations

from enum import IntEnum
from typing import NamedTuple

import numpy as np

from regime_model.types import FloatArray, IntArray, UIntArray

_MASK32 = 0xFFFFFFFF
_M0, _M1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
_W0, _W1 = np.uint32(0x9E3779B9), np.uint32(0xBB67AE85)
_ROUNDS = 10
_MAX_BLOCKS = 1 << 24


class Purpose(IntEnum):
    """Disjoint sub-streams of one (lane, iteration): the top byte of counter word 0."""

    MOMENTUM = 0
    ACCEPT = 1
    INIT = 2
    SCHEDULE = 3
    SHIFT = 4  # the level-shift move: its direction, then its Metropolis test


class Stream(NamedTuple):
    """One lane's stream: Philox key words and the two fixed high counter words."""

    key: UIntArray  # [L, 2] (seed, instrument key)
    high: UIntArray  # [L, 2] (chain, update seq)


def fold_seed(seed: int) -> int:
    """A non-negative int of any size folded to 32 bits (xor of its 32-bit words)."""
    if seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed}")
    folded = 0
    while True:
        folded ^= seed & _MASK32
        seed >>= 32
        if not seed:
            return folded


def make_stream(seed: int, instruments: UIntArray, chains: UIntArray, seq: int) -> Stream:
    """Streams for lanes given each lane's instrument key and chain index (arrays [L])."""
    L = len(instruments)
    key = np.stack([np.full(L, fold_seed(seed), np.uint32), instruments.astype(np.uint32)], 1)
    high = np.stack([chains.astype(np.uint32), np.full(L, fold_seed(seq), np.uint32)], 1)
    return Stream(key, high)


def _mulhilo(a: np.uint64, b: UIntArray) -> tuple[UIntArray, UIntArray]:
    product = a * b.astype(np.uint64)
    return (product >> np.uint64(32)).astype(np.uint32), (product & np.uint64(_MASK32)).astype(
        np.uint32
    )


def philox4x32(counter: UIntArray, key: UIntArray) -> UIntArray:
    """Philox-4x32-10 over [..., 4] uint32 counters and broadcastable [..., 2] uint32 keys."""
    c0, c1, c2, c3 = (counter[..., i].astype(np.uint32) for i in range(4))
    k0, k1 = key[..., 0].astype(np.uint32), key[..., 1].astype(np.uint32)
    with np.errstate(over="ignore"):  # uint32 key bumps wrap modulo 2^32 by design
        for r in range(_ROUNDS):
            if r:
                k0, k1 = k0 + _W0, k1 + _W1
            hi0, lo0 = _mulhilo(_M0, c0)
            hi1, lo1 = _mulhilo(_M1, c2)
            c0, c1, c2, c3 = hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0
    return np.stack(np.broadcast_arrays(c0, c1, c2, c3), axis=-1)


def _counters(stream: Stream, iterations: IntArray, purpose: Purpose, blocks: int) -> UIntArray:
    if not 0 < blocks <= _MAX_BLOCKS:
        raise ValueError(f"blocks must be in 1..{_MAX_BLOCKS}, got {blocks}")
    L, its = len(stream.key), np.asarray(iterations, dtype=np.int64)
    ctr = np.empty((L, len(its), blocks, 4), dtype=np.uint32)
    ctr[..., 0] = (int(purpose) << 24) + np.arange(blocks, dtype=np.uint32)
    # Negative iterations wrap, staying distinct.
    ctr[..., 1] = (its & _MASK32).astype(np.uint32)[None, :, None]
    ctr[..., 2:] = stream.high[:, None, None, :]
    return ctr


def uniforms(stream: Stream, iterations: IntArray, purpose: Purpose, n: int) -> FloatArray:
    """`uniform` at every iteration of `iterations` [I], in one call: [L, I, n].

    Philox costs ~140 small numpy operations per call whatever its size, so a sampler
    draws a block of iterations' numbers at once (see `transition_keys`).
    """
    ctr = _counters(stream, iterations, purpose, (n + 1) // 2)
    words = philox4x32(ctr, stream.key[:, None, None])
    return _unit(words.reshape(ctr.shape[0], ctr.shape[1], -1, 2))[:, :, :n]


def uniform(stream: Stream, iteration: int, purpose: Purpose, n: int) -> FloatArray:
    """[L, n] float64 uniforms in the open interval (0, 1), 53 random bits each."""
    return uniforms(stream, np.array([iteration]), purpose, n)[:, 0]


def _unit(pairs: UIntArray) -> FloatArray:
    """Pairs of words [..., 2] to uniforms in (0, 1)."""
    wide = pairs.astype(np.uint64)
    # 27 + 26 bits = 53, exactly a double's mantissa; the half offset keeps 0 (and 1) out,
    # which the log in Box-Muller needs.
    bits53 = ((wide[..., 0] >> np.uint64(5)) << np.uint64(26)) | (wide[..., 1] >> np.uint64(6))
    unit: FloatArray = (bits53.astype(np.float64) + 0.5) / 2.0**53
    return unit


def first_uniforms(stream: Stream, iterations: IntArray, purpose: Purpose) -> FloatArray:
    """uniform(stream, it, purpose, 1)[0, 0] for every it of `iterations`, in one call:
    the first lane's first uniform, e.g. the batch-wide schedule's step counts."""
    ctr = np.zeros((len(iterations), 4), dtype=np.uint32)
    ctr[:, 0] = int(purpose) << 24
    ctr[:, 1] = (np.asarray(iterations, dtype=np.int64) & _MASK32).astype(np.uint32)
    ctr[:, 2:] = stream.high[0]
    return _unit(philox4x32(ctr, stream.key[0])[:, :2])


def normals(stream: Stream, iterations: IntArray, purpose: Purpose, n: int) -> FloatArray:
    """`normal` at every iteration of `iterations` [I], in one call: [L, I, n]."""
    u = uniforms(stream, iterations, purpose, 2 * ((n + 1) // 2))
    radius = np.sqrt(-2.0 * np.log(u[..., 0::2]))
    angle = 2.0 * np.pi * u[..., 1::2]
    out: FloatArray = np.concatenate([radius * np.cos(angle), radius * np.sin(angle)], axis=-1)
    return out[..., :n]


def normal(stream: Stream, iteration: int, purpose: Purpose, n: int) -> FloatArray:
    """[L, n] standard normals by Box-Muller on pairs of uniforms."""
    return normals(stream, np.array([iteration]), purpose, n)[:, 0]
