"""A local Alpaca-compatible HTTP server for the tests: see server.py."""

from alpaca_server.faults import FAULT_KINDS, RANDOM_KINDS, Faults
from alpaca_server.server import AlpacaServer

__all__ = ["FAULT_KINDS", "RANDOM_KINDS", "AlpacaServer", "Faults"]
