"""`regime-trader bench regime-change`: the daemon's warm estimate at every bar of a range
against a long cold reference on the same window.

The series is replayed bar by bar through the worker's window and update (series_replay.py): a
cold update at the bar before the range, then one warm update per bar (`between_bars`:
the warm path of [model] sample_between_bars, each bar reweighing the sample of the one
before). For each bar the reference is a separate long cold run of the daemon's model on
the same window (>= 8 chains, >= 4,000 draws, reference_run.py), in `jobs` processes.
`warm` and `reference` are P(most volatile regime at that bar). A reference whose R-hat
exceeds 1.01 is reported as such (`reference_rhat`), not hidden, and so is its own Monte
Carlo error (`reference_mcse`).
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import platform
import time
from datetime import date
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from regime_model.spec import ModelSpec
from service.bench.reference_run import reference
from service.bench.series_replay import replay
from service.market.csv_prices import read_prices

# How a reference is made; references of another estimator are never reused as this one's
# (those of 2026-12-02 averaged 40 draws of a `fit` run: reference_run.py says why not).
ESTIMATOR = "cold update with the level-shift move, mean over 8,000 draws"


class Reference(NamedTuple):
    chains: int = 8
    draws: int = 4000
    warmup: int = 1000
    estimator: str = ESTIMATOR


class Series(NamedTuple):
    path: Path
    column: str
    start: date
    end: date
    window: int = 256
    extend_max: int = ModelSpec().extend_max  # the daemon's blocks of run-on per update
    # Other ModelSpec fields of the warm updates, to measure a change to the sampler
    # (chains, draws, steps_max, ...) against the same references; none: the daemon's.
    overrides: tuple[tuple[str, Any], ...] = ()
    between_bars: bool = False  # the warm path of [model] sample_between_bars


def _value_of(text: str, kind: type) -> Any:
    """`--model-set`'s text as the field's type; bool("false") would be True."""
    if kind is bool:
        if text.lower() not in ("true", "false"):
            raise ValueError(text)
        return text.lower() == "true"
    return kind(text)


def warm_spec(series: Series) -> ModelSpec:
    """The warm updates' ModelSpec: the daemon's, with the series' window and overrides."""
    fields = {f.name: f for f in dataclasses.fields(ModelSpec)}
    changes: dict[str, Any] = {"window": series.window, "extend_max": series.extend_max}
    for name, text in series.overrides:
        if name not in fields or name in ("window", "priors"):
            settable = sorted(set(fields) - {"window", "priors"})
            raise ValueError(f"--model-set {name}: not a ModelSpec field; one of {settable}")
        default = getattr(ModelSpec(), name)
        try:
            changes[name] = _value_of(text, type(default))
        except ValueError:
            kind = type(default).__name__
            raise ValueError(f"--model-set {name}={text}: {name} takes {kind} values") from None
    return ModelSpec(**changes)


def _reference_job(job: tuple[np.ndarray, int, Reference]) -> tuple[float, float, float]:
    window, seed, ref = job
    got = reference(window, seed, ref.chains, ref.draws, ref.warmup)
    return got.p_turbulent, got.rhat, got.mcse


def _range(dates: list[str], start: date, end: date) -> tuple[int, int]:
    inside = [i for i, d in enumerate(dates) if start <= date.fromisoformat(d[:10]) <= end]
    if not inside:
        raise ValueError(f"no bar between {start} and {end}")
    return inside[0], inside[-1]


def known_references(
    path: Path, series: Series, seed: int, ref: Reference
) -> dict[str, tuple[float, float, float]]:
    """The references of an earlier run's JSON, by bar time, when that run used the same
    series, window, seed and reference settings (a reference does not depend on the warm
    path, so a change to the warm updates can be measured without recomputing them)."""
    import json  # noqa: PLC0415 - only this option reads JSON

    old = json.loads(path.read_text())
    same = {"column": series.column.lower(), "window": series.window, "seed": seed,
            "reference": ref._asdict(), "csv": Path(series.path).name}
    found = {"column": str(old.get("column", "")).lower(), "window": old.get("window"),
             "seed": old.get("seed"), "reference": old.get("reference"),
             "csv": Path(str(old.get("csv", ""))).name}  # fmt: skip
    differ = [k for k in same if same[k] != found[k]]
    if differ:
        raise ValueError(
            f"{path}: its references were made with other settings ({', '.join(differ)}: "
            f"{[found[k] for k in differ]} here {[same[k] for k in differ]}); "
            "run without --references to compute them"
        )
    return {b["time"]: (b["reference"], b["reference_rhat"], b["reference_mcse"])
            for b in old["bars"]}


