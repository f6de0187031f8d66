"""`regime-trader bench round`: the round latency of the real daemon, cold and warm.

A round is one bar through every account: from the bar's RELEASE to the last account's
committed checkpoint. The daemon runs for real (supervisor, one worker process per
account, the synthetic market, the simulated broker) on a paced clock, so every bar has a
release: bar n (n = 0 for the first traded bar) closes at wall time A + n * pace_s, where
A is the paced clock's wall anchor. The bench writes the SAME anchor into every account's
state database before the start (`clock.wall_anchor`, the key a restarted worker resumes
its market time from), `lead_s` after the launch, so every account sees each bar released
at the same instant. Each `update.completed` carries its wall `started_at` and
`committed_at`, and the device traffic of that update.

A worker that was not ready (no `worker.started`) by the first release would turn start-up
into latency: the run is refused and repeated with a longer lead. A round is `cold` when
it is every account's first update, `overlapped` when some account was still busy with the
previous bar at its release (its figure includes queueing; raise --pace-s), `incomplete`
when some account skipped the bar (it caught up past it). `round_ms.warm` is over the
other rounds. A fast clock has no release time at all, which is why the clock is paced.
"""

from __future__ import annotations

import itertools
import json
import resource
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from service.bench.daemon_harness import DaemonProcess, write_config
from service.bench.round_figures import RoundBenchError, RoundRun, figures
from service.settings import ModelSettings
from service.state.store import StateStore
from service.worker.assembly import WALL_ANCHOR_KEY, state_path

BACKENDS = ("auto", "numpy", "wgpu")
ATTEMPTS = 3  # runs with a longer lead before giving up on a slow start
EXIT_MARGIN_S = 900.0  # beyond the paced bars: start-up, a cold update, shutdown


class LateStartError(RoundBenchError):
    def __init__(self, startup_s: float, lead_s: float) -> None:
        super().__init__(f"the slowest worker was ready {startup_s:.1f} s after launch, past "
                         f"the first release at {lead_s:.1f} s; raise --lead-s")
        self.startup_s = startup_s


@dataclass(frozen=True)
class RoundShape:
    accounts: int = 5
    instruments: int = 268  # in all, shared out as evenly as possible
    chains: int = 4
    window: int = 256
    states: int = 2
    bars: int = 8  # updates per account (the first is the cold one)
    backend: str = "auto"
    pace_s: float = 10.0  # wall seconds per bar: longer than a warm round, or rounds overlap
    lead_s: float = 20.0  # launch to the first release: longer than the workers' start-up
    shift_moves: bool = True  # [model] shift_moves: the level-shift move, the daemon's default
    shared_device: bool = False  # [model] shared_device: warm updates on one device process
    # [model] extension_chains: a run-on block's chains, a wide start's (the daemon's default)
    extension_chains: int = ModelSettings.model_fields["extension_chains"].default
    # [model] sample_between_bars: the sampler after the commit (the daemon's default)
    between_bars: bool | str = ModelSettings.model_fields["sample_between_bars"].default
    # [model] between_bars_margin: the sampler between bars on to this share of the gate
    between_bars_margin: float = ModelSettings.model_fields["between_bars_margin"].default

    def check(self) -> None:
        """ValueError naming the flag, before anything is started."""
        problems = [
            f"--{name.replace('_', '-')} {value} {rule}"
            for name, value, ok, rule in (
                ("accounts", self.accounts, 1 <= self.accounts <= 1000, "must be 1..1000"),
                ("instruments", self.instruments, self.instruments >= self.accounts,
                 "must be at least --accounts (each account trades one or more)"),
                ("chains", self.chains, 2 <= self.chains <= 64, "must be 2..64"),
                ("extension_chains", self.extension_chains,
                 self.chains <= self.extension_chains <= 256, "must be --chains..256"),
                ("window", self.window, 32 <= self.window <= 10_000, "must be 32..10000"),
                ("states", self.states, 2 <= self.states <= 4, "must be 2..4"),
                ("bars", self.bars, self.bars >= 2, "must be at least 2 (a cold, a warm)"),
                ("backend", self.backend, self.backend in BACKENDS, f"must be one of {BACKENDS}"),
                ("pace_s", self.pace_s, self.pace_s > 0, "must be positive"),
                ("lead_s", self.lead_s, self.lead_s > 0, "must be positive"),
                ("between_bars_margin", self.between_bars_margin,
                 0 < self.between_bars_margin <= 1, "must be in (0, 1]"),
            )
            if not ok
        ]
        if problems:
            raise ValueError("; ".join(problems))


def symbols(count: int) -> list[str]:
    """`count` distinct valid tickers: R0000, R0001, ..."""
    return [f"R{i:04d}" for i in range(count)]


