"""regime-trader: the daemon (CLI, settings, supervisor, workers, adapters, state)."""

__version__ = "0.1.0"
