"""The device traffic of whatever device serves a backend (see device_traffic.py)."""

from __future__ import annotations

from gpu_backend.device_client import SharedDeviceBackend
from gpu_backend.device_traffic import NO_TRAFFIC, CountingDevice, Traffic
from gpu_backend.fallback import FallbackBackend


def take_traffic(backend: object) -> Traffic:
    """Submissions and bytes uploaded to the device behind `backend` since the last take;
    NO_TRAFFIC for a backend without a device (numpy, or wgpu while it has fallen back).
    A shared device's client adds its share of the device process's (device_client.py)."""
    if isinstance(backend, SharedDeviceBackend):
        own, shared = take_traffic(backend.local), backend.take_shared_traffic()
        return Traffic(own.submissions + shared.submissions, own.upload_bytes + shared.upload_bytes)
    served = backend.gpu if isinstance(backend, FallbackBackend) else backend
    handle = getattr(getattr(served, "device", None), "handle", None)
    return handle.take() if isinstance(handle, CountingDevice) else NO_TRAFFIC