def account_names(count: int) -> list[str]:
    return [f"acct{i:03d}" for i in range(count)]


def share_out(names: list[str], accounts: int) -> list[list[str]]:
    """`names` in `accounts` consecutive runs whose sizes differ by at most one."""
    size, extra = divmod(len(names), accounts)
    bounds = [i * size + min(i, extra) for i in range(accounts + 1)]
    return [names[lo:hi] for lo, hi in itertools.pairwise(bounds)]


def settings_text(shape: RoundShape) -> str:
    accounts = "".join(f'[[accounts]]\nname = "{a}"\n\n' for a in account_names(shape.accounts))
    return (
        f'instruments_file = "instruments.toml"\n\n{accounts}'
        f'[market]\nkind = "synthetic"\ninterval = "1m"\n\n'
        f'[clock]\nmode = "paced"\npace_s = {shape.pace_s}\n\n'
        f"[model]\nwindow = {shape.window}\nchains = {shape.chains}\nstates = {shape.states}\n"
        f'backend = "{shape.backend}"\nshift_moves = {str(shape.shift_moves).lower()}\n'
        f"shared_device = {str(shape.shared_device).lower()}\n"
        f"extension_chains = {shape.extension_chains}\n"
        f"sample_between_bars = {json.dumps(shape.between_bars)}\n"  # true, false, "auto"
        f"between_bars_margin = {shape.between_bars_margin}\n\n"
        f'[broker]\nkind = "sim"\n\n[logging]\nlevel = "info"\nformat = "json"\n'
    )


def instruments_text(shape: RoundShape) -> str:
    runs = share_out(symbols(shape.instruments), shape.accounts)
    listed = [", ".join(f'"{s}"' for s in run) for run in runs]
    return "".join(
        f"[accounts.{name}]\nsymbols = [{names}]\n\n"
        for name, names in zip(account_names(shape.accounts), listed, strict=True)
    )


def seed_wall_anchor(state_dir: Path, accounts: list[str], anchor: datetime) -> None:
    """Every account's paced clock starts at `anchor`: the same release for everyone."""
    state_dir.mkdir(parents=True, exist_ok=True)
    for account in accounts:
        store = StateStore(state_path(state_dir, account), account=account)
        try:
            store.set_meta(WALL_ANCHOR_KEY, anchor.isoformat())
        finally:
            store.close()


def run_once(
    shape: RoundShape, folder: Path, lead_s: float
) -> tuple[RoundRun, dict[str, float]]:
    """One daemon run of `shape.bars` updates per account: its events and anchor, and what
    it cost the host."""
    config = write_config(folder, settings_text(shape), instruments_text(shape))
    accounts = account_names(shape.accounts)
    launched = time.time()
    anchor = datetime.fromtimestamp(launched, UTC) + timedelta(seconds=lead_s)
    seed_wall_anchor(folder / "state", accounts, anchor)
    daemon = DaemonProcess(["run", "--config", str(config), "--state-dir", str(folder / "state"),
                            "--stop-after", str(shape.bars)], cwd=folder)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        code = daemon.wait_exit(lead_s + shape.bars * shape.pace_s + EXIT_MARGIN_S)
    finally:
        daemon.stop()
    if code != 0:
        raise RoundBenchError(daemon.report(f"the daemon exited {code}"))
    run = RoundRun(list(daemon.events), accounts, anchor, shape.pace_s, timedelta(minutes=1))
    _refuse_late_start(run, launched, lead_s)
    return run, host_cost(before, resource.getrusage(resource.RUSAGE_CHILDREN), shape)


def host_cost(
    before: resource.struct_rusage, after: resource.struct_rusage, shape: RoundShape
) -> dict[str, float]:
    """What the run cost the host, from the kernel's accounting of the daemon's process tree
    (the supervisor and its workers are all waited for, so they count as our children).

    `cpu_s` is the whole run's CPU time (start-up, the cold update and shutdown included),
    so `cpu_s_per_account_update` is an upper bound on a warm update's CPU cost.
    `peak_rss_mb` is the largest resident set of any ONE process of the tree (a worker: a
    supervisor is smaller), over every run of this bench process; Linux reports KiB."""
    cpu_s = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {
        "cpu_s": round(cpu_s, 2),
        "cpu_s_per_account_update": round(cpu_s / (shape.accounts * shape.bars), 3),
        "peak_rss_mb": round(after.ru_maxrss / 1024, 1),
    }