def merged_references(
    paths: list[Path], series: Series, seed: int, ref: Reference
) -> dict[str, tuple[float, float, float]]:
    """The references of several earlier runs (each checked as by known_references), by
    bar time: long references made one date range per run, reused over their union."""
    merged: dict[str, tuple[float, float, float]] = {}
    for path in paths:
        merged.update(known_references(path, series, seed, ref))
    return merged


def measure(
    series: Series, seed: int, jobs: int, ref: Reference,
    known: dict[str, tuple[float, float, float]] | None = None,
    warm_seed: int | None = None,
) -> dict[str, Any]:
    t0 = time.perf_counter()
    dates, prices = read_prices(series.path, series.column)
    closes = np.asarray(prices)
    first, last = _range(dates, series.start, series.end)
    spec = warm_spec(series)
    warm_seed = seed if warm_seed is None else warm_seed
    steps = replay(dates, closes, first - 1, last, spec, warm_seed, series.between_bars)
    returns = np.diff(np.log(closes))  # returns[i - 1] ends at bar i
    known = known or {}
    todo = [i for i in range(first, last + 1) if dates[i] not in known]
    work = [(returns[i - series.window : i], seed, ref) for i in todo]
    computed: list[tuple[float, float, float]] = []
    if work:
        with multiprocessing.get_context("spawn").Pool(max(1, jobs)) as pool:
            computed = pool.map(_reference_job, work, chunksize=1)
    fresh = dict(zip((dates[i] for i in todo), computed, strict=True))
    references = [known.get(dates[i]) or fresh[dates[i]] for i in range(first, last + 1)]
    rows: list[dict[str, Any]] = [
        {"time": s.time, "warm": round(s.p_turbulent, 4), "reference": round(r, 4),
         "converged": s.converged, "reference_rhat": round(rhat, 4),
         "reference_mcse": round(mcse, 4), "rhat_decision": round(s.rhat_decision, 4),
         "mcse": round(s.mcse, 4), "vol_mcse": round(s.vol_mcse, 4), "at_bar": s.at_bar}
        for s, (r, rhat, mcse) in zip(steps, references, strict=True)
    ]  # fmt: skip
    errors = np.abs([row["warm"] - row["reference"] for row in rows])
    return {
        "bars": rows,
        "abs_error": {"median": round(float(np.median(errors)), 4),
                      "p90": round(float(np.percentile(errors, 90)), 4),
                      "max": round(float(errors.max()), 4)},
        "unconverged_fraction": round(float(np.mean([not r["converged"] for r in rows])), 4),
        "sampled_at_bar_fraction": round(float(np.mean([r["at_bar"] for r in rows])), 4),
        "references_above_rhat_1_01": sum(r["reference_rhat"] > 1.01 for r in rows),
        "reference_mcse_max": max(r["reference_mcse"] for r in rows),
        "csv": str(series.path), "column": series.column, "from": str(series.start),
        "to": str(series.end), "window": series.window, "seed": seed, "warm_seed": warm_seed,
        "reference": ref._asdict(), "references_reused": len(references) - len(todo),
        "daemon_spec": {"chains": spec.chains,
        "warmup_warm": spec.warmup_warm, "draws": spec.draws, "extend_max": spec.extend_max,
        "overrides": dict(series.overrides), "between_bars": series.between_bars},
        "machine": f"{platform.node()} ({platform.machine()})", "date": time.strftime("%Y-%m-%d"),
        "seconds": round(time.perf_counter() - t0, 1),
    }  # fmt: skip


def synthetic_csv(path: Path, seed: int, bars: int = 700) -> list[str]:
    """A daily series with known switch points (vol 0.8 % <-> 2.5 %, each regime held 60-140
    bars) written as a Yahoo-form CSV; returns the dates at which the regime switches."""
    gen = np.random.default_rng(seed)
    vols, switches, t, calm = np.empty(bars), [], 0, True
    while t < bars:
        run = int(gen.integers(60, 141))
        vols[t : t + run] = 0.008 if calm else 0.025
        t, calm = t + run, not calm
        switches.append(t)
    days = np.datetime64("2010-01-04") + np.arange(bars + 1)
    closes = 100.0 * np.exp(np.concatenate([[0.0], np.cumsum(gen.normal(0.0, vols))]))
    lines = ["Date,Close", *(f"{d},{c:.6f}" for d, c in zip(days, closes, strict=True))]
    path.write_text("\n".join(lines) + "\n")
    return [str(days[s]) for s in switches if s < bars]
