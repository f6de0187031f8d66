"""The daemon `bench round` runs, kept to read its own log (issue 14, twenty-ninth
session): `python docs/bench-results/round_config.py DIR [ACCOUNTS [INSTRUMENTS [PACE_S
[LEAD_S]]]]` (defaults 1, 8, 3, 15) writes into DIR the settings and instruments files
`bench round` would write for that shape (T 256, K 2, 4 chains, backend auto, the daemon's
[model] defaults) and anchors every account's paced clock LEAD_S from now; then

    regime-trader run --config DIR/service.toml --state-dir DIR/state --stop-after 2 \\
        > DIR/log.jsonl

runs it, and each `update.completed` line in the log says, among the rest, how many
instruments ran on (`model.extended`): at the cold update, those that start the next
update wide."""

import argparse
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from service.bench.daemon_harness import write_config
from service.bench.round import (
    RoundShape,
    account_names,
    instruments_text,
    seed_wall_anchor,
    settings_text,
)


def main() -> None:
    parser = argparse.ArgumentParser(description="bench round's daemon, written out")
    parser.add_argument("folder", type=Path)
    for name, kind, default in (("accounts", int, 1), ("instruments", int, 8),
                                ("pace_s", float, 3.0), ("lead_s", float, 15.0)):  # fmt: skip
        parser.add_argument(name, type=kind, nargs="?", default=default)
    a = parser.parse_args()
    shape = RoundShape(accounts=a.accounts, instruments=a.instruments, pace_s=a.pace_s,
                       lead_s=a.lead_s)  # fmt: skip
    shape.check()
    config = write_config(a.folder, settings_text(shape), instruments_text(shape))
    anchor = datetime.fromtimestamp(time.time(), UTC) + timedelta(seconds=a.lead_s)
    seed_wall_anchor(a.folder / "state", account_names(shape.accounts), anchor)
    print(config)


if __name__ == "__main__":
    main()
