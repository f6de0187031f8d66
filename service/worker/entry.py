"""What the supervisor needs to start a worker, and nothing heavier: the worker's spec and
the entry point it names to multiprocessing.

With the spawn start method the child imports the entry point's module by name and the
supervisor only names it; so that the supervisor does not load the worker's whole stack
(numpy, the model, the backends: about 0.25 s of CPU and tens of MB at every start) only
to name it, the entry point here imports that stack in the child, when it runs.
"""

from __future__ import annotations

from multiprocessing.connection import Connection

from service.worker.spec import WorkerSpec

__all__ = ["WorkerSpec", "worker_main"]


def worker_main(spec: WorkerSpec, conn: Connection, stdout: Connection, stderr: Connection) -> None:
    """The worker process's entry point (service.worker.process.worker_main)."""
    from service.worker.process import worker_main as run  # noqa: PLC0415 - in the child

    run(spec, conn, stdout, stderr)
