"""What the daemon's checkpoints hold, array by array (issue 14, item 4; thirty-eighth
session): `PYTHONPATH=TREE python docs/bench-results/round_blobs.py bench round ARGS` runs
`regime-trader bench round ARGS` from TREE keeping its folder (not deleted), then prints
for each account's last checkpoint its model blob's and book's bytes and, for each
float64 array of the blob, its shape, the dtype it is stored in and whether every value
is a float32 exactly. With `--backend wgpu` the carries come from the device's float32
chains; from the thirty-eighth session such arrays are stored narrowed (codec.py)."""

import json
import sqlite3
import struct
import sys
import tempfile
from pathlib import Path

import numpy as np

from service.cli import main
from service.state.codec import decode_arrays

KEPT: list[str] = []


class Kept:
    """tempfile.TemporaryDirectory that leaves its folder for the report."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        self.name = tempfile.mkdtemp(prefix="rt-round-blobs-")
        KEPT.append(self.name)

    def __enter__(self) -> str:
        return self.name

    def __exit__(self, *args: object) -> None:
        return None


def report(database: Path) -> None:
    conn = sqlite3.connect(database)
    seq, model, book = conn.execute(
        "SELECT seq, model, book FROM checkpoints ORDER BY seq DESC LIMIT 1").fetchone()
    (size,) = struct.unpack("<I", model[4:8])
    stored = {e["name"]: e.get("stored", e["dtype"]) for e in json.loads(model[8:8 + size])}
    print(f"{database.name} seq {seq}: model blob {len(model)} B ({model[:4].decode()}), "
          f"book {len(book)} B")
    for name, array in sorted(decode_arrays(model).items()):
        if array.dtype == np.float64:
            exact = np.array_equal(array.astype(np.float32).astype(np.float64), array)
            print(f"  {name:22s} {list(array.shape)!s:14s} stored {stored[name]}  "
                  f"float32 values: {'all' if exact else 'not all'}")


if __name__ == "__main__":
    tempfile.TemporaryDirectory = Kept  # type: ignore[assignment, misc]
    code = main(sys.argv[1:])
    for folder in KEPT:
        for database in sorted(Path(folder).glob("state/*.sqlite")):
            if not database.name.endswith("sim-broker.sqlite"):
                report(database)
    sys.exit(code)
