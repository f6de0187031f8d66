"""Whether a backend's sampler runs on a CPU or a GPU, whatever wraps it.

A CPU: numpy, a wgpu adapter of type "CPU" (lavapipe), or a GPU backend already fallen
back to numpy. [model] sample_between_bars = "auto" reads it: on a CPU the bar's sampler
is most of an update (the embedded default's 0.40 s against 40 ms reweighing its draws on
this project's VM), on the H200 the bar's sampler was faster than the reweighing pass
(docs/benchmarks.md, thirtieth and thirty-first sessions).
"""

from __future__ import annotations

from gpu_backend.device_client import SharedDeviceBackend
from gpu_backend.fallback import FallbackBackend


def runs_on_cpu(backend: object) -> bool:
    """True for numpy and CPU adapters; a shared device's client answers for its own
    backend (the device process runs the same adapter)."""
    if isinstance(backend, SharedDeviceBackend):
        backend = backend.local
    if isinstance(backend, FallbackBackend):
        backend = backend.gpu if backend.gpu is not None else backend.cpu
    device = getattr(backend, "device", None)
    return device is None or device.info.adapter_type == "CPU"
