"""The worker's start against the broker: resume (checkpoint, open intents, reconcile),
which is the first call to reach it, and what its failures mean.

- Keys refused (401, or a 403 that is not an order refusal): `broker.auth_failed` with
  `parked=True`, exit 78. A restart cannot fix keys; the supervisor parks the account and
  the service's exit code tells systemd not to restart (RestartPreventExitStatus=78).
- Broker unreachable (timeout, refused or dropped connection, 5xx, after the client's
  own read retries): `broker.unreachable` with `attempt` and `retry_in_s`, then the worker
  tries again itself, backing off like the supervisor's restarts (backoff_initial_s,
  doubled up to backoff_max_s). It sends a heartbeat before each wait, so the supervisor
  sees it alive, and a stop request ends the wait. We retry here rather than exit 75: the
  outage costs no restart from the budget (a long one would otherwise park the account or
  stop the service with 70), and the backend is not selected again for nothing.
- Another state database trading this Alpaca account (its orders, of another epoch,
  within `twin_window_s`): `worker.twin_detected`, exit 75 (service/worker/twin_guard.py).
  Looked for at each attempt, before resume sends or cancels anything.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from datetime import UTC, datetime

import structlog

from service.broker.base import BrokerAuthError, BrokerError
from service.exit_codes import EX_CONFIG
from service.secrets import env_names
from service.settings_ops import SupervisionSettings
from service.worker.trader import Trader
from service.worker.twin_guard import refuse_twin

log = structlog.get_logger("service.worker")
MIN_WAIT_S = 0.01  # never a busy loop, even with backoff_initial_s = 0


def resume_when_reachable(
    trader: Trader,
    stop: threading.Event,
    supervision: SupervisionSettings,
    beat: Callable[[float], None],
) -> int | None:
    """`trader.resume()`'s checkpoint seq, once the broker answers; None if told to stop
    first. Refused keys end the process with 78."""
    attempt = 0
    while not stop.is_set():
        attempt += 1
        try:
            _refuse_twin(trader, supervision.twin_window_s)  # a twin: exit 75
            return trader.resume()
        except BrokerAuthError as error:
            _park(trader.account, error)
        except BrokerError as error:
            wait_s = retry_wait_s(attempt, supervision)
            log.warning("broker.unreachable", attempt=attempt, retry_in_s=wait_s,
                        reason=str(error), next="the worker retries its start by itself")
            beat(wait_s + supervision.startup_budget_s)  # the wait, then a fresh start
            stop.wait(wait_s)
    return None


def retry_wait_s(attempt: int, supervision: SupervisionSettings) -> float:
    first, most = supervision.backoff_initial_s, supervision.backoff_max_s
    wait_s: float = min(most, first * 2.0 ** min(attempt - 1, 30))  # no float overflow
    return round(max(MIN_WAIT_S, wait_s), 3)


def _refuse_twin(trader: Trader, window_s: float) -> None:
    """Alpaca only: the simulated account is a file in this state directory."""
    if trader.config.settings.broker.kind == "alpaca":
        ids = trader.store.ids_for(trader.account)
        refuse_twin(trader.broker, ids, window_s, datetime.now(UTC))


def _park(account: str, error: BrokerAuthError) -> None:
    id_name, secret_name = env_names(account)
    log.error("broker.auth_failed", parked=True, exit_code=EX_CONFIG, reason=str(error),
              next=f"set the account's keys ({id_name} and {secret_name}, or its key file), "
                   "then restart the service; a restart alone cannot help")
    sys.exit(EX_CONFIG)
