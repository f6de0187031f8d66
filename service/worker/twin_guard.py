"""One account, one host: at start, a worker refuses to trade an account that another
state database is still trading (issue 17).

Every state database has its own order epoch, carried by every client_order_id it makes
(`rt-<epoch>-<account part>-<seq>-<symbol>`, service.state.order_ids). Before it resumes
(before any order, reconciliation included), the worker lists the orders the broker
received within `[supervision] twin_window_s` and looks for ids of THIS account made by
ANOTHER epoch; ids without an epoch (the previous release's), other accounts' and
hand-placed orders never count. If there are any, the newest names the twin: the worker
logs `worker.twin_detected` (its epoch, that order's id and submission time, our epoch,
what to do) and exits 75 (EX_TEMPFAIL).

"Still arriving" is read as "submitted within the window": one list, no waiting. A twin
on another host trades at bar closes, so with 1-minute bars its orders are at most a
few bars old whenever its strategy trades. Waiting at start for a further order would
cost every start bar intervals and still miss a twin whose strategy holds its targets.
A database moved aside on THIS host leaves orders of its (now retired) epoch too: they
hold the account back only until the newest is older than the window, which is why the
window is minutes, not hours.

The guard runs at every start of a worker: the first, each restart by the supervisor,
and each of the worker's own retries while the broker is unreachable at start. It does
not run while trading. The supervisor answers exit 75 like any temporary failure
(service.supervisor.restarts): restarts after an exponential backoff
(backoff_initial_s, doubling to backoff_max_s), and past `restart_intensity` restarts in
`restart_period_s`, the account is parked for `park_cooldown_s`, then tried again. So
once the twin stops, the account resumes by itself at the first start after its newest
order has aged past the window: at most `twin_window_s` plus the backoff, or plus the
park cool-down if the budget ran out meanwhile. A refusal is charged to the account's own
budget only, never the supervisor's global one (service.supervisor.restarts): a whole
deployment copied to a second host refuses all its accounts at once, and that must not
end the daemon (exit 70) for accounts that trade.

Only brokers whose account lives outside the state directory are guarded (Alpaca): the
simulated broker's account is a file beside the state database, traded by no other
host, and its order times are market time, not wall time.

Limits: a twin that placed no order within the window is not seen, and a twin started
after this worker is seen only at this worker's next start (the twin's own guard refuses
it, though, while this worker trades).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

import structlog

from service.broker.base import Broker, PlacedOrder
from service.exit_codes import EX_TEMPFAIL
from service.state.order_ids import EPOCH_RE, OrderIds, account_part

log = structlog.get_logger("service.worker")
_EPOCH_LEN = 6  # service.state.order_ids.new_epoch


@dataclass(frozen=True)
class Twin:
    """Another epoch placing orders for this account: its newest order in the window."""

    epoch: str
    newest: PlacedOrder
    orders: int  # its orders within the window


def epoch_of(client_order_id: str, account: str) -> str | None:
    """The epoch of an id `rt-<epoch>-<account part>-<seq>-<symbol>` that `account` makes;
    None for an id without an epoch, another account's, or one placed by hand. A symbol
    never holds '-' (service.strategy.order_id_symbol), an account name may: the id is
    read from its end."""
    parts = client_order_id.rsplit("-", 2)
    if len(parts) != 3:
        return None
    head, seq, symbol = parts
    epoch = head[3:3 + _EPOCH_LEN]
    if not (seq.isdigit() and symbol and EPOCH_RE.match(epoch)):
        return None
    return epoch if head == f"rt-{epoch}-{account_part(account)}" else None


def find_twin(orders: Iterable[PlacedOrder], ids: OrderIds, since: datetime) -> Twin | None:
    """The foreign epoch with the newest order submitted after `since`, if any."""
    newest: dict[str, PlacedOrder] = {}
    counts: dict[str, int] = {}
    for order in orders:
        epoch = epoch_of(order.client_order_id, ids.account)
        if epoch is None or epoch == ids.epoch or order.submitted_at <= since:
            continue
        counts[epoch] = counts.get(epoch, 0) + 1
        if epoch not in newest or order.submitted_at > newest[epoch].submitted_at:
            newest[epoch] = order
    if not newest:
        return None
    epoch = max(newest, key=lambda e: newest[e].submitted_at)
    return Twin(epoch, newest[epoch], counts[epoch])


def twin_at(broker: Broker, ids: OrderIds, window_s: float, now: datetime) -> Twin | None:
    """The twin trading this account as of `now`, if any (a window of 0: never looked for)."""
    if window_s <= 0:
        return None
    since = now - timedelta(seconds=window_s)
    return find_twin(broker.recent_orders(since), ids, since)


def refuse_twin(broker: Broker, ids: OrderIds, window_s: float, now: datetime) -> None:
    """Return when no other database trades this account; else log and exit 75."""
    twin = twin_at(broker, ids, window_s, now)
    if twin is None:
        return
    order = twin.newest
    clear_in_s = round(max(0.0, window_s - (now - order.submitted_at).total_seconds()), 1)
    log.error(
        "worker.twin_detected",
        twin_epoch=twin.epoch,
        twin_client_order_id=order.client_order_id,
        twin_submitted_at=order.submitted_at.isoformat(),
        twin_orders=twin.orders,
        epoch=ids.epoch,
        window_s=window_s,
        clear_in_s=clear_in_s,
        exit_code=EX_TEMPFAIL,
        reason=f"another state database (order epoch {twin.epoch}, ours is {ids.epoch}) "
               f"trades account {ids.account}: its order {order.client_order_id} was "
               f"submitted at {order.submitted_at.isoformat()}, within twin_window_s; "
               "stop the host or state directory running it",
        next=f"stop the other host or state directory running account {ids.account}; if "
             f"that database was retired (moved aside), wait: the account starts by itself "
             f"once its newest order is older than {window_s:g} s (in {clear_in_s:g} s)",
    )
    sys.exit(EX_TEMPFAIL)
