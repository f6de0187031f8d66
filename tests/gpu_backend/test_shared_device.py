"""The shared device (gpu_backend/device_server.py and device_client.py): the warm
updates that the accounts' workers send at a bar run together on one device, and each is
the update its worker would have run on its own device, bit for bit. A worker whose
server is away, gone or failing runs its batches itself."""

from __future__ import annotations

import os
import tempfile
import threading
from collections.abc import Iterator
from multiprocessing.connection import Listener
from typing import Any

import numpy as np
import pytest
from wgpu_fixtures import fixture_gpu_device  # noqa: F401 - fixture

from gpu_backend.device_client import SharedDeviceBackend
from gpu_backend.device_server import DeviceServer
from gpu_backend.identity import regime_returns
from gpu_backend.numpy_backend import NumpyBackend
from gpu_backend.wgpu_backend import WgpuBackend
from gpu_backend.wgpu_device import Device
from regime_model.backend import Backend, UpdateBatch
from regime_model.sampler import SampleResult
from regime_model.update import ModelSpec, build_batch, refresh

SPEC = ModelSpec(window=32, warmup_cold=60, warmup_warm=3, draws=6, extend_max=0)
BAR = 1_764_806_400.0  # the bar both updates are of (epoch seconds)
DEADLINE_S = 60.0  # for events that come at once: far past any loaded machine's time


class Account:
    """An account's instruments warm from a cold update, and its next (warm) update."""

    def __init__(self, a: int) -> None:
        n = 2 + a
        self.returns = 0.01 * regime_returns(n, SPEC.window + 1, np.random.default_rng(20 + a))
        self.keys, self.seed, self.seq = np.arange(n) + 50 * a, 3 + a, 4
        _, self.carries, _ = refresh(self.returns[:, :-1], [None] * n, self.keys, self.seq - 1,
                                     self.seed, SPEC, NumpyBackend(), diagnose="none")  # fmt: skip

    def batch(self) -> UpdateBatch:
        """The warm update's one batch (extend_max 0: no run-on)."""
        return build_batch(self.returns[:, 1:], self.carries, self.keys, self.seq, self.seed,
                           SPEC)[0]  # fmt: skip

    def update(self, backend: Backend) -> Any:
        return refresh(self.returns[:, 1:], self.carries, self.keys, self.seq, self.seed, SPEC,
                       backend, diagnose="none")  # fmt: skip


@pytest.fixture
def serve(gpu_device: Device) -> Iterator[Any]:
    """serve(backend): a DeviceServer of `backend` on a private socket, on a thread; returns
    (server, address, authkey). Its gathering waits far longer than any test: a run that
    starts before DEADLINE_S started on an event (every worker of the bar arrived)."""
    stops: list[tuple[threading.Event, Listener, threading.Thread]] = []
    with tempfile.TemporaryDirectory(prefix="rt-") as folder:

        def start(backend: Backend) -> tuple[DeviceServer, str, bytes]:
            address, authkey = os.path.join(folder, f"d{len(stops)}.sock"), os.urandom(16)
            listener = Listener(address, family="AF_UNIX", authkey=authkey)
            server, stop = DeviceServer(backend, gather_s=10 * DEADLINE_S), threading.Event()
            thread = threading.Thread(target=server.serve, args=(listener, stop), daemon=True)
            thread.start()
            stops.append((stop, listener, thread))
            return server, address, authkey

        yield start
        for stop, listener, thread in stops:
            stop.set()
            listener.close()
            thread.join(DEADLINE_S)


def _same_update(got: Any, want: Any) -> None:
    estimate, carries, _ = got
    np.testing.assert_array_equal(estimate.regime_probs, want[0].regime_probs)
    np.testing.assert_array_equal(estimate.pred_vol, want[0].pred_vol)
    for a, b in zip(carries, want[1], strict=True):
        np.testing.assert_array_equal(a.position, b.position)
        np.testing.assert_array_equal(a.step_size, b.step_size)


