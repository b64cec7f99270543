"""What a judge worker says before it can take jobs: `flashjudge worker` announces each worker
process it is about to start ("starting (preflight)", then "starting (connecting to the broker)")
as a heartbeat with a state, so /readyz names a worker that is coming instead of saying none is
there. The process's own first heartbeat (state "") follows as soon as it can take jobs
(worker/celery_adapter/heartbeat.py, at the pool process's start), and replaces the row.

Best effort: a broker that is away now is the broker check's to report, never a reason not to
start the workers.
"""

from __future__ import annotations

import logging
import os
import socket
from dataclasses import dataclass

from flashjudge.contract import Task, WorkerStatus

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Coming:
    """One worker process the supervisor is about to start."""

    name: str  # its FLASHJUDGE_WORKER_NAME, e.g. "gpu0" (the heartbeat's hostname prefix)
    queues: str  # what it will consume, e.g. "gpu"
    gpu: str  # its GPU model, or "cpu"

    def status(self, state: str) -> WorkerStatus:
        """Its heartbeat while not taking jobs: no languages yet, the supervisor's pid."""
        return WorkerStatus(hostname=f"{self.name}@{socket.gethostname()}", gpu=self.gpu,
                            queues=self.queues, busy=False, languages=[], pid=os.getpid(),
                            state=state)


def announce(coming: list[Coming], state: str) -> bool:
    """Send each one's status with `state`; False when the broker could not be reached."""
    from worker.celery_adapter.app import celery_app
    from worker.celery_adapter.messages import send

    try:
        app = celery_app()
        for worker in coming:
            send(app, Task.WORKER_STATUS, worker.status(state).to_dict())
    except Exception as exc:  # noqa: BLE001 - best effort: the workers start anyway
        log.info("could not announce the workers as %s: %s", state, exc)
        return False
    return True
