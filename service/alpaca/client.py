"""The one module that imports alpaca-py: its clients, made safe for a daemon.

alpaca-py sets no HTTP timeout and retries every method, POST /orders included, on 429 and
504, sleeping 3 s between tries (ALPACA.md). Here:

- every request goes through a `requests` session that adds a timeout and draws from the
  account's shared `RequestBudget` (which also honours X-Ratelimit-Reset);
- alpaca-py's own retries are switched off, so a POST is sent exactly once per call;
- reads get our own bounded retries with jittered exponential backoff;
- answers stay raw JSON (`raw_data=True`): `service.alpaca.mapping` reads only the fields we use,
  so a field Alpaca adds or drops (the PDT fields in 2026) cannot break parsing.

Failures come out as `AlpacaHttpError` (an HTTP answer; `AlpacaAuthError` when the keys
are refused) or `AlpacaTransportError` (no answer: timeout, dropped connection, unreadable
body). An error body is scrubbed of every piece of the keys BEFORE it is cut to size, and
the body of an authentication failure is never kept at all.
"""

from __future__ import annotations

import json
import random
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

import requests
import structlog
from alpaca.common.enums import Sort
from alpaca.common.exceptions import APIError
from alpaca.data.enums import DataFeed
from alpaca.data.historical.stock import StockHistoricalDataClient
from alpaca.data.requests import StockBarsRequest
from alpaca.data.timeframe import TimeFrame, TimeFrameUnit
from alpaca.trading.client import TradingClient
from alpaca.trading.enums import OrderSide, QueryOrderStatus, TimeInForce
from alpaca.trading.requests import GetOrdersRequest, MarketOrderRequest

from service.alpaca.request_budget import RequestBudget
from service.broker.base import BrokerAuthError, BrokerError
from service.redaction import scrub
from service.secrets import ApiKeys

log = structlog.get_logger("service.broker")
T = TypeVar("T")
Json = dict[str, Any]
RETRYABLE_STATUS = frozenset({429, 500, 502, 503, 504})
ORDER_REFUSAL_CODE = 40310000  # 403 for buying power, qty or a wash trade: not the keys
MAX_MESSAGE = 200
_PAUSE = threading.Event()  # never set: an interruptible pause between read retries


class AlpacaHttpError(BrokerError):
    """Alpaca answered with an HTTP error; `code`/`message` from its JSON body if any."""

    def __init__(self, what: str, status: int, code: int | None, message: str) -> None:
        self.status, self.code, self.message = status, code, message
        super().__init__(f"{what}: HTTP {status} code={code} {message}")


class AlpacaAuthError(AlpacaHttpError, BrokerAuthError):
    """401, or a 403 that is not an order refusal: Alpaca refused the keys."""


class AlpacaTransportError(BrokerError):
    """No usable answer: timeout, refused or dropped connection, or a body that is not JSON."""


@dataclass(frozen=True)
class HttpPolicy:
    timeout_s: float = 10.0
    read_attempts: int = 4
    backoff_s: float = 0.5
    max_backoff_s: float = 8.0


class BudgetedSession(requests.Session):
    """A session whose every request carries a timeout and draws from the budget."""

    def __init__(self, budget: RequestBudget, timeout_s: float) -> None:
        super().__init__()
        self.budget, self.timeout_s = budget, timeout_s

    def request(self, method: str | bytes, url: str | bytes, *args: Any,
                **kwargs: Any) -> requests.Response:
        kwargs.setdefault("timeout", self.timeout_s)
        self.budget.acquire()
        response = super().request(method, url, *args, **kwargs)  # type: ignore[arg-type]
        self.budget.note(response.status_code, response.headers)
        return response


def _quiet(client: Any, session: BudgetedSession) -> Any:
    """Give an alpaca-py client our session and switch its own retries off."""
    client._session = session  # private, checked against alpaca-py 0.44 (see tests/alpaca)
    client._retry = 0
    client._retry_codes = []
    return client


