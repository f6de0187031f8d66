"""regime-trader: the daemon (CLI, settings, supervisor, workers, adapters, state)."""

from typing import Any

import regime_model  # noqa: F401 - fixes numpy's CPU dispatch before numpy loads (see there)


def __getattr__(name: str) -> Any:
    """`service.__version__`, from the installed package's metadata (service/version.py),
    looked up on first use: the latency-critical commands never pay for it."""
    if name == "__version__":
        from service.version import installed_version  # noqa: PLC0415

        return installed_version()
    raise AttributeError(f"module 'service' has no attribute {name!r}")
