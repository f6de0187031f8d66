"""Adapters wired to the local server, with fast timeouts and no real pauses."""

from __future__ import annotations

import random
from datetime import timedelta

from alpaca_server import AlpacaServer
from service.alpaca.broker import AlpacaBroker
from service.alpaca.client import AlpacaClient, HttpPolicy
from service.alpaca.market import AlpacaMarket
from service.alpaca.request_budget import RequestBudget
from service.secrets import ApiKeys

FAST = HttpPolicy(timeout_s=0.5, read_attempts=4, backoff_s=0.01, max_backoff_s=0.05)


def client_for(server: AlpacaServer, policy: HttpPolicy = FAST,
               budget: RequestBudget | None = None) -> AlpacaClient:
    return AlpacaClient(ApiKeys(*server.keys), budget or RequestBudget(10_000), policy,
                        trading_url=server.url, data_url=server.url, rng=random.Random(1))


def broker_for(server: AlpacaServer, **kwargs: object) -> AlpacaBroker:
    return AlpacaBroker(client_for(server), **kwargs)  # type: ignore[arg-type]


def market_for(server: AlpacaServer) -> AlpacaMarket:
    return AlpacaMarket(client_for(server), timedelta(minutes=1))
