"""The validation suite has power: planted faults fail it (the fast subset; the whole
kill table is `regime-trader bench validate --mutants`, in docs/validation.md)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from regime_model import fit, posterior, rng
from regime_model.sampler import SamplerConfig
from regime_model.transition_keys import TransitionKeys
from regime_model.types import Priors
from service.bench import validate_checks as checks
from service.bench import validate_names
from service.bench.mutants import BY_NAME, MUTANTS

DOC_JSON = Path(__file__).resolve().parents[2] / "docs" / "validation.json"


def test_the_command_line_names_every_planted_fault() -> None:
    assert tuple(m.name for m in MUTANTS) == validate_names.MUTANTS
    assert len(MUTANTS) >= 8


def test_a_planted_fault_is_undone_when_its_block_ends() -> None:
    original = posterior.log_density_and_grad
    with BY_NAME["scaled_gradient"].plant():
        assert fit.log_density_and_grad is not original  # the name fit imported, too
    assert posterior.log_density_and_grad is original and fit.log_density_and_grad is original


def test_the_no_metropolis_fault_reaches_the_numbers_every_transition_uses() -> None:
    """The sampler draws its accept uniforms a block of iterations at a time
    (transition_keys): the planted fault must reach those too. It once patched only the
    one-iteration draw, and survived the whole suite."""
    lanes = rng.make_stream(1, np.zeros(4, np.uint32), np.arange(4, dtype=np.uint32), 0)
    assert (TransitionKeys(lanes, 3).key(-7).accept > 0).all()
    with BY_NAME["no_metropolis"].plant():
        for iteration in (-7, 0, 40):
            assert (TransitionKeys(lanes, 3).key(iteration).accept == 0).all()
            assert (rng.uniform(lanes, iteration, rng.Purpose.ACCEPT, 1) == 0).all()


def test_shared_streams_make_the_chains_copies_which_the_correlation_sees() -> None:
    window = checks.sp500_window()[-128:]
    config = SamplerConfig(draws=60, chains=4)
    healthy = fit.fit_series(window, 2, 7, Priors(), config, 60).draws
    with BY_NAME["shared_streams"].plant():
        copies = fit.fit_series(window, 2, 7, Priors(), config, 60).draws
    assert np.array_equal(copies[0], copies[1])
    assert checks.chain_correlation(copies) > 1.0 - 1e-12
    assert checks.chain_correlation(healthy) < checks.MAX_CHAIN_CORRELATION


def test_the_fast_checks_pass_unmutated_and_kill_three_faults_through_the_command() -> None:
    """The real command: the control run passes with the figures docs/validation.json holds
    (a re-run with the same seed gives the same figures); a scaled gradient, a window
    shifted by one bar and adaptation aimed at the wrong rate each fail a check (in their
    own processes)."""
    faults = ("scaled_gradient", "shifted_window", "wrong_adaptation_target")
    command = [sys.executable, "-m", "service.cli", "bench", "validate", "--quick", "--json",
               "--check", "gradient", "--check", "worker_path", "--mutants",
               *(arg for name in faults for arg in ("--mutant", name))]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["passed"] and [c["name"] for c in report["checks"]] == ["gradient", "worker_path"]
    recorded = {c["name"]: c["figures"] for c in json.loads(DOC_JSON.read_text())["checks"]}
    assert report["numpy"] == np.__version__ and report["seed"] == 7
    for check in report["checks"]:
        assert check["figures"] == recorded[check["name"]], check["name"]
    failed = {row["name"]: row["failed"] for row in report["mutants"]}
    assert failed == {
        "scaled_gradient": ["gradient"],
        "shifted_window": ["worker_path"],
        "wrong_adaptation_target": ["worker_path"],
    }
