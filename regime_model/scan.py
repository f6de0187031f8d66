"""Parallel-in-time products of K x K matrices, stored state-major as [K, K, B, T].

Each product is rescaled to sum 1, and each message vector to sum 1. Only directions
matter to the HMM (filtered and backward messages are normalised anyway, and the
log-likelihood is rebuilt from one-step predictive terms), so no log scales are carried:
the rescaling exists only to keep the entries away from under/overflow over thousands of
bars.

The layout puts time last so each (i, j) entry is one contiguous [B, T] slab: a K x K
product is then K fused multiply-adds over slabs instead of B*T tiny matmuls.
"""

from __future__ import annotations

import numpy as np

from regime_model.types import FloatArray


def combine(A: FloatArray, B: FloatArray) -> FloatArray:
    """Rescaled A @ B for [K, K, ...] stacks (the scan's associative operator)."""
    C = A[:, 0, None] * B[None, 0]
    for j in range(1, A.shape[1]):
        C += A[:, j, None] * B[None, j]
    C /= C.sum(axis=(0, 1))
    return C


def _normalised(v: FloatArray) -> FloatArray:
    v /= v.sum(axis=0)
    return v


def row_times(v: FloatArray, M: FloatArray) -> FloatArray:
    """Row vectors v [K, ...] times matrices M [K, K, ...]: sum_i v_i M_ij, [K, ...]."""
    out: FloatArray = v[0] * M[0]
    for i in range(1, len(v)):
        out += v[i] * M[i]
    return out


def _row_times(v: FloatArray, M: FloatArray) -> FloatArray:
    """Row vectors v [K, ...] times matrices M [K, K, ...], rescaled."""
    return _normalised(row_times(v, M))


def _times_column(M: FloatArray, v: FloatArray) -> FloatArray:
    """Matrices M [K, K, ...] times column vectors v [K, ...], rescaled."""
    out = M[:, 0] * v[0]
    for j in range(1, len(v)):
        out += M[:, j] * v[j]
    return _normalised(out)


def prefix_and_suffix(
    a: FloatArray, M: FloatArray, b: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """a M_0 ... M_t and M_t ... M_{n-1} b for every t, rescaled: [K, B, n] each.

    a and b are [K, B] (a row and a column vector per sequence), M is [K, K, B, n].
    Odd-even recursion: pair neighbours, Q_k = M_2k M_2k+1, recurse on the half-length
    sequence, which gives the prefixes at odd positions and the suffixes at even ones;
    the others are one vector-matrix product each. The pair products are the only
    matrix-matrix work, shared by both directions: ~n of them plus ~2n vector-matrix
    products in all, against ~2n matrix products per direction for a scan of the matrices.
    """
    n = M.shape[-1]
    if n == 1:
        return _row_times(a[..., None], M), _times_column(M, b[..., None])
    h, odd = n // 2, n % 2 == 1
    pairs = combine(M[..., 0 : 2 * h : 2], M[..., 1 : 2 * h : 2])
    # An odd sequence's last matrix has no partner: fold it into the suffixes' start.
    tail = _times_column(M[..., -1:], b[..., None])[..., 0] if odd else b
    F, S = prefix_and_suffix(a, pairs, tail)  # F_k = prefix at 2k+1, S_k = suffix at 2k
    prefix, suffix = np.empty(M.shape[1:]), np.empty(M.shape[1:])
    prefix[..., 1::2], suffix[..., 0 : 2 * h : 2] = F, S
    before = np.concatenate([a[..., None], F[..., : h + odd - 1]], axis=-1)
    prefix[..., 0::2] = _row_times(before, M[..., 0::2])
    after = np.concatenate([S[..., 1:], tail[..., None]], axis=-1)
    suffix[..., 1 : 2 * h : 2] = _times_column(M[..., 1 : 2 * h : 2], after)
    if odd:
        suffix[..., -1] = tail
    return prefix, suffix


def total_product(M: FloatArray) -> FloatArray:
    """The rescaled product of the whole sequence [K, K, B, T] -> [K, K, B] (tree reduction)."""
    while M.shape[-1] > 1:
        half = M.shape[-1] // 2
        pairs = combine(M[..., 0 : 2 * half : 2], M[..., 1 : 2 * half : 2])
        M = pairs if M.shape[-1] % 2 == 0 else np.concatenate([pairs, M[..., -1:]], axis=-1)
    return M[..., 0]
