"""The WGSL Philox is regime_model.rng's, bit for bit; its floats are the host's in f32."""

from __future__ import annotations

from typing import Any

import numpy as np
from wgpu_fixtures import fixture_gpu_device  # noqa: F401 - fixture

from gpu_backend.shaders.philox import PHILOX_TEST_WGSL
from gpu_backend.wgpu_device import Device
from regime_model import rng

N = 4096


def _run_kernel(device: Device, counters: np.ndarray, keys: np.ndarray) -> tuple[Any, Any]:
    import wgpu  # noqa: PLC0415

    dev = device.handle
    usage = wgpu.BufferUsage
    ins = [
        dev.create_buffer(size=a.nbytes, usage=usage.STORAGE | usage.COPY_DST)
        for a in (counters, keys)
    ]
    for buffer, data in zip(ins, (counters, keys), strict=True):
        dev.queue.write_buffer(buffer, 0, data)
    outs = [dev.create_buffer(size=16 * N, usage=usage.STORAGE | usage.COPY_SRC) for _ in "ab"]
    module = dev.create_shader_module(code=PHILOX_TEST_WGSL)
    pipeline = dev.create_compute_pipeline(
        layout="auto", compute={"module": module, "entry_point": "main"}
    )
    group = dev.create_bind_group(
        layout=pipeline.get_bind_group_layout(0),
        entries=[{"binding": i, "resource": {"buffer": b}} for i, b in enumerate(ins + outs)],
    )
    encoder = dev.create_command_encoder()
    compute = encoder.begin_compute_pass()
    compute.set_pipeline(pipeline)
    compute.set_bind_group(0, group)
    compute.dispatch_workgroups(N // 64)
    compute.end()
    dev.queue.submit([encoder.finish()])
    words = np.frombuffer(dev.queue.read_buffer(outs[0]), np.uint32).reshape(N, 4)
    floats = np.frombuffer(dev.queue.read_buffer(outs[1]), np.float32).reshape(N, 4)
    return words, floats


def _inputs() -> tuple[np.ndarray, np.ndarray]:
    gen = np.random.default_rng(14)
    counters = gen.integers(0, 2**32, size=(N, 4), dtype=np.uint64).astype(np.uint32)
    keys = gen.integers(0, 2**32, size=(N, 2), dtype=np.uint64).astype(np.uint32)
    # The corners: all-zero and all-one words, and uniforms next to 0 and to 1.
    counters[:4] = [[0, 0, 0, 0], [0xFFFFFFFF] * 4, [1, 2, 3, 4], [0x03000000, 0xFFFFFFF1, 3, 9]]
    keys[:2] = [[0, 0], [0xFFFFFFFF, 0xFFFFFFFF]]
    return counters, keys


def test_philox_words_are_the_host_generator_bit_for_bit(gpu_device: Device) -> None:
    counters, keys = _inputs()
    words, _ = _run_kernel(gpu_device, counters, keys)
    np.testing.assert_array_equal(words, rng.philox4x32(counters, keys))


def _host_floats(words: np.ndarray) -> tuple[np.ndarray, ...]:
    """rng.uniform's arithmetic on given words, and rng.normal's pairing of them."""
    w = words.astype(np.uint64)
    bits = [
        ((w[:, i] >> np.uint64(5)) << np.uint64(26)) | (w[:, i + 1] >> np.uint64(6)) for i in (0, 2)
    ]
    u0, u1 = ((b.astype(np.float64) + 0.5) / 2.0**53 for b in bits)
    radius = np.sqrt(-2.0 * np.log(u0))
    return u0, np.log(u0), radius * np.cos(2 * np.pi * u1), radius * np.sin(2 * np.pi * u1)


def test_uniforms_and_normals_are_the_host_ones_in_float32(gpu_device: Device) -> None:
    counters, keys = _inputs()
    words, floats = _run_kernel(gpu_device, counters, keys)
    # Words forced to the extremes of the uniform: u next to 0 and next to 1.
    u, log_u, cos_part, sin_part = _host_floats(words)
    np.testing.assert_allclose(floats[:, 0], u, rtol=2e-7)
    np.testing.assert_allclose(floats[:, 1], log_u, rtol=2e-6, atol=1e-12)
    np.testing.assert_allclose(floats[:, 2], cos_part, rtol=0, atol=5e-6)
    np.testing.assert_allclose(floats[:, 3], sin_part, rtol=0, atol=5e-6)


def test_the_device_draws_the_host_momentum_stream() -> None:
    """rng.normal's first pair of a lane is `normal_pair` of its first momentum block."""
    stream = rng.make_stream(5, np.arange(3, dtype=np.uint32), np.zeros(3, np.uint32), 2)
    counters = rng._counters(stream, np.array([-7]), rng.Purpose.MOMENTUM, 3)[:, 0]  # [L, 3, 4]
    words = rng.philox4x32(counters, stream.key[:, None])
    _, _, cos_part, sin_part = _host_floats(words.reshape(-1, 4))
    z = rng.normal(stream, -7, rng.Purpose.MOMENTUM, 6)
    np.testing.assert_allclose(z[:, :3], cos_part.reshape(3, 3), rtol=1e-12)
    np.testing.assert_allclose(z[:, 3:], sin_part.reshape(3, 3), rtol=1e-12)
