"""The embedded default's model stage: `regime-trader run --stop-after 10` from an empty
folder, then each account's cold update and the median warm one (updates 2-10) from
`update.completed`'s `timings_ms.model`, and its unconverged warm instrument-updates.

    python docs/bench-results/embedded_default.py [PYTHON] [OUT.json]

PYTHON runs the checkout to measure (its working folder is this process's: run it from a
`git worktree` of the commit, with PYTHONPATH set to it, to compare two commits one after
the other). OUT keeps every `update.completed` event.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any


def _events(output: str) -> dict[str, list[dict[str, Any]]]:
    by_account: dict[str, list[dict[str, Any]]] = {}
    for line in output.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict) and event.get("event") == "update.completed":
            by_account.setdefault(str(event.get("account")), []).append(event)
    return by_account


def main() -> None:
    python = sys.argv[1] if len(sys.argv) > 1 else sys.executable
    with tempfile.TemporaryDirectory() as folder:
        ran = subprocess.run(
            [python, "-m", "service.cli", "run", "--stop-after", "10", "--state-dir", folder],
            capture_output=True, text=True, timeout=900, check=False,
            env={**os.environ, "XDG_RUNTIME_DIR": os.environ.get("XDG_RUNTIME_DIR", "/tmp")},
        )  # fmt: skip
    events = _events(ran.stdout + ran.stderr)
    if len(sys.argv) > 2:
        Path(sys.argv[2]).write_text(json.dumps(events))
    for account, updates in sorted(events.items()):
        model = [u["timings_ms"]["model"] for u in updates]
        unconverged = sum(len(u.get("unconverged") or []) for u in updates[1:])
        print(f"{account}: cold {model[0]:.0f} ms, warm median {statistics.median(model[1:]):.0f}"
              f" ms, unconverged warm instrument-updates {unconverged}, updates {len(updates)}")
    if not events:
        sys.exit(f"no update.completed events (exit {ran.returncode}):\n{ran.stderr[-2000:]}")


if __name__ == "__main__":
    main()
