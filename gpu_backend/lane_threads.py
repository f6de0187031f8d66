"""How many threads run one lane of the HMM's scan kernels and of the one-dispatch sampler,
by adapter: a workgroup of LANE_THREADS per lane on a GPU; on a CPU adapter a thread per
lane for the HMM kernels and, where it has subgroups, lanes of one subgroup for the lane
sampler (gpu_backend/wgpu_lane_sampler.py)."""

from __future__ import annotations

from gpu_backend.wgpu_device import DeviceInfo

# Threads per lane of the scan kernels and the one-dispatch sampler on a GPU: 32, one warp
# on NVIDIA, since the K-wide kernels: on the H200 at a paced bar's clocks 1,072 lanes'
# warm update took 53 ms of device time against 63 at 16 threads, 78 at 64 and 85 at 128
# (docs/benchmarks.md, "K-wide scan kernels and a warp per lane"). A CPU adapter's:
# threads_per_lane.
LANE_THREADS = 32


def threads_per_lane(info: DeviceInfo, requested: int | None) -> tuple[int, int]:
    """(the HMM kernels', the lane sampler's) threads per lane; `requested` (not None) for
    both, 0 for a thread per lane and a dispatch per step. A GPU runs LANE_THREADS in each.
    A CPU adapter runs its HMM kernels (the cold path) a thread per lane, where the scans'
    barriers cost more than they save, and where it has subgroups its warm batches on the
    lane sampler in lanes of one subgroup (lavapipe: 8 threads; the two-worker warm round
    of the embedded default's shape 5-10 % faster than a dispatch per step at the median,
    21-22 % at p99: docs/benchmarks.md, twenty-seventh session); without, a dispatch per
    step."""
    if requested is not None:
        return requested, requested
    if info.adapter_type == "CPU":
        return 0, info.subgroup_size
    return LANE_THREADS, LANE_THREADS
