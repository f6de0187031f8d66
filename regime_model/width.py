"""An instrument's width: how many chains its update starts with.

Most instruments start an update with `spec.chains` chains. One that ran on in its last
update (an extension block: a window hard to know, as the synthetic market's diffuse
ones are at every bar) carries that block's `extension_chains` chains instead and starts
wide, in a second batch beside the first that a device runs in the same submission
(batch_join): the block it would need again costs no second device round. It narrows
back once its estimate shows a narrow update would have passed: both Monte Carlo errors
scaled by sqrt(wide / narrow chains) within the gate, and one reading.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from regime_model.carry import InstrumentCarry
from regime_model.estimate import RegimeEstimate
from regime_model.spec import ModelSpec
from regime_model.types import BoolArray


def is_wide(carry: InstrumentCarry | None, spec: ModelSpec) -> bool:
    """Whether this carry starts its instrument wide: the chains of an extension block."""
    E = spec.extension_chains
    return carry is not None and spec.chains != E and len(carry.position) == E


def wide_spec(spec: ModelSpec) -> ModelSpec:
    """The update of wide instruments: an extension block's chains and re-adaptation."""
    return replace(spec, chains=spec.extension_chains, warmup_warm=spec.extension_warmup)


def stays_wide(estimate: RegimeEstimate, spec: ModelSpec) -> BoolArray:
    """[N] whether a wide estimate's instrument still needs the width next time."""
    f = math.sqrt(spec.extension_chains / spec.chains)
    out: BoolArray = (
        (estimate.p_turbulent_mcse * f > spec.mcse_max)
        | (estimate.vol_mcse * f > spec.vol_mcse_max)
        | (estimate.shift_acceptance > spec.two_readings)
    )
    return np.asarray(out, dtype=bool)
