"""Everything that talks to Alpaca: the HTTP client and its request budget, the mapping
between Alpaca's JSON and our types, the market data source and the broker. alpaca-py is
imported here and nowhere else. The guard against live endpoints is `service.live_guard`:
settings validation calls it, and settings must not import this package (market -> settings
would close a cycle)."""
