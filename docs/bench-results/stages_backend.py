"""`bench stages` on a backend of choice, in any tree since the stages bench took one
(thirty-eighth session, issue 14 item 4; the CLI's `--backend` came then):
`PYTHONPATH=TREE python docs/bench-results/stages_backend.py N BACKEND OUT` runs
service.bench.stages.measure(N, 256, 12, BACKEND) and writes its JSON to OUT. With
wgpu the checkpoint holds the device's float32 chains' carries, as the daemon's does."""

import json
import sys

import regime_model  # noqa: F401 - numpy's dispatch as the daemon's, before numpy loads
from service.bench import stages

if __name__ == "__main__":
    instruments, backend, out = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    figures = stages.measure(instruments, 256, 12, backend)
    with open(out, "w") as file:
        json.dump(figures, file, indent=1)
        file.write("\n")