def test_two_workers_warm_updates_of_a_bar_run_as_one_and_each_is_its_own_update(
    gpu_device: Device, serve: Any
) -> None:
    server, address, authkey = serve(WgpuBackend(gpu_device))
    accounts = [Account(a) for a in range(2)]
    clients = [SharedDeviceBackend(WgpuBackend(gpu_device), address, authkey, f"acct{a}")
               for a in range(2)]  # fmt: skip
    assert all(client.connect() for client in clients)
    got: list[Any] = [None, None]

    def update(a: int) -> None:
        with clients[a].update_turn(BAR):
            got[a] = accounts[a].update(clients[a])

    threads = [threading.Thread(target=update, args=(a,)) for a in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(DEADLINE_S)
    # the first to arrive waited for the other (connected, its bar not ended): one run
    assert (server.gatherings, server.batches) == (1, 2)
    assert [c.served_runs for c in clients] == [1, 1] and [c.own_runs for c in clients] == [0, 0]
    # each update's device traffic is its run's: one submission, bytes by its lanes (8, 12)
    shares = [client.take_shared_traffic() for client in clients]
    assert [share.submissions for share in shares] == [1, 1]
    assert shares[0].upload_bytes > 0
    assert shares[0].upload_bytes / shares[1].upload_bytes == pytest.approx(8 / 12, rel=1e-3)
    for account, result in zip(accounts, got, strict=True):
        assert "device_wait" in result[2].timings_ms
        _same_update(result, account.update(WgpuBackend(gpu_device)))


def test_a_worker_that_ended_the_bar_is_not_waited_for(gpu_device: Device, serve: Any) -> None:
    server, address, authkey = serve(WgpuBackend(gpu_device))
    done, late = (SharedDeviceBackend(WgpuBackend(gpu_device), address, authkey, name)
                  for name in ("done", "late"))  # fmt: skip
    assert done.connect() and late.connect()
    with done.update_turn(BAR):  # an update with nothing warm to run: only its end is sent
        pass
    account, got = Account(0), []
    runner = threading.Thread(target=lambda: got.append(_turn(late, account)))
    runner.start()
    runner.join(DEADLINE_S)  # the server's gathering would wait ten times longer
    assert got and late.served_runs == 1 and server.gatherings == 1


def _two_workers(gpu_device: Device, serve: Any) -> tuple[DeviceServer, SharedDeviceBackend,
                                                         SharedDeviceBackend]:  # fmt: skip
    server, address, authkey = serve(WgpuBackend(gpu_device))
    first, second = (SharedDeviceBackend(WgpuBackend(gpu_device), address, authkey, name)
                     for name in ("first", "second"))  # fmt: skip
    assert first.connect() and second.connect()
    return server, first, second


def test_a_later_block_of_a_bar_waits_for_the_workers_inside_it_and_runs_joined(
    gpu_device: Device, serve: Any
) -> None:
    """A run-on block is a worker's second batch of the bar: the other worker, inside the
    bar and not past its first batch, may send one too, so the block waits for it (the
    server's gathering would wait 600 s; a block not run within the client's 30 s would
    run on its worker) and the two run as one."""
    server, first, second = _two_workers(gpu_device, serve)
    batches = [Account(0).batch(), Account(1).batch()]

    def worker(client: SharedDeviceBackend, batch: UpdateBatch) -> None:
        with client.update_turn(BAR):
            client.run_update(batch)  # the first batches, gathered
            client.run_update(batch)  # each a run-on block, gathered

    threads = [threading.Thread(target=worker, args=(c, b))
               for c, b in zip((first, second), batches, strict=True)]  # fmt: skip
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(DEADLINE_S)
    assert [(c.served_runs, c.own_runs) for c in (first, second)] == [(2, 0), (2, 0)]
    assert (server.gatherings, server.batches) == (2, 4)
    figures = server.figures()
    assert figures["first_batches_max"] == 2 and figures["later_batches_max"] == 2


def test_a_later_block_does_not_wait_for_a_worker_that_ended_the_bar(
    gpu_device: Device, serve: Any
) -> None:
    server, first, second = _two_workers(gpu_device, serve)
    batches = [Account(0).batch(), Account(1).batch()]
    ended = threading.Event()

    def other_worker() -> None:  # its first batch, then the end of its update: no run-on
        with second.update_turn(BAR):
            second.run_update(batches[1])
        ended.set()

    other = threading.Thread(target=other_worker)
    other.start()
    with first.update_turn(BAR):
        first.run_update(batches[0])  # gathered with the other's first batch
        assert ended.wait(DEADLINE_S)
        first.run_update(batches[0])  # a run-on block: nobody left to wait for
    other.join(DEADLINE_S)
    assert (first.served_runs, first.own_runs) == (2, 0)
    assert (server.gatherings, server.batches) == (2, 3)
    assert server.figures()["later_batches_max"] == 1


def _turn(client: SharedDeviceBackend, account: Account) -> Any:
    with client.update_turn(BAR):
        return account.update(client)


def test_a_worker_runs_its_batches_itself_where_no_server_answers(gpu_device: Device) -> None:
    with tempfile.TemporaryDirectory(prefix="rt-") as folder:
        client = SharedDeviceBackend(WgpuBackend(gpu_device), os.path.join(folder, "none.sock"),
                                     b"key", "alone", retry_s=3600)  # fmt: skip
        assert not client.connect()
        account = Account(1)
        got = _turn(client, account)
    assert (client.served_runs, client.own_runs) == (0, 1)
    assert "device_wait" not in got[2].timings_ms
    _same_update(got, account.update(WgpuBackend(gpu_device)))


class _LostDevice(NumpyBackend):
    def run_update(self, batch: UpdateBatch) -> SampleResult:
        raise RuntimeError("device lost (injected)")


def test_a_failed_run_or_a_server_gone_is_run_by_the_worker(gpu_device: Device, serve: Any) -> None:
    _, address, authkey = serve(_LostDevice())
    client = SharedDeviceBackend(WgpuBackend(gpu_device), address, authkey, "acct")
    account = Account(0)
    _same_update(_turn(client, account), account.update(WgpuBackend(gpu_device)))
    assert (client.served_runs, client.own_runs) == (0, 1)  # told the run failed: ran it
    assert client.connect()  # and kept its connection

    server, address, authkey = serve(WgpuBackend(gpu_device))
    client = SharedDeviceBackend(WgpuBackend(gpu_device), address, authkey, "acct",
                                 retry_s=3600)  # fmt: skip
    assert client.connect()
    server.close_connections()  # as when its process dies
    _same_update(_turn(client, account), account.update(WgpuBackend(gpu_device)))
    assert (client.served_runs, client.own_runs) == (0, 1)
    assert not client.connect()  # dropped; tried again only after retry_s
