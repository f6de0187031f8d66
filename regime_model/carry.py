"""What the checkpoint keeps per instrument between updates, and its plain-array form."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from regime_model.types import FloatArray

CARRY_FIELDS = ("position", "step_size", "inv_mass")


class InstrumentCarry(NamedTuple):
    """All float64: enough to warm-start an instrument's chains on any host."""

    position: FloatArray  # [C, D] last unconstrained draw of each chain
    step_size: FloatArray  # [C]
    inv_mass: FloatArray  # [D]


def carry_to_arrays(carry: InstrumentCarry) -> dict[str, FloatArray]:
    """Arrays by name, for a store that keeps arrays (copies, so the carry stays immutable)."""
    return {name: np.array(getattr(carry, name), dtype=np.float64) for name in CARRY_FIELDS}


def carry_from_arrays(arrays: dict[str, FloatArray]) -> InstrumentCarry:
    missing = [name for name in CARRY_FIELDS if name not in arrays]
    if missing:
        raise ValueError(f"carry arrays lack {missing}; expected keys {list(CARRY_FIELDS)}")
    return InstrumentCarry(*(np.array(arrays[name], dtype=np.float64) for name in CARRY_FIELDS))


def carry_problem(carry: InstrumentCarry, chains: int, dim: int) -> str | None:
    """Why this carry cannot warm-start a model of `chains` x `dim`, or None if it can."""
    shapes = {"position": (chains, dim), "step_size": (chains,), "inv_mass": (dim,)}
    for name, shape in shapes.items():
        value = np.asarray(getattr(carry, name))
        if value.shape != shape:
            return f"{name} has shape {value.shape}, expected {shape}"
        if not np.isfinite(value).all():
            return f"{name} is not finite"
    if (carry.step_size <= 0).any() or (carry.inv_mass <= 0).any():
        return "step_size and inv_mass must be positive"
    return None
