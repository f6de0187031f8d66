"""`regime-trader fit --html PATH`: one self-contained page of a fit.

The page shows the price series with the smoothed probability of each regime under it
(P(regime at t | the whole series), averaged over thinned draws: regime_model.fit), a
histogram of every kept draw of every parameter (its posterior), the parameter table
(mean, sd, 5/50/95 %, R-hat, bulk and tail ESS) and the sampler's diagnostics. Drawn by
RegimeCharts.renderFit (service/web/charts.js) from the data object built here.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from regime_model.fit import FitResult, chain_ebfmi
from service.reports.page import PageAssets, render_page, thin

BINS = 40


def _unix(label: str) -> int | None:
    try:
        when = datetime.fromisoformat(label)
    except ValueError:
        return None
    # A CSV's dates carry no zone: read them as UTC, the zone of every time we show.
    return int((when if when.tzinfo else when.replace(tzinfo=UTC)).timestamp())


def series_block(times: Sequence[str], prices: Sequence[float], smoothed: Any) -> dict[str, Any]:
    """Price and smoothed probabilities per return's bar (times[1:], prices[1:]); the x
    axis is time when every label is a date, else the bar's index."""
    stamps = [_unix(t) for t in times[1:]]
    dated = all(s is not None for s in stamps)
    x = stamps if dated else list(range(1, len(times)))
    probs = np.asarray(smoothed, dtype=np.float64)
    columns = [np.round(probs[:, k], 4).tolist() for k in range(probs.shape[1])]
    return {
        "time_axis": "time" if dated else "index",
        "x": thin(x),
        "price": thin([round(float(p), 6) for p in prices[1:]]),
        "price_label": "price",
        "smoothed": [thin(c) for c in columns],
    }


def posterior_blocks(fit: FitResult) -> list[dict[str, Any]]:
    flat = fit.draws.reshape(-1, fit.draws.shape[-1])
    blocks = []
    for i, name in enumerate(fit.names):
        counts, edges = np.histogram(flat[:, i], bins=BINS)
        q5, q95 = np.quantile(flat[:, i], [0.05, 0.95])
        blocks.append({
            "name": name, "centres": ((edges[:-1] + edges[1:]) / 2).tolist(),
            "counts": counts.tolist(), "mean": float(flat[:, i].mean()),
            "q5": float(q5), "q95": float(q95),
        })  # fmt: skip
    return blocks


PARAMETER_COLUMNS = ("parameter", "mean", "sd", "5%", "50%", "95%", "R-hat", "bulk ESS",
                     "tail ESS")  # fmt: skip


def parameter_table(fit: FitResult) -> dict[str, Any]:
    flat = fit.draws.reshape(-1, fit.draws.shape[-1])
    q = np.quantile(flat, [0.05, 0.5, 0.95], axis=0)
    rows = [
        [name, f"{flat[:, i].mean():.6g}", f"{flat[:, i].std(ddof=1):.4g}", f"{q[0, i]:.6g}",
         f"{q[1, i]:.6g}", f"{q[2, i]:.6g}", f"{fit.rhat[i]:.4f}", f"{fit.ess_bulk[i]:.0f}",
         f"{fit.ess_tail[i]:.0f}"]
        for i, name in enumerate(fit.names)
    ]  # fmt: skip
    return {"columns": list(PARAMETER_COLUMNS), "rows": rows}


def _per_chain(values: Any, fmt: str) -> str:
    return ", ".join(format(float(v), fmt) for v in values)


def diagnostics_table(fit: FitResult) -> dict[str, Any]:
    r = fit.sampler
    chains, draws = fit.draws.shape[:2]
    rows = [
        ["sampler (samplers tried)", f"{fit.tried[-1]} ({', '.join(fit.tried)})"],
        ["Laplace importance ESS", f"{fit.laplace_ess:.3f}"],
        ["chains x kept draws", f"{chains} x {draws}"],
        ["divergences", str(int(r.divergences.sum()))],
        ["worst R-hat", f"{float(np.max(fit.rhat)):.4f}"],
        ["lowest bulk ESS", f"{float(np.min(fit.ess_bulk)):.0f}"],
        ["lowest tail ESS", f"{float(np.min(fit.ess_tail)):.0f}"],
        ["E-BFMI per chain", _per_chain(chain_ebfmi(r), ".3f")],
        ["acceptance per chain", _per_chain(r.acceptance, ".3f")],
        ["step size per chain (whitened units after a split run)", _per_chain(r.step_size, ".4g")],
        ["trajectory length per chain", _per_chain(r.trajectory_length, ".3g")],
        ["gradient evaluations", str(r.gradient_evals)],
    ]
    return {"columns": ["diagnostic", "value"], "rows": rows}


def fit_page_data(
    fit: FitResult, times: Sequence[str], prices: Sequence[float], source: str
) -> dict[str, Any]:
    """The data object of the fit page; `times`, `prices` as read (one more than returns)."""
    K = fit.smoothed.shape[1]
    chains, draws = fit.draws.shape[:2]
    return {
        "version": 1,
        "kind": "fit",
        "note": f"{source}: {len(prices) - 1} returns, {K} regimes, {chains} chains x "
                f"{draws} draws",
        "series": series_block(times, prices, fit.smoothed),
        "parameters": parameter_table(fit),
        "diagnostics": diagnostics_table(fit),
        "posteriors": posterior_blocks(fit),
    }  # fmt: skip


def write_fit_html(
    path: Path, fit: FitResult, times: Sequence[str], prices: Sequence[float], source: str,
    assets: PageAssets,
) -> None:  # fmt: skip
    data = fit_page_data(fit, times, prices, source)
    path.write_text(render_page(f"regime-trader fit: {source}", data, assets, "renderFit"),
                    encoding="utf-8")
