# ruff: noqa: I001 - regime_model before numpy: the daemon's numpy dispatch
"""Could a bar's update be its previous update's draws, reweighted? (issue 14, thirtieth
session: an experiment, not in the daemon.) `python docs/bench-results/speculative_weights.py
N UPDATES [synthetic|sp500]`.

If the MCMC for window n ran after bar n's commit, between bars, the update at bar n+1
would only reweight its draws (importance sampling) to window n+1: the new bar in, the
oldest out, the robust scale moved. Each draw's weight is the log posterior density at
window n+1 (the draw moved to n+1's scaled units: mu and log sigma_0 shift with the scale,
a constant Jacobian) less its density at window n; the estimate the weighted mean of each
draw's filtered P(turbulent) at n+1. Where the weights degenerate (their Kish ESS a small
share of the draws) the instrument would run its MCMC on the bar's critical path, as now.

N instruments of the daemon's synthetic market (as `bench round` trades them; T 256, K 2,
the daemon's ModelSpec, numpy) updated UPDATES + 1 times from a cold start, a bar on each
time; or, with `sp500`, N = 1 instrument, the S&P 500's closes (tests/data/sp500.csv),
its first window ending on 2008-08-01, UPDATES bars on (64: to 2008-10-31, the crash).
After each warm update one JSON line: per instrument the weights' ESS share and
the reweighted P(turbulent) less the update's own, and that update's Monte Carlo error;
`_step` the same for the window grown by the new bar alone (one_step); `p_update` the
update's own P(turbulent), `time` (sp500) the date its window ends on.
"""

import json
import sys
import time
from pathlib import Path

import regime_model  # noqa: F401 - numpy's dispatch as the daemon's, before numpy loads
import numpy as np

from gpu_backend.numpy_backend import NumpyBackend
from regime_model import update
from regime_model.params import constrain
from regime_model.posterior import log_density_and_grad, predictive
from regime_model.scaling import robust_scale
from regime_model.update import ModelSpec, refresh
from wide_reasons import T, returns_of  # beside this script

_final: dict[int, np.ndarray] = {}  # instrument -> its update's last draws [M, D]
_now: dict[str, np.ndarray] = {}  # "window": the update's returns [N, T]
_estimate_of = update.estimate_of


def _keeping_draws(result, y, scale, spec, backend, diagnose=True):
    """estimate_of, keeping each instrument's draws of the update's last run of it."""
    C = len(y) // len(scale)
    window = _now["window"]
    scaled = window / robust_scale(window)[:, None]
    for j, row in enumerate(y[::C]):
        i = int(np.flatnonzero(np.all(scaled == row[None], axis=1))[0])
        _final[i] = result.draws[j * C : (j + 1) * C].reshape(-1, result.draws.shape[-1])
    return _estimate_of(result, y, scale, spec, backend, diagnose)


def _moved(theta: np.ndarray, ratio: float, K: int) -> np.ndarray:
    """theta in units scaled by s_old, moved to units scaled by s_new (ratio s_old/s_new)."""
    out = theta.copy()
    out[:, :K] *= ratio
    out[:, K] += np.log(ratio)
    return out


def reweighted(draws, old, new, spec):
    """(ESS share, reweighted P(turbulent)) of one instrument's draws, window old -> new."""
    K = spec.n_states
    s_old, s_new = robust_scale(old[None])[0], robust_scale(new[None])[0]
    y_old = np.broadcast_to(old / s_old, (len(draws), len(old)))
    y_new = np.broadcast_to(new / s_new, (len(draws), len(new)))
    moved = _moved(draws, s_old / s_new, K)
    lw = (log_density_and_grad(moved, y_new, K, spec.priors)[0]
          - log_density_and_grad(draws, y_old, K, spec.priors)[0])  # fmt: skip
    w = np.exp(lw - lw.max())
    w /= w.sum()
    p = predictive(moved, y_new, K).filtered_last[:, -1]
    return float(1.0 / (len(w) * (w * w).sum())), float((w * p).sum())


def one_step(draws, old, new, spec):
    """reweighted's pair for the window grown by the new bar alone (T + 1 bars, the old
    scale): each draw's weight its one-step predictive density of the new bar, from its
    filtered regime at the old window's last bar (what the device returns for every
    draw), O(K^2) a draw with no pass over the window."""
    K, s = spec.n_states, robust_scale(old[None])[0]
    c = constrain(draws, K)
    alpha = predictive(draws, np.broadcast_to(old / s, (len(draws), len(old))), K).filtered_last
    ahead = np.einsum("lk,lkj->lj", alpha, np.exp(c.log_trans))
    z = (new[-1] / s - c.mu) * np.exp(-c.log_sigma)
    joint = ahead * np.exp(-0.5 * z * z - c.log_sigma)
    w = joint.sum(axis=1)
    w /= w.sum()
    p = joint[:, -1] / joint.sum(axis=1)
    return float(1.0 / (len(w) * (w * w).sum())), float((w * p).sum())


def sp500(updates: int) -> tuple[np.ndarray, list[str]]:
    """[1, T + updates] daily log returns whose first window ends on 2008-08-01, and the
    date each update's window ends on."""
    rows = [line.split(",") for line in Path("../../tests/data/sp500.csv").read_text().split()[1:]]
    end = [r[0] for r in rows].index("2008-08-01")
    closes = np.array([float(r[4]) for r in rows[end - T : end + updates + 1]])
    return np.diff(np.log(closes))[None], [r[0] for r in rows[end : end + updates + 1]]


def main() -> None:
    N, updates = int(sys.argv[1]), int(sys.argv[2])
    market = sys.argv[3] if len(sys.argv) > 3 else "synthetic"
    spec = ModelSpec(window=T)
    series, dates = (sp500(updates) if market == "sp500"
                     else (returns_of(N, T + updates + 1, market), None))  # fmt: skip
    keys = np.arange(N, dtype=np.uint32)
    backend, carries = NumpyBackend(), [None] * N
    update.estimate_of = _keeping_draws
    for u in range(updates + 1):
        previous = {i: d for i, d in _final.items()}
        _now["window"] = window = series[:, u : u + T]
        guesses = {i: reweighted(d, series[i, u - 1 : u - 1 + T], window[i], spec)
                   for i, d in previous.items()} if u else {}  # fmt: skip
        steps = {i: one_step(d, series[i, u - 1 : u - 1 + T], window[i], spec)
                 for i, d in previous.items()} if u else {}  # fmt: skip
        _final.clear()
        t0 = time.perf_counter()
        estimate, carries, info = refresh(window, carries, keys, u + 1, 7, spec, backend,
                                          diagnose="none")  # fmt: skip
        if not u:
            continue
        p = estimate.regime_probs[:, -1]
        print(json.dumps({
            "update": u, "market": market, "s": round(time.perf_counter() - t0, 1),
            "time": dates[u] if dates else None,
            "p_update": [round(float(p[i]), 5) for i in range(N)],
            "ran_on": info.extended,
            "ess_share": [round(guesses[i][0], 4) for i in range(N)],
            "diff": [round(guesses[i][1] - float(p[i]), 5) for i in range(N)],
            "ess_share_step": [round(steps[i][0], 4) for i in range(N)],
            "diff_step": [round(steps[i][1] - float(p[i]), 5) for i in range(N)],
            "mcse": [round(float(m), 5) for m in estimate.p_turbulent_mcse],
            "draws": [len(previous[i]) for i in range(N)],
            "abs_return_z": [round(float(abs(window[i, -1] - np.median(window[i]))
                                         / robust_scale(window[i][None])[0]), 2)
                             for i in range(N)],
        }), flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
