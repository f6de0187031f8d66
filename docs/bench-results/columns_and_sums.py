"""Two parts of the checkpoint stage at 268 instruments, before and after the thirty-seventh
session's changes (issue 14, item 4): `python docs/bench-results/columns_and_sums.py`, in
this tree (PYTHONPATH=.). Prints, best of 5 x 500 runs, ms:
- decisions: a DecisionRow per instrument made from the strategy's columns and packed for
  the tables (as before) against the columns packed as they are (DecisionColumns);
- windows: each window's CRC-32, a row at a time (as before), against the weighted sums
  of service/state/window_sums.py, all rows at once, on a [268, 256] view of a wider
  buffer as the returns table gives it."""

import random
import timeit
import zlib
from itertools import repeat

import numpy as np

from service.state import decision_columns
from service.state.records import DecisionColumns, DecisionRow
from service.state.window_sums import window_sums

N, T = 268, 256


def best(run) -> float:  # type: ignore[no-untyped-def]
    return min(timeit.repeat(run, number=500, repeat=5)) / 500 * 1e3


def main() -> None:
    rng = random.Random(5)
    symbols = [f"S{i:04d}" for i in range(N)]
    columns = [[rng.randint(0, 1) for _ in range(N)],
               *[[rng.random() for _ in range(N)] for _ in range(3)], [True] * N,
               *[[rng.random() for _ in range(N)] for _ in range(4)]]
    held: dict[str, float] = {}

    def as_rows() -> None:
        rows = list(map(DecisionRow, symbols, *columns, map(held.get, symbols, repeat(0.0))))
        decision_columns.pack(rows)

    def as_columns() -> None:
        decision_columns.pack(DecisionColumns(list(symbols), *columns,
                                              list(map(held.get, symbols, repeat(0.0)))))

    print(f"decisions: rows {best(as_rows):.3f}  columns {best(as_columns):.3f}")
    buffer = np.random.default_rng(5).normal(0, 0.01, (N, T + 64))
    windows = buffer[:, 10:10 + T]
    crcs = best(lambda: list(map(zlib.crc32, windows.astype("<f8", copy=False))))
    print(f"windows: crc32 rows {crcs:.3f}  sums {best(lambda: window_sums(windows)):.3f}")


if __name__ == "__main__":
    main()
