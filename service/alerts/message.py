"""The alert message: what the webhook receives, as one JSON object.

    {"kind": "parked", "account": "alpha", "at": "2026-12-01T15:32:58.986520Z",
     "summary": "alpha is parked: ...", "details": {...}, "text": "regime-trader: ..."}

`text` repeats the summary for Slack-compatible webhooks, which show that field.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Kind = Literal["parked", "restart_budget", "keys_refused", "unconverged", "daily_pnl"]


@dataclass(frozen=True)
class Alert:
    kind: Kind
    account: str | None  # None: about the whole service (the global budget, the daily P&L)
    at: str  # ISO 8601 UTC: when it happened (the event's timestamp)
    summary: str  # one line for a person
    details: dict[str, Any] = field(default_factory=dict)

    def document(self) -> dict[str, Any]:
        return {"kind": self.kind, "account": self.account, "at": self.at,
                "summary": self.summary, "details": self.details,
                "text": f"regime-trader: {self.summary}"}
