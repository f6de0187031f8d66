"""posteriordb posteriors ported to numpy: batched log densities with exact gradients.

Each module ports one Stan model (github stan-dev/posteriordb, BSD3) and exposes
`target(data) -> Target`: the log density of the model's unconstrained parameters
(Jacobians included) for theta [L, D], and the map from theta to the Stan parameter
names the reference draws use. The sampler validated on these is the one the regime model
uses; see docs/validation.md.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from regime_model.validation.posteriordb import ark, arma11, garch11, hmm_drive, hmm_example
from regime_model.validation.posteriordb.target import Target

__all__ = ["TARGETS", "Target"]

# posteriordb posterior name -> constructor from its data block.
TARGETS: dict[str, Callable[[Mapping[str, Any]], Target]] = {
    "hmm_example-hmm_example": hmm_example.target,
    "bball_drive_event_1-hmm_drive_1": hmm_drive.target_normal,
    "bball_drive_event_0-hmm_drive_0": hmm_drive.target_exponential,
    "garch-garch11": garch11.target,
    "arK-arK": ark.target,
    "arma-arma11": arma11.target,
}
