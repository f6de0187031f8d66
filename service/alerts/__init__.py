"""Alerts: a JSON POST to the operator's webhook when an account needs a person.

`rules.py` turns log events into messages (pure: time comes in with the events and the
calls), `pnl.py` makes the daily P&L message from the accounts' equity histories,
`webhook.py` posts them from its own thread, and `observer.py` wires the three to the
supervisor's event hub. See docs/operations.md, "Alerts".
"""
