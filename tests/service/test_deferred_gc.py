"""A worker's update runs with the cycle collector paused and collects after it
(service/worker/deferred_gc.py): no collector pause falls inside an update."""

from __future__ import annotations

import gc
import weakref

import pytest

from service.worker.deferred_gc import deferred_collection


class _Node:
    def __init__(self) -> None:
        self.other: _Node | None = None


def _cycle() -> weakref.ref[_Node]:
    """A reference cycle nothing else holds: only the collector can free it."""
    a, b = _Node(), _Node()
    a.other, b.other = b, a
    return weakref.ref(a)


@pytest.fixture(autouse=True)
def _collector_restored() -> object:
    enabled = gc.isenabled()
    yield
    (gc.enable if enabled else gc.disable)()


def test_the_collector_is_paused_inside_and_collects_the_blocks_cycles_after() -> None:
    gc.enable()
    with deferred_collection():
        assert not gc.isenabled()
        cycle = _cycle()
        assert cycle() is not None
    assert gc.isenabled()
    assert cycle() is None, "the collection after the block freed the cycle"


def test_an_update_that_raises_still_turns_the_collector_back_on_and_collects() -> None:
    gc.enable()
    cycle = None
    with pytest.raises(RuntimeError, match="broker down"), deferred_collection():
        cycle = _cycle()
        raise RuntimeError("broker down")
    assert gc.isenabled()
    assert cycle is not None and cycle() is None


def test_a_collector_someone_else_turned_off_stays_off_and_is_not_run() -> None:
    gc.disable()
    with deferred_collection():
        cycle = _cycle()
    assert not gc.isenabled()
    assert cycle() is not None, "no collection ran: the caller manages the collector"
    gc.collect()
    assert cycle() is None
