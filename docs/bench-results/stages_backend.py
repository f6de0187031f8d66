"""`bench stages` on a backend of choice, in any tree since the stages bench took one
(thirty-eighth session, issue 14 item 4; the CLI's `--backend` came then):
`PYTHONPATH=TREE python docs/bench-results/stages_backend.py N BACKEND OUT [UPDATES
[PACE_MS]]` runs service.bench.stages.measure(N, 256, UPDATES (default 12), BACKEND) and
writes its JSON to OUT; PACE_MS (a tree from the thirty-eighth session on) starts each
update that long after the last. With wgpu the checkpoint holds the device's float32
chains' carries, as the daemon's does."""

import json
import sys

import regime_model  # noqa: F401 - numpy's dispatch as the daemon's, before numpy loads
from service.bench import stages

if __name__ == "__main__":
    instruments, backend, out = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    updates = int(sys.argv[4]) if len(sys.argv) > 4 else 12
    paced = {"pace_s": float(sys.argv[5]) / 1e3} if len(sys.argv) > 5 else {}
    figures = stages.measure(instruments, 256, updates, backend, **paced)
    with open(out, "w") as file:
        json.dump(figures, file, indent=1)
        file.write("\n")
