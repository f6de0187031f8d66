"""Eigen-decomposition of a batch of small symmetric matrices, in numpy's elementwise
arithmetic only.

LAPACK's eigh runs on the BLAS numpy ships (OpenBLAS), which picks its kernels by CPU:
the same numpy gives other last bits on another x86-64 host, and the model's numpy path
promises the same bits on every one (`bench digest`). Cyclic Jacobi rotations use only
multiplies, adds, divides and square roots, which IEEE 754 rounds the same everywhere.
For the model's D <= 20 parameters a handful of sweeps converge to machine precision.
"""

from __future__ import annotations

import numpy as np

from regime_model.types import FloatArray

MAX_SWEEPS = 16  # quadratic convergence: 5-8 sweeps reach machine precision for D <= 20
_TINY = 1e-300


def eigh(A: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Eigenvalues [L, D] (unsorted) and eigenvectors [L, D, D] (columns) of symmetric A."""
    A = np.array(A, dtype=np.float64)
    L, D, _ = A.shape
    V = np.broadcast_to(np.eye(D), (L, D, D)).copy()
    scale = np.sqrt((A * A).sum(axis=(1, 2)))
    off_diagonal = ~np.eye(D, dtype=bool)
    for _ in range(MAX_SWEEPS):
        off = np.sqrt((A * A)[:, off_diagonal].sum(axis=1))
        if np.all(off <= 1e-15 * scale):
            break
        for p in range(D - 1):
            for q in range(p + 1, D):
                _rotate(A, V, p, q)
    return np.diagonal(A, axis1=1, axis2=2).copy(), V


def _rotate(A: FloatArray, V: FloatArray, p: int, q: int) -> None:
    """The Jacobi rotation that zeroes A[:, p, q] in every lane, applied in place."""
    apq = A[:, p, q]
    active = np.abs(apq) > _TINY
    # |theta| beyond 1e150 means t ~ 1 / (2 theta) < 1e-150, no rotation: clipped, theta^2
    # cannot overflow.
    theta = np.clip((A[:, q, q] - A[:, p, p]) / np.where(active, 2.0 * apq, 1.0), -1e150, 1e150)
    t = np.where(theta >= 0, 1.0, -1.0) / (np.abs(theta) + np.sqrt(theta * theta + 1.0))
    t = np.where(active, t, 0.0)
    c = 1.0 / np.sqrt(t * t + 1.0)
    s = t * c
    for M, cols_only in ((A, False), (V, True)):
        mp, mq = M[:, :, p].copy(), M[:, :, q].copy()
        M[:, :, p] = c[:, None] * mp - s[:, None] * mq
        M[:, :, q] = s[:, None] * mp + c[:, None] * mq
        if not cols_only:
            mp, mq = M[:, p, :].copy(), M[:, q, :].copy()
            M[:, p, :] = c[:, None] * mp - s[:, None] * mq
            M[:, q, :] = s[:, None] * mp + c[:, None] * mq
