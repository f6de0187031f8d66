"""regime_model: the Bayesian regime model (a Gaussian HMM of returns), its sampler and
diagnostics, as pure numerics over arrays.

numpy dispatches float64 kernels (exp, log, sums) to the widest SIMD the CPU has, and its
AVX-512 kernels round differently from the AVX2 ones: on an Intel Xeon with AVX512_SPR the
same update gave other bits than on an AVX2 host (2026-12-01, `bench digest`). Turned off
before numpy is first imported, every x86-64 host computes the same bits
(tests/data/golden_digests.json). A value the user set is kept (setdefault), so
`NPY_DISABLE_CPU_FEATURES=""` restores numpy's full dispatch.
"""

import os

os.environ.setdefault("NPY_DISABLE_CPU_FEATURES", "X86_V4 AVX512_ICL AVX512_SPR")
