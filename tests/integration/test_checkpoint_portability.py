"""A checkpoint written by one backend resumes on the other: a GPU host's state moves to
a CPU-only host and back."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

from conftest import DaemonProcess


def run_with(
    run_daemon: Callable[..., DaemonProcess], config: Path, state: Path, backend: str
) -> DaemonProcess:
    config.write_text(
        config.read_text()
        .replace("window = 128", "window = 64")  # llvmpipe runs the wgpu side: keep it small
        .replace('backend = "numpy"', f'backend = "{backend}"')
        .replace('backend = "wgpu"', f'backend = "{backend}"')
    )
    daemon = run_daemon(
        "run", "--config", str(config), "--state-dir", str(state), "--stop-after", "2"
    )
    assert daemon.wait_exit() == 0, daemon.report("bad exit")
    return daemon


def test_state_written_on_wgpu_resumes_on_numpy_and_back(
    run_daemon: Callable[..., DaemonProcess], fast_config: Path, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    # one account of one instrument: llvmpipe's time grows with the lanes, each worker
    # compiles the kernels anew, and one carry crossing backends proves what six do
    two = '[[accounts]]\nname = "alpha"\n\n[[accounts]]\nname = "beta"\n'
    assert two in fast_config.read_text()
    fast_config.write_text(fast_config.read_text().replace(two, '[[accounts]]\nname = "alpha"\n')
                           .replace("chains = 4", "chains = 4\nsample_between_bars = false"))
    # the bar's sampler on both backends: its gradient counts show the warm start below
    (fast_config.parent / "instruments.toml").write_text('[accounts.alpha]\nsymbols = ["SPY"]\n')
    on_gpu = run_with(run_daemon, fast_config, state, "wgpu")
    assert {e["backend"] for e in on_gpu.named("update.completed")} == {"wgpu"}
    on_cpu = run_with(run_daemon, fast_config, state, "numpy")
    [started] = on_cpu.named("worker.started", account="alpha")
    assert started["resumed_from_seq"] == 2
    updates = on_cpu.named("update.completed", account="alpha")
    assert [u["seq"] for u in updates] == [3, 4]
    assert {u["backend"] for u in updates} == {"numpy"}
    cold = on_gpu.named("update.completed", account="alpha")[0]["model"]["gradient_evals"]
    warm = updates[0]["model"]["gradient_evals"]
    # 25 iterations against a cold start's 120 at LIGHT_EFFORT, each of 3-6 gradient steps
    assert warm < cold / 2, "the numpy worker warm-started from the wgpu worker's carries"
    back = run_with(run_daemon, fast_config, state, "wgpu")
    assert [u["seq"] for u in back.named("update.completed", account="alpha")] == [5, 6]
    with sqlite3.connect(state / "alpha.sqlite") as db:
        stamped = db.execute("SELECT seq, backend FROM checkpoints ORDER BY seq").fetchall()
    assert stamped == [
        (1, "wgpu"),
        (2, "wgpu"),
        (3, "numpy"),
        (4, "numpy"),
        (5, "wgpu"),
        (6, "wgpu"),
    ]
