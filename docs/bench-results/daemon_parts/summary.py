"""Medians of the part timers that sitecustomize.py (beside this) wrote in a daemon's
workers: `python docs/bench-results/daemon_parts/summary.py FOLDER [SKIP]`, SKIP the
first updates of each worker left out (default 2: the cold update and the first warm)."""

import json
import statistics
import sys
from pathlib import Path


def main() -> None:
    folder, skip = Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 2
    rows: list[dict[str, float]] = []
    for path in sorted(folder.glob("parts-*.jsonl")):
        rows += [json.loads(line) for line in path.read_text().splitlines()][skip:]
    labels = sorted({k for r in rows for k in r if k != "account"})
    print(f"{len(rows)} updates")
    for label in labels:
        values = [r.get(label, 0.0) for r in rows]
        print(f"{label:34s} median {statistics.median(values):7.3f}  max {max(values):7.3f}")


if __name__ == "__main__":
    main()
