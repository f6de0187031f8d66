"""Experiment (not adopted): each draw's P(turbulent) averaged with its level-shift
neighbours', an exact Rao-Blackwell step, measured on S&P 500 2008-08-01..10-31 against
the committed strong references, at four seeds. docs/benchmarks.md, "Averaging each draw
over the two readings".

For a map u with Jacobian determinant 1 (regime_model.level_shift's up, d its inverse),
    g_u(theta) = (p(theta) f(theta) + p(u theta) f(u theta)) / (p(theta) + p(u theta))
has E_p[(g_u + g_d) / 2] = E_p[f]: substituting phi = u(theta) in g_u's second term gives
the term of g_d that the first one completes (the weights of each pair sum to one). So the
per-draw average keeps the estimate's expectation; the question measured here is whether
it narrows its spread when a few chains each sit in one reading.

    python docs/bench-results/reading_average.py SEED on|off     # one JSON line, ~50 s
    python docs/bench-results/reading_average.py weights 2008-08-12 # per chain, seed 7
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from regime_model import estimate
from regime_model.level_shift import shifted
from regime_model.spec import ModelSpec
from regime_model.types import PredictiveBatch
from service.bench.series_replay import replay
from service.market.csv_prices import read_prices

REFS = "docs/bench-results/regime-change-sp500-{}-refs16x10000-h200-2026-12-02.json"


def neighbours(draws, y, K, priors, backend):  # type: ignore[no-untyped-def]
    """Each draw's up then down neighbour [2M, D], its weight p(u theta) / (p(theta) +
    p(u theta)) [2M] and its predictive."""
    M = len(draws)
    up = np.r_[np.ones(M, bool), np.zeros(M, bool)]
    nb = shifted(np.concatenate([draws, draws]), up, K)
    y2 = np.concatenate([y, y])
    lp, _ = backend.hmm_value_and_grad(np.concatenate([draws, nb]), np.concatenate([y, y2]),
                                       K, priors)
    own, other = np.r_[lp[:M], lp[:M]], lp[M:]
    with np.errstate(invalid="ignore", over="ignore"):
        w = np.exp(-np.logaddexp(0.0, own - other))
    w = np.where(np.isfinite(own) & np.isfinite(other), w, 0.0)
    return nb, w, backend.hmm_predictive(nb, y2, K)


def averaged(draws, y, at, K, priors, backend):  # type: ignore[no-untyped-def]
    """The per-draw predictive averaged over the up pair and the down pair."""
    M = len(draws)
    _, w, pn = neighbours(draws, y, K, priors, backend)

    def mix(a, b):  # type: ignore[no-untyped-def]
        ww = w.reshape((2, M) + (1,) * (a.ndim - 1))
        pair = (1.0 - ww) * a[None] + ww * b.reshape((2, *a.shape))
        return 0.5 * (pair[0] + pair[1])

    mean = mix(at.mean, pn.mean)
    second = mix(at.var + at.mean**2, pn.var + pn.mean**2)
    return PredictiveBatch(mix(at.filtered_last, pn.filtered_last), mean,
                           np.maximum(second - mean**2, 0.0))


def _sp500() -> tuple[list[str], np.ndarray]:
    dates, prices = read_prices(Path("tests/data/sp500.csv"), "Close")
    return dates, np.asarray(prices)


def weights(date: str, seed: int = 7) -> None:
    """At `date`'s warm update (the last block it ran, the daemon's estimator): per chain,
    the plain P(turbulent) and the mean weight of each draw's up and down neighbour."""
    seen = []
    plain = estimate._summarise

    def spy(result, y, scale, spec, backend):  # type: ignore[no-untyped-def]
        seen.append((result, y, spec, backend))
        return plain(result, y, scale, spec, backend)

    estimate._summarise = spy
    dates, closes = _sp500()
    replay(dates, closes, dates.index("2008-07-31"), dates.index(date), ModelSpec(window=256),
           seed)
    result, y, spec, backend = seen[-1]
    L, S, D = result.draws.shape
    flat, yy = result.draws.reshape(L * S, D), np.repeat(y, S, axis=0)
    at = backend.hmm_predictive(flat, yy, spec.n_states)
    _, w, _ = neighbours(flat, yy, spec.n_states, spec.priors, backend)
    for c in range(L):
        lane = slice(c * S, (c + 1) * S)
        p_turbulent = round(float(at.filtered_last[lane, -1].mean()), 3)
        print(json.dumps({"chain": c, "p_turbulent": p_turbulent,
                          "up_weight": round(float(w[: L * S][lane].mean()), 3),
                          "down_weight": round(float(w[L * S :][lane].mean()), 3)}))


def main(seed: int, on: bool) -> None:
    if on:
        plain = estimate._summarise

        def summarise(result, y, scale, spec, backend):  # type: ignore[no-untyped-def]
            L, S, D = result.draws.shape
            flat, yy = result.draws.reshape(L * S, D), np.repeat(y, S, axis=0)
            at = backend.hmm_predictive(flat, yy, spec.n_states)
            mixed = averaged(flat, yy, at, spec.n_states, spec.priors, backend)
            return plain(result._replace(predictive=mixed), y, scale, spec, backend)

        estimate._summarise = summarise
    ref = {b["time"]: b["reference"] for m in ("aug", "sep", "oct")
           for b in json.loads(Path(REFS.format(m)).read_text())["bars"]}
    dates, closes = _sp500()
    first, last = dates.index("2008-08-01"), dates.index("2008-10-31")
    steps = replay(dates, closes, first - 1, last, ModelSpec(window=256), seed)
    err = np.abs([s.p_turbulent - ref[s.time] for s in steps])
    print(json.dumps({
        "seed": seed, "averaged": on, "median": round(float(np.median(err)), 4),
        "p90": round(float(np.percentile(err, 90)), 4), "max": round(float(err.max()), 4),
        "unconverged": round(float(np.mean([not s.converged for s in steps])), 3)}))


if __name__ == "__main__":
    if sys.argv[1] == "weights":
        weights(sys.argv[2])
    else:
        main(int(sys.argv[1]), sys.argv[2] == "on")
