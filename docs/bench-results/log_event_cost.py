"""What one log event costs a worker (issue 14, item 4; thirty-eighth session):
`python docs/bench-results/log_event_cost.py [forward|plain]` logs 100 `order.submitted`
events seven times through the worker's own logging (service.logs.configure_logging, JSON
lines to a pipe) and, with `forward` (the default, as a worker runs), the worker's
forwarding of each event to the supervisor over its control pipe
(service.worker.process.Heartbeat.forward); a forked process drains both pipes, as the
supervisor does. Prints microseconds per event for each of the seven passes. `bench
stages` captures its trader's events in memory (structlog.testing.capture_logs), so its
orders stage does not pay this; a worker pays it twice per order (submitted, resolved)."""

import multiprocessing as mp
import os
import sys
import threading
import time

import structlog

from service.event_tap import listen
from service.logs import configure_logging
from service.types import OrderIntent, Side
from service.worker.order_submission import _intent_fields
from service.worker.process import Heartbeat


def drain(fd: int, conn: "mp.connection.Connection") -> None:
    """The supervisor's side: read the lines and the events until both pipes close."""
    threading.Thread(target=lambda: [None for _ in iter(lambda: os.read(fd, 65536), b"")],
                     daemon=True).start()
    try:
        while True:
            conn.recv()
    except EOFError:
        pass


def main() -> None:
    forward = (sys.argv[1] if len(sys.argv) > 1 else "forward") == "forward"
    events, control = mp.Pipe()
    read, write = os.pipe()
    if os.fork() == 0:
        control.close()
        os.close(write)
        drain(read, events)
        os._exit(0)
    events.close()
    os.close(read)
    configure_logging("info", "json", os.fdopen(write, "w"), account="alpha")
    if forward:
        listen(Heartbeat(control).forward)
    log = structlog.get_logger("service.worker").bind()
    intents = [OrderIntent(f"rt-alpha-e1-{i}-S{i:04d}", f"S{i:04d}", Side.BUY, 3.0)
               for i in range(100)]
    passes = []
    for _ in range(7):
        started = time.perf_counter()
        for intent in intents:
            log.info("order.submitted", **_intent_fields(intent), status="pending")
        passes.append(1e6 * (time.perf_counter() - started) / len(intents))
    print(f"{'forward' if forward else 'plain'}: us per event",
          " ".join(f"{us:.1f}" for us in passes))


if __name__ == "__main__":
    main()
