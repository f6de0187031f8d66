"""A local Alpaca-compatible HTTP server (stdlib, 127.0.0.1, an ephemeral port).

It speaks the JSON of ../shared/design/ALPACA.md: the trading routes under /v2 (account,
positions, orders, orders:by_client_order_id, clock) and GET /v2/stocks/bars (paginated,
`next_page_token`). GET /v2/orders honours status (open, closed, all), after and until
(exclusive, on the submission time), direction (desc unless asc) and limit (50 unless
given, at most 500). Order times are wall-clock times (when the server took the order),
in UTC or, with `order_zone`, in that zone's offset. Every answer carries the
X-Ratelimit-* headers. Faults come from
`server.faults` (see faults.py). Nothing here sleeps: a stall waits on an Event that
`stop()` sets.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit
from zoneinfo import ZoneInfo

from alpaca_server.book import NEW_YORK, Account, Json, Refused, nano_stamp, ny_stamp, stamp
from alpaca_server.faults import ECHO_KEYS, Faults

ORDER_POST = "POST /v2/orders"
MAX_ORDERS_PAGE = 500  # GET /v2/orders: Alpaca's largest limit


class AlpacaServer:
    def __init__(self, key_id: str = "PKTESTKEY0000000001", secret: str = "s3cr3t-test-secret-0001",
                 page_size: int = 1000, rate_limit: int = 200, stall_s: float = 1.5) -> None:
        self.keys = (key_id, secret)
        self.account = Account()
        self.faults = Faults()
        self.page_size, self.rate_limit, self.stall_s = page_size, rate_limit, stall_s
        self.is_open = True
        # Fields merged into every answer of a kind ("order", "position", "account",
        # "clock"): how a test sends a value Alpaca may add one day (a new order status...)
        self.overrides: dict[str, Json] = {}
        self.order_zone: ZoneInfo | None = None  # e.g. NEW_YORK: order times at -05:00
        self.reset_in_s = 0.0  # how far ahead an injected 429's X-Ratelimit-Reset lies
        self.lock = threading.Lock()
        self.closing = threading.Event()
        self.requests: list[str] = []  # "METHOD /path", in arrival order
        self.posts: list[tuple[str, str]] = []  # (client_order_id, what the server did)
        self._window: tuple[int, int] = (0, 0)  # (minute, requests in it)
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def start(self) -> AlpacaServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.closing.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def rate_headers(self, limited: bool) -> dict[str, str]:
        now = time.time()
        minute = int(now // 60)
        with self.lock:
            count = self._window[1] + 1 if self._window[0] == minute else 1
            self._window = (minute, count)
        reset = now + self.reset_in_s if limited else (minute + 1) * 60
        remaining = 0 if limited else max(0, self.rate_limit - count)
        return {"X-Ratelimit-Limit": str(self.rate_limit),
                "X-Ratelimit-Remaining": str(remaining), "X-Ratelimit-Reset": str(int(reset))}

    # -- routes (called under self.lock) ----------------------------------------------------

    def route(self, method: str, path: str, query: dict[str, str], body: Json | None) -> Any:
        return self._override(path, self._route(method, path, query, body))

    def _override(self, path: str, payload: Any) -> Any:
        kind = path.removeprefix("/v2/").split("/")[0].split(":")[0].removesuffix("s")
        fields = self.overrides.get(kind)
        if not fields or payload is None:
            return payload
        items = payload if isinstance(payload, list) else [payload]
        for item in items:
            item.update(fields)
        return payload

    def _route(  # noqa: PLR0911 - one return per route reads as the routing table
        self, method: str, path: str, query: dict[str, str], body: Json | None
    ) -> Any:
        account = self.account
        account.settle()
        if method == "GET" and path == "/v2/account":
            return account.account_json()
        if method == "GET" and path == "/v2/positions":
            return account.positions_json()
        if method == "GET" and path == "/v2/orders":
            return self._orders(query)
        if method == "POST" and path == "/v2/orders":
            return self._post_order(body or {})
        if method == "GET" and path == "/v2/orders:by_client_order_id":
            order = account.orders.get(query.get("client_order_id", ""))
            if order is None:
                raise Refused(404, 40410000, "order not found")
            return order.json(self.order_zone)
        if method == "DELETE" and path.startswith("/v2/orders/"):
            account.cancel(path.rsplit("/", 1)[1])
            return None
        if method == "GET" and path == "/v2/clock":
            return self._clock()
        if method == "GET" and path == "/v2/stocks/bars":
            return self._bars(query)
        raise Refused(404, 40410000, f"no route {method} {path}")

    def _post_order(self, body: Json) -> Json:
        cid = str(body.get("client_order_id", ""))
        try:
            order = self.account.submit(body)
        except Refused as refused:
            self.posts.append((cid, f"{refused.status} {refused.message}"))
            raise
        self.posts.append((cid, "accepted"))
        return order.json(self.order_zone)

    def _orders(self, query: dict[str, str]) -> list[Json]:
        status = query.get("status", "open")
        after, until = _instant(query.get("after")), _instant(query.get("until"))
        orders = [o for o in self.account.orders.values()
                  if (status == "all" or (o.status == "new") == (status == "open"))
                  and (after is None or o.placed_at > after)
                  and (until is None or o.placed_at < until)]
        orders.sort(key=lambda o: o.placed_at, reverse=query.get("direction") != "asc")
        limit = min(int(query.get("limit", "50")), MAX_ORDERS_PAGE)
        return [o.json(self.order_zone) for o in orders[:limit]]

    def _clock(self) -> Json:
        wall = datetime.now(UTC)
        later = ny_stamp(wall + timedelta(hours=1))
        return {"timestamp": nano_stamp(wall, NEW_YORK), "is_open": self.is_open,
                "next_open": later, "next_close": later}

    def _bars(self, query: dict[str, str]) -> Json:
        account, interval = self.account, self.account.interval
        start = datetime.fromisoformat(query["start"]).astimezone(UTC)
        end = datetime.fromisoformat(query["end"]).astimezone(UTC)
        symbols = query["symbols"].split(",")
        account.advance(end + interval)
        found = account.market.bars_after({s: start for s in symbols}, end + interval)
        items = [(s, b) for s in sorted(found) for b in found[s]]
        if query.get("sort") == "desc":
            items = [(s, b) for s in sorted(found) for b in reversed(found[s])]
        return self._page(items, query, interval)

    def _page(self, items: list[Any], query: dict[str, str], interval: timedelta) -> Json:
        offset = int(query.get("page_token") or 0)
        size = min(int(query.get("limit") or self.page_size), self.page_size)
        page = items[offset: offset + size]
        bars: dict[str, list[Json]] = {}
        for symbol, bar in page:
            bars.setdefault(symbol, []).append({
                "t": stamp(bar.time - interval), "o": bar.open, "h": bar.high, "l": bar.low,
                "c": bar.close, "v": bar.volume, "n": 10, "vw": bar.close})
        more = offset + size < len(items)
        return {"bars": bars, "next_page_token": str(offset + size) if more else None,
                "symbol": None, "currency": "USD"}


def _instant(text: str | None) -> datetime | None:
    """An RFC 3339 query parameter (alpaca-py sends isoformat(), `+00:00`)."""
    return None if text is None else datetime.fromisoformat(text).astimezone(UTC)


def _handler(server: AlpacaServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        wbufsize = 1 << 16  # headers and body leave in one write: no Nagle/delayed-ACK stall

        def log_message(self, format: str, *args: Any) -> None:
            pass  # quiet: the tests read server.requests and server.posts instead

        def do_GET(self) -> None:
            self._serve("GET")

        def do_POST(self) -> None:
            self._serve("POST")

        def do_DELETE(self) -> None:
            self._serve("DELETE")

        def _serve(self, method: str) -> None:
            parts = urlsplit(self.path)
            query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length)) if length else None
            route = f"{method} {parts.path}"
            with server.lock:
                server.requests.append(route)
            if (self.headers.get("APCA-API-KEY-ID"), self.headers.get("APCA-API-SECRET-KEY")) \
                    != server.keys:
                self._answer(401, {"code": 40110000, "message": "request is not authorized"})
                return
            fault = server.faults.draw(route)
            if fault in ("429", "500", "502", "503", "504", "drop") or fault in ECHO_KEYS:
                self._early(fault)
                return
            status, payload = self._process(method, parts.path, query, body, fault)
            self._late(fault, status, payload)

        def _process(self, method: str, path: str, query: dict[str, str], body: Json | None,
                     fault: str | None) -> tuple[int, Any]:
            with server.lock:
                try:
                    payload = server.route(method, path, query, body)
                except Refused as refused:
                    return refused.status, {"code": refused.code, "message": refused.message}
            if fault == "missing_bar" and payload and payload.get("bars"):
                payload["bars"] = {s: b[:-1] for s, b in payload["bars"].items()}
            if fault == "duplicate_bar" and payload and payload.get("bars"):
                payload["bars"] = {s: b + b for s, b in payload["bars"].items()}
            return (204 if payload is None else 200), payload

        def _early(self, fault: str) -> None:
            if fault == "drop":
                self._drop()
            elif fault in ECHO_KEYS:
                self._answer(ECHO_KEYS[fault], {"code": 40010000, "message": self._echo()})
            elif fault == "429":
                self._answer(429, {"code": 42910000, "message": "rate limit exceeded"}, True)
            else:
                self._answer(int(fault), {"code": 50010000, "message": f"fault {fault}"})

        def _late(self, fault: str | None, status: int, payload: Any) -> None:
            if fault == "504_after_accept" and status == 200:
                self._answer(504, {"code": 50410000, "message": "gateway timeout"})
            elif fault == "422_after_accept" and status == 200:
                self._answer(422, {"code": 40010001,
                                   "message": "client_order_id must be unique"})
            elif fault == "drop_after_accept":
                self._drop()
            else:
                if fault == "stall":
                    server.closing.wait(server.stall_s)
                self._answer(status, payload)

        def _answer(self, status: int, payload: Any, limited: bool = False) -> None:
            data = b"" if payload is None else json.dumps(payload).encode()
            try:
                self.send_response(status)
                for name, value in server.rate_headers(limited).items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except OSError:
                pass  # the client gave up (its timeout): that is the point of a stall

        def _echo(self) -> str:
            """A careless gateway's error: the keys it was sent, the first one just before
            character 200, then pieces of them."""
            key_id, secret = self.headers.get("APCA-API-KEY-ID", ""), self.headers.get(
                "APCA-API-SECRET-KEY", "")
            return (f"{'x' * 191}{key_id} was sent with {secret}; "
                    f"key {key_id[:7]}... secret {secret[3:11]}... {'y' * 300}")

        def _drop(self) -> None:
            self.close_connection = True
            with contextlib.suppress(OSError):  # already gone
                self.connection.shutdown(socket.SHUT_RDWR)

    return Handler
