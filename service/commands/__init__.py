"""Sub-commands that live in their own modules (research and maintenance tools).

Each module named here has `register(commands)`, which adds its parser to the
`regime-trader` sub-parsers and sets `handler`; its heavy imports happen inside the
handler, so `regime-trader run` and `check-config` start fast.
"""

from __future__ import annotations

import argparse
import importlib

MODULES: tuple[str, ...] = (
    "verify_gpu", "fit", "bench", "prove", "replay", "report", "show_config",
    "control", "shards",
)


def register_all(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    for name in MODULES:
        importlib.import_module(f"service.commands.{name}").register(commands)
