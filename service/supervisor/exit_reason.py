"""Why a worker ended, in words: its exit code's meaning or the signal that killed it,
with the last lines it wrote to stderr, for the supervisor's `worker.exited` event."""

from __future__ import annotations

import signal
from typing import Any

from service.exit_codes import EX_CONFIG, EX_OK, EX_SOFTWARE, EX_TEMPFAIL
from service.worker.fault_points import EXIT_FAULT

MEANINGS = {
    EX_OK: "clean stop",
    1: "uncaught exception (a traceback, if any, is in stderr_tail)",
    EX_SOFTWARE: "gave up (EX_SOFTWARE): see the worker's worker.failed event",
    EX_TEMPFAIL: "temporary refusal (EX_TEMPFAIL: state not writable now, or another host "
                 "trades the account): it is tried again",
    EX_CONFIG: "bad configuration or unusable state (EX_CONFIG): restarting cannot help",
    EXIT_FAULT: "injected fault exit (test only)",
}


def exit_fields(code: int, stderr_tail: list[str]) -> dict[str, Any]:
    """`exit_code` or `signal`, a `reason` and the `stderr_tail`, for `worker.exited`."""
    if code < 0:
        name = _signal_name(-code)
        return {"signal": name, "reason": f"killed by {name}", "stderr_tail": stderr_tail}
    return {"exit_code": code, "reason": exit_meaning(code), "stderr_tail": stderr_tail}


def exit_meaning(code: int) -> str:
    known = MEANINGS.get(code)
    if known is not None:
        return known
    return f"exit code {code}: not one of ours (a native crash or a start-up failure?); " \
        "see stderr_tail"


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:  # a real-time or platform-specific signal without a name
        return f"signal {number}"
