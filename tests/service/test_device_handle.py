"""The supervisor's side of the shared device (service/supervisor/device_handle.py), with
real processes: off unless asked for; a process that died is started again after its
backoff; one that found no GPU (exit 69) is not."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from service.bench.daemon_harness import two_account_settings, write_config
from service.config_loader import load_config
from service.exit_codes import EX_UNAVAILABLE
from service.supervisor.device_handle import FIRST_BACKOFF_S, SharedDevice
from service.supervisor.worker_handle import SPAWN

DEADLINE_S = 60.0


def _device(tmp_path: Path, model: str) -> SharedDevice:
    settings = two_account_settings().replace('backend = "numpy"', model)
    return SharedDevice(load_config(write_config(tmp_path / "config", settings)), "json")


def _exited_with(device: SharedDevice, code: int) -> None:
    """The device's process replaced by one that exits `code` at once (as a crash would)."""
    process = SPAWN.Process(target=_exit, args=(code,))
    process.start()
    process.join(DEADLINE_S)
    device.process = process


def _exit(code: int) -> None:
    raise SystemExit(code)


def test_off_by_default_and_with_numpy(tmp_path: Path) -> None:
    for model in ('backend = "wgpu"', 'backend = "numpy"\nshared_device = true'):
        device = _device(tmp_path / model[:12].replace(" ", ""), model)
        assert device.endpoint is None
        device.start()
        assert device.process is None
        assert device.state() == {"state": "off", "pid": None, "starts": 0}


@pytest.mark.parametrize(("code", "restarted"), [(1, True), (EX_UNAVAILABLE, False)])
def test_a_dead_device_process_is_restarted_unless_it_found_no_gpu(
    tmp_path: Path, code: int, restarted: bool
) -> None:
    device = _device(tmp_path, 'backend = "wgpu"\nshared_device = true')
    endpoint = device.endpoint
    assert endpoint is not None and Path(endpoint[0]).parent.is_dir()
    _exited_with(device, code)
    now = time.monotonic()
    device.poll(now, stopping=False)
    if not restarted:
        assert device.process is None and device.restart_at is None
        assert device.state()["state"] == "unavailable"
        return
    assert device.state() == {"state": "restarting", "pid": None, "starts": 0}
    assert device.restart_at == pytest.approx(now + FIRST_BACKOFF_S)
    device.poll(now + FIRST_BACKOFF_S / 2, stopping=False)
    assert device.starts == 0  # its backoff has not passed
    device.poll(now + FIRST_BACKOFF_S, stopping=False)
    try:
        assert device.starts == 1 and device.process is not None and device.process.is_alive()
        assert device.backoff_s == 2 * FIRST_BACKOFF_S  # the next death waits longer
        assert device.state() == {"state": "running", "pid": device.process.pid, "starts": 1}
    finally:
        device.stop()
    assert device.state()["state"] == "stopped"
    assert not device.process.is_alive() and not Path(endpoint[0]).parent.exists()
