"""The chaos run: kill a worker with SIGKILL at randomly chosen fault points, again and
again, and prove the end state equals an uninterrupted run over the same bars.

Each account's worker runs as its own process (`python -m service.bench.chaos worker ...`,
the real `run_worker` on a fast clock, the numpy backend and the simulated broker, whose book
lives in its own SQLite file). Every incarnation gets one fault, `kill@POINT:N`, drawn
from a random generator seeded by (seed, account, incarnation), so a run is reproducible
from its seed; a fault that is not reached before the target checkpoint simply does not
fire. Incarnations follow one another until the kill target is met, then one without
fault finishes the run. The reference run is one uninterrupted process per account.

Crash equivalence compares, per account: the model digest of every checkpoint (byte for
byte), the final cash and equity, the broker's cash, positions, orders (with their
client_order_ids, quantities, statuses and fills) and fills, and the intents table.
Driven by `regime-trader prove chaos --kills N` and by tests/reliability.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from service.bench.daemon_harness import two_account_settings, write_config
from service.worker.fault_points import FAULTS_ENV, TESTING_ENV


def chaos_settings(effort: str = "") -> str:
    """Two accounts that trade often; `effort`: lines for [model] (empty: the daemon's
    defaults). Which updates trade, and so which kill points a seed's plan reaches, follows
    from the estimates, and so from the effort."""
    return two_account_settings(level="warning", effort=effort, sections="""
[strategy]
enter_below = 0.9         # trade often: the chaos needs orders to kill around
exit_above = 0.95
min_trade_fraction = 0.0
""")


SETTINGS = chaos_settings()


ACCOUNTS = ("alpha", "beta")
# Every point a worker passes without a supervisor (`reload` needs one: see the tests).
CHAOS_POINTS = (
    "start", "after_resend", "update", "model", "before_checkpoint", "in_commit",
    "after_checkpoint", "before_post", "after_post",
)
MAX_PASS = 2  # the fault fires at the N-th pass, N in 1..MAX_PASS
STEPS = (2, 3)  # an incarnation not killed stops cleanly after this many more updates


@dataclass
class AccountRun:
    account: str
    kills: int = 0
    incarnations: int = 0
    kills_by_point: dict[str, int] = field(default_factory=dict)
    exit_codes: list[int] = field(default_factory=list)


def draw_fault(seed: int, account: str, incarnation: int) -> tuple[str, int, int]:
    """The fault of one incarnation and how many updates it may make before it stops
    cleanly (so a point it never reaches costs a few updates, not the run): reproducible
    from the seed alone."""
    rounds, turn = divmod(incarnation, len(CHAOS_POINTS))
    order = list(CHAOS_POINTS)  # every point once per round, in a shuffled order
    random.Random(f"{seed}:{account}:round {rounds}").shuffle(order)
    rng = random.Random(f"{seed}:{account}:{incarnation}")
    return order[turn], rng.randint(1, MAX_PASS), rng.randint(*STEPS)


def worker_process(
    config: Path, state_dir: Path, account: str, stop_at: int, fault: str | None,
    timeout_s: float = 300.0,
) -> subprocess.CompletedProcess[str]:
    """One incarnation of the account's worker, run to its end; stdout is its JSON log."""
    env = {**os.environ, TESTING_ENV: "1", FAULTS_ENV: fault or ""}
    args = [sys.executable, "-m", "service.bench.chaos", "worker", str(config), str(state_dir),
            account, str(stop_at)]
    return subprocess.run(args, env=env, capture_output=True, text=True, timeout=timeout_s,
                          check=False, cwd=Path(__file__).resolve().parents[2])


def run_worker_process(
    config: Path, state_dir: Path, account: str, stop_at: int, fault: str | None,
    timeout_s: float = 300.0,
) -> int:
    """One incarnation; its exit code (-9: killed). Any other failure is an error."""
    done = worker_process(config, state_dir, account, stop_at, fault, timeout_s)
    if done.returncode not in (0, -9):
        raise RuntimeError(f"{account} worker with {fault!r} exited {done.returncode}:\n"
                           f"{done.stderr[-3000:]}")
    return done.returncode


def chaos_account(
    config: Path, state_dir: Path, account: str, stop_at: int, kills: int, seed: int
) -> AccountRun:
    from service.state.reader import last_seq  # noqa: PLC0415
    from service.worker.assembly import state_path  # noqa: PLC0415

    run = AccountRun(account)
    while run.kills < kills:
        point, nth, step = draw_fault(seed, account, run.incarnations)
        run.incarnations += 1
        until = min(stop_at, last_seq(state_path(state_dir, account)) + step)
        code = run_worker_process(config, state_dir, account, until, f"kill@{point}:{nth}")
        run.exit_codes.append(code)
        if code == -9:
            run.kills += 1
            run.kills_by_point[point] = run.kills_by_point.get(point, 0) + 1
    run.exit_codes.append(run_worker_process(config, state_dir, account, stop_at, None))
    return run


