"""What the host sends a wgpu device: submissions and bytes uploaded, counted at the queue.

Every submission and every `write_buffer` goes through the device's queue, whichever
kernel module issues it, so the count is kept there: `open_device` wraps the wgpu device
in `CountingDevice`, whose `queue` counts and passes each call on. The cost is one Python
attribute lookup and an integer add per call. `take_traffic` reads (and restarts) the
counts of the device behind a backend (backend_traffic.py); `update.completed` reports
them per update.
"""

from __future__ import annotations

from typing import Any, NamedTuple


class Traffic(NamedTuple):
    submissions: int  # queue.submit calls
    upload_bytes: int  # bytes passed to queue.write_buffer and create_buffer_with_data


NO_TRAFFIC = Traffic(0, 0)


def _nbytes(data: Any, data_offset: int, size: int | None) -> int:
    if size:  # as wgpu reads it: None or 0 is "the rest of data"
        return int(size)
    return memoryview(data).nbytes - int(data_offset)


class CountingQueue:
    """A wgpu GPUQueue that counts submissions and uploaded bytes; all else passes on."""

    def __init__(self, queue: Any) -> None:
        self._queue = queue
        self.submissions = 0
        self.upload_bytes = 0

    def submit(self, command_buffers: Any) -> None:
        self._queue.submit(command_buffers)
        self.submissions += 1  # after: a refused call sent nothing

    def write_buffer(
        self, buffer: Any, buffer_offset: int, data: Any, data_offset: int = 0,
        size: int | None = None,
    ) -> None:
        self._queue.write_buffer(buffer, buffer_offset, data, data_offset, size)
        self.upload_bytes += _nbytes(data, data_offset, size)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._queue, name)


class CountingDevice:
    """A wgpu GPUDevice whose `queue` is a CountingQueue; every other call passes on."""

    def __init__(self, device: Any) -> None:
        self._device = device
        self.queue = CountingQueue(device.queue)

    def create_buffer_with_data(self, *, data: Any, **kwargs: Any) -> Any:
        buffer = self._device.create_buffer_with_data(data=data, **kwargs)
        self.queue.upload_bytes += memoryview(data).nbytes  # an upload too, at creation
        return buffer

    def take(self) -> Traffic:
        """The counts since the last take, then zero."""
        queue = self.queue
        taken = Traffic(queue.submissions, queue.upload_bytes)
        queue.submissions = queue.upload_bytes = 0
        return taken

    def __getattr__(self, name: str) -> Any:
        return getattr(self._device, name)
