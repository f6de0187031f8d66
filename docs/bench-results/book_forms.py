# ruff: noqa: I001 - regime_model before numpy: the daemon's numpy dispatch
"""The checkpoint book's instrument columns in the form before schema version 9 (the
symbols and every last-bar time as JSON lists) and from it (the symbols one string, a
shared time once), fortieth session: `python docs/bench-results/book_forms.py [INSTRUMENTS]`.
The book of a warm update of the rig of carries_off_the_bar.py (default 268
instruments); prints one JSON line: each form's size and its JSON encoding's median us
(json.dumps as the store writes it, 2,000 times each, alternated in blocks of 200)."""

import copy
import json
import statistics
import sys
import tempfile
import timeit
from pathlib import Path

import regime_model  # noqa: F401 - numpy's dispatch as the daemon's, before numpy loads

from carries_off_the_bar import rig_between_bars
from service.state import book_columns


def main() -> None:
    instruments = int(sys.argv[1]) if len(sys.argv) > 1 else 268
    with tempfile.TemporaryDirectory(prefix="rt-book-") as tmp:
        rig = rig_between_bars(Path(tmp), instruments)
        try:
            rig.trader.resume()
            for n in range(4):
                rig.update(n)
                rig.trader.sample_between_bars()
            latest = rig.store.latest()
        finally:
            rig.close()
    assert latest is not None
    now = latest.book
    before = copy.deepcopy(now)  # the lists the form before wrote
    entries = book_columns.entries(now)
    columns = before[book_columns.COLUMNS_KEY]
    columns["symbols"] = list(entries)
    columns["last_bar_time"] = [e["last_bar_time"] for e in entries.values()]
    forms = {"before": before, "now": now}

    def dumps(book: dict[str, object]) -> str:
        return json.dumps(book, sort_keys=True, separators=(",", ":"))

    us: dict[str, list[float]] = {name: [] for name in forms}
    for _ in range(10):
        for name, book in forms.items():
            us[name].append(1e6 * timeit.timeit(lambda b=book: dumps(b), number=200) / 200)
    print(json.dumps({"instruments": instruments,
                      **{f"{n}_bytes": len(dumps(b)) for n, b in forms.items()},
                      **{f"{n}_json_us": round(statistics.median(v), 1) for n, v in us.items()}}))


if __name__ == "__main__":
    main()
