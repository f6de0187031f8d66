"""`status --live`: cash, equity, positions and open orders asked of the broker itself.

The broker is built the way the worker builds it (service.worker.assembly): Alpaca with
the account's keys, or the simulated broker over its book in the state directory, valued
at the last update's bar (the market time the worker last saw; a simulated market has no
"now" of its own). Its heavy imports (numpy, alpaca-py) happen here, for --live alone.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from service.config_loader import LoadedConfig
from service.state.paths import sim_broker_path
from service.state.status_reads import SNAPSHOT_ERRORS, Holding
from service.status.accounts import BrokerView
from service.types import BrokerSnapshot


class LiveUnavailableError(Exception):
    """The broker could not be asked; `status` falls back to the last checkpoint."""


def broker_view(
    config: LoadedConfig, state_dir: Path, account: str, market_time: datetime
) -> BrokerView:
    """The broker's view of `account` now; LiveUnavailableError with the reason otherwise."""
    # Imported here: the worker stack (numpy, alpaca-py) only for --live.
    from service.broker.base import BrokerError  # noqa: PLC0415
    from service.market.base import MarketDataError  # noqa: PLC0415
    from service.secrets import SecretsError  # noqa: PLC0415
    from service.worker.assembly import build_broker, build_market  # noqa: PLC0415

    book = sim_broker_path(state_dir, account)
    if config.settings.broker.kind == "sim" and not book.exists():
        raise LiveUnavailableError(f"no simulated broker book at {book}")
    errors: tuple[type[Exception], ...] = (BrokerError, MarketDataError, SecretsError,
                                           *SNAPSHOT_ERRORS)
    try:
        market = build_market(config, account)
        broker = build_broker(config, account, state_dir, market, lambda: market_time)
        try:
            snapshot = broker.snapshot()
        finally:
            broker.close()
    except errors as error:
        raise LiveUnavailableError(f"{type(error).__name__}: {error}") from None
    return view_of(snapshot)


def view_of(snapshot: BrokerSnapshot) -> BrokerView:
    holdings = tuple(Holding(p.symbol, p.qty, p.avg_entry_price)
                     for _, p in sorted(snapshot.positions.items()))
    orders = tuple({"client_order_id": o.client_order_id, "seq": None, "symbol": o.symbol,
                    "side": None if o.side is None else o.side.value, "qty": None,
                    "status": o.status.value, "filled_qty": o.filled_qty}
                   for o in snapshot.open_orders)
    return BrokerView("broker", snapshot.cash, snapshot.equity, holdings, orders)