class AlpacaClient:
    """Trading and market-data calls for one account, answering raw JSON."""

    def __init__(
        self,
        keys: ApiKeys,
        budget: RequestBudget,
        policy: HttpPolicy,
        trading_url: str | None = None,
        data_url: str | None = None,
        rng: random.Random | None = None,
        pause: Callable[[float], object] = _PAUSE.wait,
    ) -> None:
        session = BudgetedSession(budget, policy.timeout_s)
        self._trading = _quiet(
            TradingClient(keys.key_id, keys.secret, paper=True, raw_data=True,
                          url_override=trading_url), session)
        self._data = _quiet(
            StockHistoricalDataClient(keys.key_id, keys.secret, raw_data=True,
                                      url_override=data_url), session)
        self._policy, self._rng, self._pause = policy, rng or random.Random(), pause
        self._keys = (keys.key_id, keys.secret)

    # -- orders: sent once, never retried here ------------------------------------------

    def submit_market_order(self, symbol: str, qty: float, side: str, cid: str) -> Json:
        request = MarketOrderRequest(symbol=symbol, qty=qty, side=OrderSide(side),
                                     time_in_force=TimeInForce.DAY, client_order_id=cid)
        return self._call(f"POST /v2/orders {cid}", lambda: self._trading.submit_order(request))

    def cancel_order(self, order_id: str) -> None:
        self._call(f"DELETE /v2/orders/{order_id}",
                   lambda: self._trading.cancel_order_by_id(order_id))

    # -- reads: retried ------------------------------------------------------------------

    def order_by_client_id(self, cid: str) -> Json | None:
        """The order, or None on 404 (Alpaca has no order with this id)."""
        try:
            order: Json = self._read(
                f"GET order {cid}", lambda: self._trading.get_order_by_client_id(cid))
            return order
        except AlpacaHttpError as error:
            if error.status == 404:
                return None
            raise

    def account(self) -> Json:
        return self._read("GET /v2/account", self._trading.get_account)

    def positions(self) -> list[Json]:
        return self._read("GET /v2/positions", self._trading.get_all_positions)

    def open_orders(self) -> list[Json]:
        request = GetOrdersRequest(status=QueryOrderStatus.OPEN, limit=500)
        return self._read("GET /v2/orders", lambda: self._trading.get_orders(request))

    def orders_submitted(self, after: datetime, until: datetime | None, limit: int) -> list[Json]:
        """One page: the orders of any status submitted inside (after, until), newest
        first, at most `limit` (Alpaca's largest page is 500)."""
        request = GetOrdersRequest(status=QueryOrderStatus.ALL, after=after, until=until,
                                   limit=limit, direction=Sort.DESC)
        what = f"GET /v2/orders status=all after {after.isoformat()}"
        return self._read(what, lambda: self._trading.get_orders(request))

    def clock(self) -> Json:
        return self._read("GET /v2/clock", self._trading.get_clock)

    def bars(self, symbols: list[str], timeframe: tuple[int, str], start: datetime,
             end: datetime, feed: str, limit: int | None = None,
             newest_first: bool = False) -> dict[str, list[Json]]:
        """Bars per symbol with start <= t <= end (t is the bar's START), every page."""
        frame = TimeFrame(timeframe[0], TimeFrameUnit(timeframe[1]))
        request = StockBarsRequest(
            symbol_or_symbols=symbols, timeframe=frame,
            start=start, end=end, limit=limit, feed=DataFeed(feed),
            sort=Sort.DESC if newest_first else Sort.ASC)
        what = f"GET /v2/stocks/bars {','.join(symbols)} {start.isoformat()}..{end.isoformat()}"
        return self._read(what, lambda: self._data.get_stock_bars(request))

    def _read(self, what: str, call: Callable[[], T]) -> T:
        attempts = self._policy.read_attempts
        for attempt in range(1, attempts + 1):
            try:
                return self._call(what, call)
            except (AlpacaHttpError, AlpacaTransportError) as error:
                status = getattr(error, "status", None)
                if attempt == attempts or (status is not None and status not in RETRYABLE_STATUS):
                    raise
                wait_s = self._backoff(attempt)
                log.warning("alpaca.retry", call=what, attempt=attempt, wait_s=wait_s,
                            reason=str(error))
                self._pause(wait_s)
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _call(self, what: str, call: Callable[[], T]) -> T:
        """Run one alpaca-py call; translate its failures into ours, keys scrubbed."""
        try:
            return call()
        except APIError as error:
            raise _http_error(what, error, self._keys) from None
        except (requests.RequestException, ValueError) as error:
            # ValueError: a body that is not JSON, or not the shape alpaca-py expects
            text = scrub(f"{what}: {type(error).__name__}: {error}", self._keys)
            raise AlpacaTransportError(text) from None

    def _backoff(self, attempt: int) -> float:
        """Full jitter: uniform in [0, min(max, base * 2^(attempt-1))]."""
        ceiling = min(self._policy.max_backoff_s, self._policy.backoff_s * 2 ** (attempt - 1))
        return round(self._rng.uniform(0.0, ceiling), 4)


def _http_error(what: str, error: APIError, keys: tuple[str, str]) -> AlpacaHttpError:
    status = error.status_code or 0
    code, message = _error_body(error)
    if status == 401 or (status == 403 and code != ORDER_REFUSAL_CODE):
        # its body is never kept: a gateway may echo the keys it refused
        return AlpacaAuthError(what, status, code, "Alpaca refused the account's API keys "
                               "(answer withheld); check that account's keys")
    return AlpacaHttpError(what, status, code, scrub(message, keys)[:MAX_MESSAGE])


def _error_body(error: APIError) -> tuple[int | None, str]:
    """alpaca-py's .code/.message raise on a body that is not JSON: parse it ourselves.
    Whole: the caller scrubs the keys out before cutting it to size."""
    text = str(error)
    try:
        body = json.loads(text)
    except ValueError:
        return None, text
    if not isinstance(body, dict):
        return None, text
    code = body.get("code")
    return (code if isinstance(code, int) else None), str(body.get("message", ""))
