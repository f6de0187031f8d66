# ruff: noqa: I001 - regime_model before numpy: the daemon's numpy dispatch
"""What checkpoint_parts.py and order_parts.py share: a timer around a function, kept by
label, and the stages bench's rig (service.bench.stages, numpy backend, window 256) run
for a number of updates with the timers in place. Imported from beside them (a script's
folder is first on sys.path), so it runs inside any tree the scripts run in."""

import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import regime_model  # noqa: F401 - numpy's dispatch as the daemon's, before numpy loads


from service.bench import stages

TIMES: dict[str, list[float]] = {}


def timed(owner: Any, name: str, label: str) -> None:
    """Replace owner.name with a version that records its time under `label`."""
    original: Callable[..., Any] = getattr(owner, name)

    def run(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            TIMES.setdefault(label, []).append(1e3 * (time.perf_counter() - start))

    setattr(owner, name, run)


def run_rig(instruments: int, updates: int) -> None:
    """The stages rig's trader, resumed, through `updates` updates (timers in place)."""
    with tempfile.TemporaryDirectory() as tmp:
        config = stages.write_config(Path(tmp), instruments, 256)
        rig = stages.Rig(config, Path(tmp) / "state", "numpy")
        rig.trader.resume()
        for n in range(updates):
            rig.update(n)
        rig.close()