def final_state(state_dir: Path, account: str) -> dict[str, Any]:
    """Everything crash equivalence compares, read from the two SQLite files."""
    from service.broker.sim_book_rows import book_rows  # noqa: PLC0415
    from service.state.reader import final_records  # noqa: PLC0415
    from service.worker.assembly import sim_broker_path, state_path  # noqa: PLC0415

    ours, epoch = final_records(state_path(state_dir, account))
    broker = book_rows(sim_broker_path(state_dir, account))
    return _epoch_masked({**ours, **broker}, epoch)


def _epoch_masked(state: dict[str, Any], epoch: str) -> dict[str, Any]:
    """Runs compared for crash equivalence use different databases, so different order
    epochs (service.state.order_ids): their ids compare with the epoch masked."""
    mark = f"rt-{epoch}-"

    def mask(rows: list[Any]) -> list[Any]:
        return [(str(row[0]).replace(mark, "rt-EPOCH-", 1), *row[1:]) for row in rows]

    return {**state, "intents": mask(state["intents"]), "orders": mask(state["orders"])}


def differences(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    return [key for key in a if a[key] != b.get(key)]


def run_chaos(
    kills: int, seed: int = 0, updates: int | None = None, workdir: Path | None = None,
    settings: str = SETTINGS,
) -> dict[str, Any]:
    """Chaos over both accounts (in parallel), the reference run, and the comparison."""
    folder = workdir or Path(tempfile.mkdtemp(prefix="regime-trader-chaos-"))
    config = write_config(folder / "config", settings)
    per_account = -(-kills // len(ACCOUNTS))
    stop_at = updates or max(20, 3 * per_account)
    started = time.monotonic()
    with ThreadPoolExecutor(len(ACCOUNTS) * 2) as pool:
        chaos = {a: pool.submit(chaos_account, config, folder / "chaos", a, stop_at,
                                per_account, seed) for a in ACCOUNTS}
        reference = {a: pool.submit(run_worker_process, config, folder / "reference", a,
                                    stop_at, None, 30.0 * stop_at) for a in ACCOUNTS}
        runs = {a: f.result() for a, f in chaos.items()}
        for f in reference.values():
            f.result()
    accounts: dict[str, Any] = {}
    for account, run in runs.items():
        got = final_state(folder / "chaos", account)
        want = final_state(folder / "reference", account)
        accounts[account] = {
            "kills": run.kills,
            "incarnations": run.incarnations,
            "kills_by_point": dict(sorted(run.kills_by_point.items())),
            "final_seq": got["seq"],
            "checkpoints_compared": len(want["model_digests"]),
            "orders": len(want["orders"]),
            "fills": len(want["fills"]),
            "differences": differences(want, got),
        }
    result = {
        "seed": seed,
        "updates_per_account": stop_at,
        "kills": sum(r.kills for r in runs.values()),
        "wall_s": round(time.monotonic() - started, 1),
        "equivalent": all(not a["differences"] for a in accounts.values()),
        "accounts": accounts,
        "folder": str(folder),
    }
    (folder / "result.json").write_text(json.dumps(result, indent=1) + "\n")
    return result


def _worker_main(argv: list[str]) -> int:
    """`python -m service.bench.chaos worker CONFIG STATE_DIR ACCOUNT STOP_AT`: one worker,
    faults from the environment (refused without REGIME_TRADER_TESTING=1)."""
    from service.config_loader import load_config  # noqa: PLC0415
    from service.logs import configure_logging  # noqa: PLC0415
    from service.worker.fault_points import faults_from_env  # noqa: PLC0415
    from service.worker.process import run_worker_or_refuse  # noqa: PLC0415
    from service.worker.spec import WorkerSpec  # noqa: PLC0415

    config_path, state_dir, account, stop_at = argv
    config = load_config(Path(config_path))
    configure_logging(config.settings.logging.level, "json", account=account)
    spec = WorkerSpec(account, config, Path(state_dir), int(stop_at),
                      faults=faults_from_env(dict(os.environ)))
    run_worker_or_refuse(spec, threading.Event())
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["worker"]:
        sys.exit(_worker_main(sys.argv[2:]))
    result = run_chaos(int(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 0)
    print(json.dumps(result, indent=1))
    sys.exit(0 if result["equivalent"] else 1)
