"""regime-trader: the daemon (CLI, settings, supervisor, workers, adapters, state)."""

import regime_model  # noqa: F401 - fixes numpy's CPU dispatch before numpy loads (see there)

__version__ = "0.1.0"
