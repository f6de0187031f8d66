"""`regime-trader verify-gpu`: the identity gate of the wgpu backend on this machine's adapter.

Log density and gradient against numpy float64 at random and edge parameter points for
K = 2..4 and T up to 4,000; then full sampler runs on both backends compared within
Monte Carlo error. Prints the adapter, driver and figures (`--json`: one JSON document;
`--out PATH`: the same in a file); exit 0 only if all pass.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from service.commands.output import add_output_flags, emit, logs_to_stderr
from service.exit_codes import EX_UNAVAILABLE

EX_FAILED = 1  # a check failed: the adapter's results are not identical to the reference

WINDOWS = (100, 1000, 4000)
QUICK_WINDOWS = (100, 1000)


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "verify-gpu", help="check the wgpu backend against numpy float64; exit 0 if identical"
    )
    add_output_flags(parser, "the figures")
    parser.add_argument(
        "--quick", action="store_true", help="shorter windows and sampler runs (a smoke test)"
    )
    parser.set_defaults(handler=handler)


def _run(quick: bool) -> dict[str, Any]:
    # Imported here: numpy, wgpu and the model are needed by this command alone.
    import numpy as np  # noqa: PLC0415

    from gpu_backend.identity import compare_point_set  # noqa: PLC0415
    from gpu_backend.numpy_backend import NumpyBackend  # noqa: PLC0415
    from gpu_backend.sampler_agreement import (  # noqa: PLC0415
        compare_draw_phase,
        compare_joint_submission,
        compare_run_summary,
        compare_samplers,
        compare_warm_samplers,
    )
    from gpu_backend.wgpu_backend import WgpuBackend  # noqa: PLC0415
    from regime_model.update import ModelSpec  # noqa: PLC0415

    gpu, cpu = WgpuBackend(), NumpyBackend()
    info = gpu.device.info
    points = [
        compare_point_set(gpu, cpu, K, T, lanes=32)._asdict()
        for K in (2, 3, 4)
        for T in (QUICK_WINDOWS if quick else WINDOWS)
    ]
    spec = ModelSpec(window=128 if quick else 256, warmup_cold=100 if quick else 300)
    agreement = compare_samplers(gpu, cpu, spec, replicates=4 if quick else 6)._asdict()
    # The one-submission warm update: chain by chain, then within Monte Carlo error.
    draws = compare_draw_phase(gpu, cpu, spec)._asdict()
    # The level-shift move (shaders/jump.py) on returns with no regimes, where the levels are
    # unidentified and its proposals are often accepted: the same moves on both backends.
    noise = 0.01 * np.random.default_rng(7).standard_normal((3, spec.window + 1))
    shifted = compare_draw_phase(gpu, cpu, spec, series=noise)._asdict()
    shifted["passed"] = bool(shifted["passed"]) and shifted["shifted_lanes"] > 0
    warm = compare_warm_samplers(gpu, cpu, spec, replicates=4 if quick else 6)._asdict()
    # Two accounts' warm runs in one submission, each the bits of its run alone.
    joint = compare_joint_submission(gpu, cpu, spec)._asdict()
    # The warm run's summary made on the device, against the host's from the same draws.
    summary = compare_run_summary(gpu, cpu, spec)._asdict()
    checks = (agreement, draws, shifted, warm, joint, summary)
    passed = all(p["passed"] for p in points) and all(bool(c["passed"]) for c in checks)
    return {
        "adapter": info.adapter,
        "driver": info.driver,
        "backend": info.backend,
        "adapter_type": info.adapter_type,
        "numerics": gpu.numerics,
        "points": points,
        "sampler": agreement,
        "warm_draws": draws,
        "shift_draws": shifted,
        "warm_sampler": warm,
        "joint_submission": joint,
        "run_summary": summary,
        "passed": passed,
    }


def _lines(report: Any) -> list[str]:
    lines = [
        f"adapter  {report['adapter']} ({report['adapter_type']}, {report['backend']})",
        f"driver   {report['driver']}",
        f"numerics {report['numerics']}",
        " K      T lanes   logp rel err   grad rel err   pred err",
    ]
    lines += [
        f"{p['states']:2d} {p['window']:6d} {p['lanes']:5d} {p['logp_err']:14.2e} "
        f"{p['grad_err']:14.2e} {p['pred_err']:10.2e}  {'ok' if p['passed'] else 'FAIL'}"
        for p in report["points"]
    ]
    s, d, w = report["sampler"], report["warm_draws"], report["warm_sampler"]
    x, j, r = report["shift_draws"], report["joint_submission"], report["run_summary"]
    return [*lines,
        f"sampler  {s['replicates']} replicates x {s['instruments']} instruments: max |z| "
        f"{s['max_abs_z']:.2f} of {s['z_bound']:.2f} (numpy {s['cpu_seconds']:.1f} s, "
        f"wgpu {s['gpu_seconds']:.1f} s)"
        f"  {'ok' if s['passed'] else 'FAIL'}",
        f"warm     one submission, {d['lanes']} chains x {d['draws']} draws: "
        f"{d['decision_mismatches']} accept decisions differ, max draw err "
        f"{d['max_draw_err']:.1e}; re-adapted: max |z| {w['max_abs_z']:.2f} of "
        f"{w['z_bound']:.2f}"
        f"  {'ok' if d['passed'] and w['passed'] else 'FAIL'}",
        f"shifts   level-shift moves on {x['shifted_lanes']} of {x['lanes']} chains: "
        f"{x['decision_mismatches']} accept decisions differ, max draw err "
        f"{x['max_draw_err']:.1e}, move's acceptance err {x['max_shift_rate_err']:.1e}"
        f"  {'ok' if x['passed'] else 'FAIL'}",
        f"joint    {j['accounts']} accounts ({j['lanes']} chains) in one submission: "
        f"{j['runs_differing']} runs differ from the same run alone, "
        f"{j['joined_differing']} joined into one run"
        f"  {'ok' if j['passed'] else 'FAIL'}",
        f"summary  {r['instruments']} instruments ({r['wide_instruments']} of a wide run) "
        f"summarised on the device: max err "
        f"{r['max_err']:.1e}, {r['gate_mismatches']} gate decisions differ from the host's"
        f"  {'ok' if r['passed'] else 'FAIL'}",
        "PASS" if report["passed"] else "FAIL",
    ]  # fmt: skip


def handler(args: argparse.Namespace) -> int:
    from gpu_backend.wgpu_device import GpuUnavailableError  # noqa: PLC0415

    logs_to_stderr()  # gpu.device, backend.fallback: stdout is the report's
    try:
        report = _run(bool(args.quick))
    except GpuUnavailableError as error:
        print(f"verify-gpu: {error}", file=sys.stderr)
        return EX_UNAVAILABLE
    emit(report, args, _lines)
    return 0 if report["passed"] else EX_FAILED