def _refuse_late_start(run: RoundRun, launched: float, lead_s: float) -> None:
    ready = run.ready_at()
    missing = sorted(set(run.accounts) - set(ready))
    if missing:
        raise RoundBenchError(f"no worker.started from {', '.join(missing)}")
    slowest = max(ready.values())
    if slowest > run.anchor.timestamp():
        raise LateStartError(slowest - launched, lead_s)


def measure(shape: RoundShape) -> dict[str, Any]:
    """Run the daemon (again with a longer lead after a slow start) and reduce its events."""
    shape.check()
    lead_s = shape.lead_s
    for attempt in range(1, ATTEMPTS + 1):
        with tempfile.TemporaryDirectory(prefix="rt-bench-round-") as tmp:
            try:
                run, host = run_once(shape, Path(tmp), lead_s)
            except LateStartError as late:
                if attempt == ATTEMPTS:
                    raise
                lead_s = max(2 * lead_s, 1.5 * late.startup_s)
                print(f"bench round: {late}; again with --lead-s {lead_s:.1f}", file=sys.stderr)
                continue
        return {**figures(run), **_shape_fields(shape), "host": host, "lead_s": lead_s,
                "attempts": attempt}
    raise AssertionError("unreachable: the last attempt returns or raises")


def _shape_fields(shape: RoundShape) -> dict[str, Any]:
    per_account = [len(r) for r in share_out(symbols(shape.instruments), shape.accounts)]
    return {
        "accounts": shape.accounts,
        "instruments": shape.instruments,
        "instruments_per_account": {"min": min(per_account), "max": max(per_account)},
        "chains": shape.chains,
        "window": shape.window,
        "states": shape.states,
        "bars": shape.bars,
        "backend_requested": shape.backend,
        "shift_moves": shape.shift_moves,
        "shared_device": shape.shared_device,
        "extension_chains": shape.extension_chains,
        "between_bars": shape.between_bars,
        "between_bars_margin": shape.between_bars_margin,
        # the daemon's, which the round's configuration leaves as it is
        "at_risk_margin": ModelSettings.model_fields["at_risk_margin"].default,
        "pace_s": shape.pace_s,
        "date": time.strftime("%Y-%m-%d"),
    }


def summary_lines(result: dict[str, Any]) -> list[str]:
    """The figures for a person at a terminal (--json prints the whole object)."""
    rounds, stages = result["round_ms"], result["stages_ms"]
    lines = [f"backend {result['backend']} on {result['adapter']}; {result['accounts']} accounts,"
             f" {result['instruments']} instruments, {result['bars']} bars"]
    for kind in ("cold", "warm"):
        r = rounds[kind]
        lines.append(f"{kind} round ms: " + ("none" if r is None else
                     f"p50 {r['p50']}  p99 {r['p99']}  max {r['max']}"))
    lines += [f"  {name:<10} p50 {s['p50']}  p99 {s['p99']}" for name, s in stages.items()]
    lines.append(f"rounds: {result['rounds']}; submissions/update "
                 f"{result['submissions_per_update']}, upload bytes/update "
                 f"{result['upload_bytes_per_update']}")
    host = result["host"]
    lines.append(f"host: {host['cpu_s']} CPU s in all, {host['cpu_s_per_account_update']} per "
                 f"account-update; largest process {host['peak_rss_mb']} MB resident")
    reweighing, sampled = result.get("reweighing"), result.get("sampled_ms")
    if reweighing and sampled:  # --between-bars: the bar reweighs, the sampler runs after
        waited = result.get("sampled_waited_ms") or {}
        lines.append(f"between bars: sampler after the commit ms p50 {sampled['p50']}  p99 "
                     f"{sampled['p99']}, after waiting for the other accounts' bars p50 "
                     f"{waited.get('p50')}  max {waited.get('max')}; sent to the bar's "
                     f"sampler per update p50 "
                     f"{reweighing['sampled_at_bar']['p50']} (why, in all: "
                     f"{reweighing['at_bar_why']}); weights kept at least "
                     f"{reweighing['min_share']:.3f} of the draws")
    risk, first = result.get("at_risk"), result.get("sampled_after_cold_ms")
    if risk and first:
        lines.append(f"at risk of the next bar's gate, run on between bars: {risk['in_all']} "
                     f"in all, by share of the gate {risk['by_margin']}; the sampler after "
                     f"the cold update ms max {first['max']}")
    device = result.get("device_process")
    if device:  # --shared-device: the device process's first gatherings of each bar
        lines.append(f"shared device: {device.get('gatherings')} gatherings, {device.get('joined')}"
                     f" joined; a bar's first: lanes p50 {device.get('first_lanes_p50')}, run ms "
                     f"p50 {device.get('first_run_ms_p50')}, wait ms p50 "
                     f"{device.get('first_wait_ms_p50')}")
    return lines
