"""Philox-4x32-10 against Random123's known answers, and the streams built on it."""

from __future__ import annotations

import numpy as np
import pytest

from regime_model import rng

KNOWN_ANSWERS = [  # Random123 kat_vectors: counter, key -> output
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    (
        (0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344),
        (0xA4093822, 0x299F31D0),
        (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1),
    ),
]


@pytest.mark.parametrize(("counter", "key", "expected"), KNOWN_ANSWERS)
def test_philox_reproduces_the_published_known_answers(counter, key, expected) -> None:
    out = rng.philox4x32(np.array([counter], np.uint32), np.array([key], np.uint32))
    assert out.dtype == np.uint32
    assert tuple(int(v) for v in out[0]) == expected


def lanes(seed: int = 1, seq: int = 2) -> rng.Stream:
    return rng.make_stream(
        seed, np.array([5, 5, 9], np.uint32), np.array([0, 1, 0], np.uint32), seq
    )


def test_uniforms_lie_in_the_open_unit_interval_and_look_uniform() -> None:
    u = rng.uniform(lanes(), 0, rng.Purpose.ACCEPT, 50_000)
    assert u.shape == (3, 50_000) and (u > 0).all() and (u < 1).all()
    assert np.abs(u.mean(axis=1) - 0.5).max() < 0.01
    counts = np.histogram(u, bins=10, range=(0, 1))[0]
    assert np.abs(counts / u.size - 0.1).max() < 0.005


def test_normals_have_unit_moments_and_independent_lanes() -> None:
    z = rng.normal(lanes(), 3, rng.Purpose.MOMENTUM, 40_001)
    assert z.shape == (3, 40_001)
    assert np.abs(z.mean(axis=1)).max() < 0.03
    assert np.abs(z.std(axis=1) - 1).max() < 0.02
    assert np.abs(np.corrcoef(z)[np.triu_indices(3, 1)]).max() < 0.03


def test_every_key_component_changes_the_stream_and_nothing_else_does() -> None:
    base = rng.uniform(lanes(), 4, rng.Purpose.MOMENTUM, 8)
    np.testing.assert_array_equal(base, rng.uniform(lanes(), 4, rng.Purpose.MOMENTUM, 8))
    assert not np.isin(base[0], base[1]).any()  # chain differs
    assert not np.isin(base[0], base[2]).any()  # instrument differs
    for other in (
        rng.uniform(lanes(seed=2), 4, rng.Purpose.MOMENTUM, 8),
        rng.uniform(lanes(seq=3), 4, rng.Purpose.MOMENTUM, 8),
        rng.uniform(lanes(), 5, rng.Purpose.MOMENTUM, 8),
        rng.uniform(lanes(), 4, rng.Purpose.ACCEPT, 8),
    ):
        assert not np.isin(base, other).any()
    # A longer request extends the stream rather than reshuffling it.
    np.testing.assert_array_equal(rng.uniform(lanes(), 4, rng.Purpose.MOMENTUM, 20)[:, :8], base)


def test_seeds_fold_to_32_bits_and_reject_negatives() -> None:
    assert rng.fold_seed(7) == 7
    assert rng.fold_seed((3 << 32) | 5) == 6
    with pytest.raises(ValueError, match="non-negative"):
        rng.fold_seed(-1)


def test_a_block_of_iterations_gives_each_iterations_own_bits() -> None:
    """The sampler draws momenta and accept uniforms a block of iterations at a time
    (transition_keys); a run must not depend on it, so the bits are identical."""
    its = np.arange(-40, 30)
    momenta = rng.normals(lanes(), its, rng.Purpose.MOMENTUM, 7)
    accepts = rng.uniforms(lanes(), its, rng.Purpose.ACCEPT, 1)
    for k, it in enumerate(its):
        assert np.array_equal(momenta[:, k], rng.normal(lanes(), int(it), rng.Purpose.MOMENTUM, 7))
        assert np.array_equal(accepts[:, k], rng.uniform(lanes(), int(it), rng.Purpose.ACCEPT, 1))
