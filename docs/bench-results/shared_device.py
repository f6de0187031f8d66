# ruff: noqa: I001
"""Would one process serving every account's warm update win back what five processes
sharing a GPU lose? (issue 14). A accounts of N instruments each (T 256, K 2, 4 chains,
the daemon's ModelSpec and update, `diagnose="failing"` as the worker runs it), all in
ONE process on one device, each warm round run three ways, alternated over ROUNDS:

- serial: one backend per account (its own buffers and ring), updated one after another;
- threads: the same backends, one thread per account, started together;
- one-submission: the same backends on a thread each, their warm runs gathered (the
  first to arrive waits up to GATHER_S for the others) and submitted together
  (gpu_backend.joint_submission): what a device process would do without a kernel change;
- one-batch: one backend and one update of all A x N instruments (what a joined
  submission would cost: its lanes are the accounts' lanes).

Between rounds: PAUSE_S, and WAKE_S before each round a throwaway device (the clock wake)
where WAKE_S > 0. One JSON line per round: each way's wall ms and its updates' device runs.
The figure to compare is the five worker processes' model stage in `bench round`
(docs/benchmarks.md, twenty-second session: device run 27 ms, run-on 31-33 ms).

    [LANE_THREADS=8] python docs/bench-results/shared_device.py A N ROUNDS PAUSE_S WAKE_S
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from typing import Any

from regime_model.update import ModelSpec, refresh
import numpy as np

from gpu_backend.clock_wake import ThrowawayDevice
from gpu_backend.identity import regime_returns
from gpu_backend.joint_submission import run_in_one_submission
from gpu_backend.wgpu_backend import WgpuBackend
from gpu_backend.wgpu_device import open_device

T = 256
GATHER_S = 0.005


class Gathering:
    """Warm runs of several accounts' threads submitted together: the first to arrive
    waits up to GATHER_S for the other `parties`, then submits every run that came."""

    def __init__(self, parties: int) -> None:
        self.parties = parties
        self.cond = threading.Condition()
        self.pending: list[list[Any]] = []

    def run(self, backend: WgpuBackend, batch: Any) -> Any:
        entry: list[Any] = [backend, batch, None]
        with self.cond:
            self.pending.append(entry)
            self.cond.notify_all()
            if len(self.pending) == 1:  # the first: gather, then submit for everyone
                deadline = time.monotonic() + GATHER_S
                while len(self.pending) < self.parties and time.monotonic() < deadline:
                    self.cond.wait(max(0.0, deadline - time.monotonic()))
                runs, self.pending = self.pending, []
                results = run_in_one_submission([(b, x) for b, x, _ in runs])
                for run, result in zip(runs, results, strict=True):
                    run[2] = result
                self.cond.notify_all()
            while entry[2] is None:
                self.cond.wait()
        return entry[2]


class Gathered:
    """An account's backend whose one-submission runs go through a Gathering."""

    def __init__(self, backend: WgpuBackend, gathering: Gathering) -> None:
        self._backend, self._gathering = backend, gathering

    def run_update(self, batch: Any) -> Any:
        backend = self._backend
        if backend.lane_sampler_for(batch) is None:
            return backend.run_update(batch)  # cold lanes: the host driver, alone
        return self._gathering.run(backend, batch)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._backend, name)


class Account:
    """One account's instruments, carries and backend; `update()` runs its next warm one."""

    def __init__(self, backend: Any, returns: np.ndarray, first_key: int,
                 carries: list[Any] | None = None) -> None:  # fmt: skip
        self.backend, self.returns, self.spec = backend, returns, ModelSpec()
        n = len(returns)
        self.keys = np.arange(first_key, first_key + n, dtype=np.uint32)
        if carries is None:  # a cold update first
            _, carries, _ = refresh(returns[:, :T], [None] * n, self.keys, 1, 7, self.spec,
                                    backend)  # fmt: skip
        self.carries = list(carries)
        self.seq = 1
        self.timings: dict[str, float] = {}

    def update(self) -> None:
        self.seq += 1
        window = self.returns[:, self.seq - 1 : self.seq - 1 + T]
        _, self.carries, info = refresh(window, self.carries, self.keys, self.seq, 7, self.spec,
                                        self.backend, diagnose="failing")  # fmt: skip
        self.timings = {k: round(v, 2) for k, v in info.timings_ms.items()}


def _serial(accounts: list[Account]) -> float:
    t0 = time.perf_counter()
    for account in accounts:
        account.update()
    return 1e3 * (time.perf_counter() - t0)


def _threads(accounts: list[Account]) -> float:
    start = threading.Barrier(len(accounts) + 1)

    def run(account: Account) -> None:
        start.wait()
        account.update()

    threads = [threading.Thread(target=run, args=(a,)) for a in accounts]
    for thread in threads:
        thread.start()
    start.wait()
    t0 = time.perf_counter()
    for thread in threads:
        thread.join()
    return 1e3 * (time.perf_counter() - t0)


def main() -> None:
    A, N, rounds = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    pause, wake_s = float(sys.argv[4]), float(sys.argv[5])
    series = 0.01 * regime_returns(A * N, T + 3 * rounds + 2, np.random.default_rng(5))
    device = open_device()
    # LANE_THREADS: the one-dispatch sampler on a CPU adapter too (lavapipe: to try the path)
    threads = int(os.environ["LANE_THREADS"]) if "LANE_THREADS" in os.environ else None

    def backend() -> WgpuBackend:
        return WgpuBackend(device, wake_clocks=False, lane_threads=threads)

    own = [Account(backend(), series[a * N : (a + 1) * N], a * N) for a in range(A)]
    shared = backend()
    whole = Account(shared, series, 0)
    gathering = Gathering(A)
    joint = [Account(Gathered(own[a].backend, gathering), own[a].returns, a * N, own[a].carries)
             for a in range(A)]  # fmt: skip
    ways: dict[str, Any] = {"serial": lambda: _serial(own), "threads": lambda: _threads(own),
                            "one-submission": lambda: _threads(joint),
                            "one-batch": lambda: _serial([whole])}  # fmt: skip
    wake = ThrowawayDevice()
    for r in range(rounds):
        row: dict[str, Any] = {"round": r, "accounts": A, "instruments": N, "pause_s": pause,
                               "wake_s": wake_s, "adapter": shared.adapter}  # fmt: skip
        for name, run in ways.items():
            time.sleep(max(0.0, pause - wake_s))
            if wake_s > 0:
                wake()
                time.sleep(wake_s)
            wall = run()
            accounts = {"one-batch": [whole], "one-submission": joint}.get(name, own)
            parts = [a.timings for a in accounts]
            row[name] = {"wall_ms": round(wall, 2), "updates": parts}
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
