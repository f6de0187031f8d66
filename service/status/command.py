"""`regime-trader status`: print the status document, as text or JSON; the exit code says
whether everything is healthy."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from service.status.document import status_document
from service.status.render import render_text

if TYPE_CHECKING:
    from service.config_loader import LoadedConfig
    from service.config_summary import ConfigSummary

EXIT_NOT_HEALTHY = 1  # printed, and the daemon is not running or an account is not ok


def run_status(
    config: LoadedConfig | ConfigSummary,
    state_dir: Path,
    as_json: bool,
    out: TextIO,
    live: bool = False,
    now: datetime | None = None,
) -> int:
    """Print the document; 0 when it is `healthy`, else EXIT_NOT_HEALTHY."""
    doc = status_document(config, state_dir, now or datetime.now(UTC), live=live)
    out.write(json.dumps(doc, indent=2) + "\n" if as_json else render_text(doc))
    out.flush()
    return 0 if doc["healthy"] else EXIT_NOT_HEALTHY
