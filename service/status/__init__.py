"""`regime-trader status`: whether the daemon runs, and per account its worker's state,
last update, money, positions beside targets, open orders and last error (docs/status.md).

`status_document` builds the JSON object (`status --json`, the HTTP endpoint's
/api/status); `run_status` prints it. Reads only, and light: the standard library, the
loaded configuration and the state package; the broker stack loads for --live alone.
"""

from service.status.command import EXIT_NOT_HEALTHY, run_status
from service.status.document import status_document

__all__ = ["EXIT_NOT_HEALTHY", "run_status", "status_document"]
