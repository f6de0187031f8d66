# ruff: noqa: I001 - regime_model before numpy: the daemon's numpy dispatch
"""The eighteenth, nineteenth and twenty-third sessions' timeit figures
(docs/benchmarks.md), best of 5 repeats, in ms: `python docs/bench-results/host_micro.py`.

- 268 DecisionRow from columns, as the strategy stage makes them, against a frozen
  dataclass of the same fields (DecisionRow's form before it became a NamedTuple);
- regime_model's robust_scale over 268 and 54 windows of 256 returns (an update used to
  compute it once per batch, five times at 268), and at 268 as it was before 665a59f,
  its medians from np.median's partition rather than a sort;
- the input check of a batch of 268 usable carries (batches._validate), against
  carry_problem run on each carry (how _validate checked them before);
- the gate's diagnostics of 268 instruments' decision draws (4 chains x 40 draws of 2
  quantities, a fifth repeated as HMC's rejections repeat them): the bulk ESS alone
  (diagnostics.bulk_ess, what the gate reads), against what the gate ran before
  (convergence(..., tail=False) then), which adds both R-hat;
- (twenty-fourth session) a warm batch's lane starts from 268 carries (batches._lane_start),
  against the per-instrument copies and the unused cold jitter it made before; and the
  carries of a run of 268 x 4 chains (estimate.carries_of), against two copies per carry."""

import timeit
from dataclasses import field, make_dataclass
from types import SimpleNamespace

import regime_model  # noqa: F401 - numpy's dispatch as the daemon's, before numpy loads
import numpy as np

from regime_model import rng
from regime_model.batches import COLD_STEP_SIZE, INIT_JITTER, _lane_start, _validate, prior_centre
from regime_model.adaptation import regularised_variance
from regime_model.carry import InstrumentCarry, carry_problem
from regime_model.diagnostics import _ess, _ranked, _worst_rhat, bulk_ess
from regime_model.estimate import carries_of
from regime_model.params import n_params
from regime_model.scaling import MAD_TO_SD, robust_scale
from regime_model.spec import ModelSpec
from service.state.records import DecisionRow

N = 268


# DecisionRow's fields and defaults as a frozen dataclass (its form before the NamedTuple)
FrozenRow = make_dataclass(
    "FrozenRow",
    [(name, DecisionRow.__annotations__[name],
      field(default=DecisionRow._field_defaults[name]) if name in DecisionRow._field_defaults
      else field()) for name in DecisionRow._fields],
    frozen=True,
)  # fmt: skip


def gate_before(decision: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """What the gate computed before the nineteenth session: both R-hat and the bulk ESS
    (convergence(..., tail=False) then, from the same pieces)."""
    chains, v, z = _ranked(decision)
    return _worst_rhat(chains, v, z), _ess(z)


def scale_before(returns: np.ndarray) -> np.ndarray:
    """robust_scale before 665a59f: np.median (a partition) for both medians."""
    med = np.median(returns, axis=1, keepdims=True)
    mad = MAD_TO_SD * np.median(np.abs(returns - med), axis=1)
    sd = returns.std(axis=1)
    return np.where(mad > 0, mad, np.where(sd > 0, sd, 1.0))


def lane_start_before(carries: list, stream: rng.Stream, spec: ModelSpec) -> tuple:
    """batches._lane_start's copies before the twenty-fourth session: the cold lanes' jitter
    drawn for every lane, then each carry's rows copied one instrument at a time."""
    C, D = spec.chains, n_params(spec.n_states)
    cold = np.repeat([c is None for c in carries], C)
    jitter = INIT_JITTER * (2.0 * rng.uniform(stream, 0, rng.Purpose.INIT, D) - 1.0)
    position = prior_centre(spec.n_states, spec.priors) + jitter
    step, inv_mass = np.full(len(cold), COLD_STEP_SIZE), np.ones((len(cold), D))
    for i, carry in enumerate(carries):
        if carry is not None:
            position[i * C : (i + 1) * C] = carry.position
            step[i * C : (i + 1) * C] = carry.step_size
            inv_mass[i * C : (i + 1) * C] = carry.inv_mass
    return position, step, inv_mass


def carries_before(draws: np.ndarray, step_size: np.ndarray, draw_var: np.ndarray) -> list:
    """estimate.carries_of's carries before the twenty-fourth session: each copied alone."""
    C, last = 4, draws[:, -1]
    inv_mass = regularised_variance(draw_var, float(C * draws.shape[1]))
    return [InstrumentCarry(last[i * C : (i + 1) * C].copy(),
                            step_size[i * C : (i + 1) * C].copy(), inv_mass[i])
            for i in range(len(draws) // C)]  # fmt: skip


def best_ms(run: object, number: int = 100) -> float:
    return round(1e3 * min(timeit.repeat(run, number=number, repeat=5)) / number, 3)  # type: ignore[arg-type]


def main() -> None:
    rows = [(f"S{i:04d}", i % 2, 0.1, 0.2, 0.3, True, 0.4, 5.0, 0.01, 100.0, 3.0)
            for i in range(N)]
    columns = list(zip(*rows, strict=True))
    print("268 DecisionRow (NamedTuple)      ", best_ms(lambda: list(map(DecisionRow, *columns))))
    print("268 rows as a frozen dataclass    ", best_ms(lambda: list(map(FrozenRow, *columns))))
    gen = np.random.default_rng(0)
    returns = gen.normal(0.0, 0.01, (N, 256))
    for n in (N, 54):
        window = returns[:n]
        print(f"robust_scale, {n} windows         ", best_ms(lambda w=window: robust_scale(w)))
    print("robust_scale before, 268 windows  ", best_ms(lambda: scale_before(returns)))
    spec = ModelSpec()
    dim = n_params(spec.n_states)
    carries = [InstrumentCarry(gen.normal(size=(spec.chains, dim)),
                               gen.uniform(0.1, 1.0, spec.chains), gen.uniform(0.5, 2.0, dim))
               for _ in range(N)]  # fmt: skip
    keys = np.arange(N, dtype=np.uint32)
    print("_validate, 268 usable carries     ",
          best_ms(lambda: _validate(returns, carries, keys, spec), 20))
    print("carry_problem on each of 268      ",
          best_ms(lambda: [carry_problem(c, spec.chains, dim) for c in carries], 20))
    lanes = np.repeat(keys, spec.chains)
    stream = rng.make_stream(7, lanes, np.tile(keys[: spec.chains], N), 3)
    print("_lane_start, 268 warm carries     ",
          best_ms(lambda: _lane_start(carries, stream, spec), 50))
    print("_lane_start before, 268           ",
          best_ms(lambda: lane_start_before(carries, stream, spec), 50))
    run = SimpleNamespace(draws=gen.normal(size=(N * spec.chains, spec.draws, dim)),
                          step_size=gen.uniform(size=N * spec.chains))  # fmt: skip
    draw_var = gen.uniform(size=(N, dim))
    print("carries_of, 268 x 4 chains        ",
          best_ms(lambda: carries_of(run, spec, draw_var), 50))  # type: ignore[arg-type]
    print("carries_of before, 268            ",
          best_ms(lambda: carries_before(run.draws, run.step_size, draw_var), 50))
    decision = gen.uniform(size=(N, spec.chains, spec.draws, 2))
    decision[:, :, 1::5] = decision[:, :, 0::5]
    print("the gate's bulk ESS, 268           ", best_ms(lambda: bulk_ess(decision), 20))
    print("both R-hat and the bulk ESS, 268   ", best_ms(lambda: gate_before(decision), 20))


if __name__ == "__main__":
    main()
