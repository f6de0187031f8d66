"""The supervisor's read-only HTTP endpoint: the dashboard, /metrics, /healthz, /api/status.

Off unless `[http] listen` or `run --http ADDR` names an address; loopback unless
`[http] allow_remote = true` (service/settings_ops.py). `server.py` serves `app.py` (one
WSGI application) with the standard library's WSGI server; `metrics.py` keeps the
Prometheus metrics from the log events; `health.py` is /healthz's rule; the page and its
script are in `static/`. The supervisor's side is service/supervisor/http_endpoint.py.
docs/http.md is the operator's page.
"""
