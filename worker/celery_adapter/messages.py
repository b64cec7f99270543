"""Sending messages to the control side: the only way results leave a judge worker.

Workers hold no database credentials; every result, progress event and heartbeat is a task on the
`control` queue, named in flashjudge.contract.Task and consumed by app/control/tasks.py. Outcomes
(a result, a failure report) are sent patiently, riding out a broker restart; progress events are
sent once and may be lost (the result carries everything they did).
"""

from __future__ import annotations

import logging
from typing import Any

from celery import Celery

from flashjudge.contract import Attempt, Queue, Task

log = logging.getLogger(__name__)
# about a minute of reconnecting (a broker restart takes seconds) before an outcome is given up:
# then the attempt's claim goes unreported and the sweeper starts a new attempt
PATIENT = {"max_retries": 40, "interval_start": 0.25, "interval_step": 0.5, "interval_max": 2.0}


def send(app: Celery, task: Task, *args: Any, patient: bool = False) -> None:
    """Send one control message (raises when the broker stays away: callers decide what then)."""
    options: dict[str, Any] = {"retry": True, "retry_policy": PATIENT} if patient else {}
    app.send_task(str(task), args=list(args), queue=str(Queue.CONTROL), **options)


def send_about(app: Celery, task: Task, attempt: Attempt, body: Any,
               patient: bool = False) -> None:
    """A message about one attempt: (submission id, attempt, body, attempt key)."""
    send(app, task, attempt.submission_id, attempt.attempt, body, attempt.key or None,
         patient=patient)


def send_progress(app: Celery, attempt: Attempt, event: dict[str, Any]) -> None:
    """A progress event, best effort: a broker hiccup must not stop a judging."""
    try:
        send_about(app, Task.RECORD_PROGRESS, attempt, event)
    except Exception as exc:  # noqa: BLE001 - the final result carries every test anyway
        log.warning("progress event %s not sent: %s", event.get("type"), exc)
