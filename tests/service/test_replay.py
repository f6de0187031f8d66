"""`regime-trader replay`: a committed update recomputed from the checkpoint before it
gives the same decisions, bit for bit on numpy; a tampered record is found out; an
update whose inputs cannot be rebuilt is refused with the reason."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from service.bench.chaos import chaos_settings, run_worker_process
from service.bench.daemon_harness import LIGHT_EFFORT, write_config
from service.cli import main

STOP = 3


@pytest.fixture(scope="module")
def traded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(config, state dir) of alpha after STOP real updates on the embedded market."""
    config = write_config(tmp_path_factory.mktemp("config"), chaos_settings(LIGHT_EFFORT))
    state = tmp_path_factory.mktemp("state")
    assert run_worker_process(config, state, "alpha", STOP, None) == 0
    return config, state


def _replay(
    traded: tuple[Path, Path], seq: int, capsys: pytest.CaptureFixture[str]
) -> tuple[int, str, str]:
    config, state = traded
    code = main(["replay", "--config", str(config), "--state-dir", str(state),
                 "--account", "alpha", "--seq", str(seq), "--json"])  # fmt: skip
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_every_update_replays_bit_for_bit(
    traded: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    for seq in range(2, STOP + 1):
        code, out, _ = _replay(traded, seq, capsys)
        report = json.loads(out)
        assert code == 0, report
        assert report["identical"] and report["bit_exact_required"]
        assert report["max_abs_diff"] == 0.0 and report["instruments"] > 0
        assert report["recorded"]["backend"] == "numpy"


def test_a_tampered_decision_is_found_and_a_missing_checkpoint_refused(
    traded: tuple[Path, Path], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config, state = traded
    copy = tmp_path / "state"
    copy.mkdir()
    for path in state.glob("alpha*.sqlite*"):
        (copy / path.name).write_bytes(path.read_bytes())
    conn = sqlite3.connect(copy / "alpha.sqlite")
    # every decision of update 3 a hair off: its row's packed p_turbulent column, + 1e-12
    (blob,) = conn.execute("SELECT p_turbulent FROM decisions WHERE seq = 3").fetchone()
    tampered = (np.frombuffer(blob, "<f8") + 1e-12).astype("<f8").tobytes()
    assert tampered != blob
    conn.execute("UPDATE decisions SET p_turbulent = ? WHERE seq = 3", (tampered,))
    conn.commit()
    conn.close()
    code, out, _ = _replay((config, copy), 3, capsys)
    assert code == 1 and json.loads(out)["mismatches"]
    code, _, err = _replay((config, copy), STOP + 1, capsys)
    assert code == 65 and f"no checkpoint {STOP + 1}" in err
