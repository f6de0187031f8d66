"""Planted faults for `bench validate --mutants`: each one a bug the validation must catch.

A mutant replaces one function for the length of a `with` block, in the module that
defines it and in every loaded module that imported it by name, so the whole code path
(the sampler, `fit`, SBC, the worker's window) runs with the fault. Each is a real bug
of its kind, written small: the suite passing on one would mean it cannot see that bug.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import replace
from types import ModuleType
from typing import Any, NamedTuple

import numpy as np

# Loaded here so that every module holding a replaced name is loaded before a patch.
import gpu_backend.numpy_backend  # noqa: F401
import regime_model.fit
import regime_model.sampler
import regime_model.update
import regime_model.validation.sbc  # noqa: F401
from regime_model import params, posterior, rng, step_size
from regime_model.types import FloatArray, Priors
from service import model_state

TEMPER, GRADIENT_SCALE, WRONG_TARGET = 0.7, 1.05, 0.6


class Mutant(NamedTuple):
    name: str
    description: str
    plant: Callable[[], Any]  # -> a context manager


@contextmanager
def replaced(module: ModuleType | type, name: str, new: object) -> Iterator[None]:
    """`module.name` is `new` in every loaded module that holds the original."""
    old = getattr(module, name)
    loaded = [m for m in list(sys.modules.values()) if m is not module]
    holders = [module, *(m for m in loaded if getattr(m, name, None) is old)]
    for holder in holders:
        setattr(holder, name, new)
    try:
        yield
    finally:
        for holder in holders:
            setattr(holder, name, old)


def _tempered() -> Any:
    original = posterior.log_density_and_grad

    def fn(theta: FloatArray, y: FloatArray, K: int, priors: Priors) -> tuple[Any, Any]:
        value, grad = original(theta, y, K, priors)
        prior, g_prior = params.log_prior(theta, K, priors)
        return TEMPER * (value - prior) + prior, TEMPER * (grad - g_prior) + g_prior

    return replaced(posterior, "log_density_and_grad", fn)


def _no_metropolis() -> Any:
    # Every accept uniform comes from rng.uniforms (rng.uniform draws one iteration of it,
    # the sampler's transition_keys a block): zero them all and every test passes.
    original = rng.uniforms

    def uniforms(stream: rng.Stream, iterations: Any, purpose: rng.Purpose, n: int) -> FloatArray:
        out = original(stream, iterations, purpose, n)
        return np.zeros_like(out) if purpose == rng.Purpose.ACCEPT else out

    return replaced(rng, "uniforms", uniforms)


def _unnormalised_row() -> Any:
    original = params.constrain

    def constrain(theta: FloatArray, K: int) -> params.Constrained:
        c = original(theta, K)
        log_trans = c.log_trans.copy()
        log_trans[:, 0] = params._logits(theta, K)[:, 0]  # row 0's normaliser left out
        return c._replace(log_trans=log_trans)

    return replaced(params, "constrain", constrain)


def _scaled_gradient() -> Any:
    original = posterior.log_density_and_grad

    def fn(theta: FloatArray, y: FloatArray, K: int, priors: Priors) -> tuple[Any, Any]:
        value, grad = original(theta, y, K, priors)
        grad = grad.copy()
        grad[:, 0] *= GRADIENT_SCALE
        return value, grad

    return replaced(posterior, "log_density_and_grad", fn)


def _wrong_prior() -> Any:
    original = params.log_prior

    def log_prior(theta: FloatArray, K: int, priors: Priors) -> tuple[Any, Any]:
        # The Dirichlet's stay weight doubled: the density's prior is not the one the
        # model states (and SBC draws from).
        return original(theta, K, replace(priors, alpha_stay=2.0 * priors.alpha_stay))

    return replaced(params, "log_prior", log_prior)


def _wrong_target() -> Any:
    stack = ExitStack()
    for name in ("search_update", "dual_averaging_update"):
        original = getattr(step_size, name)

        def aim(state: Any, rate: Any, target: float, mask: Any, _f: Any = original) -> Any:
            return _f(state, rate, WRONG_TARGET, mask)

        stack.enter_context(replaced(step_size, name, aim))
    return stack


def _shared_streams() -> Any:
    original = rng.make_stream

    def make_stream(seed: int, instruments: Any, chains: Any, seq: int) -> rng.Stream:
        return original(seed, instruments, np.zeros_like(chains), seq)

    return replaced(rng, "make_stream", make_stream)


def _shifted_window() -> Any:
    original = model_state.InstrumentState.append

    def append(self: model_state.InstrumentState, bars: list[Any], window: int) -> int:
        fresh = original(self, bars, window + 1)
        if self.returns.size > window:  # the newest return held back: the window ends a bar early
            self.returns = self.returns[:-1]
        return fresh

    return replaced(model_state.InstrumentState, "append", append)


MUTANTS: tuple[Mutant, ...] = (
    Mutant("tempered_likelihood", f"the likelihood raised to the power {TEMPER}", _tempered),
    Mutant("no_metropolis", "every finite proposal accepted (no Metropolis correction)",
           _no_metropolis),
    Mutant("unnormalised_row", "transition row 1 not normalised (its softmax's denominator "
           "left out)", _unnormalised_row),
    Mutant("scaled_gradient", f"the gradient's first component (mu[1]) scaled by "
           f"{GRADIENT_SCALE}", _scaled_gradient),
    Mutant("wrong_prior", "the Dirichlet prior's stay weight doubled in the density",
           _wrong_prior),
    Mutant("wrong_adaptation_target", f"step-size adaptation aiming at acceptance "
           f"{WRONG_TARGET} instead of the configured 0.8", _wrong_target),
    Mutant("shared_streams", "every chain of an instrument on the same random stream",
           _shared_streams),
    Mutant("shifted_window", "the worker's window ends one bar early (the newest return "
           "held back)", _shifted_window),
)  # fmt: skip

BY_NAME = {m.name: m for m in MUTANTS}
