"""Sending messages to the control side: the only way results leave a judge worker.

Workers hold no database credentials; every result, progress event and heartbeat is a task on the
`control` queue, named in flashjudge.contract.Task and consumed by app/control_tasks.py.
"""

from __future__ import annotations

from typing import Any

from celery import Celery

from flashjudge.contract import Attempt, Queue, Task


def send(app: Celery, task: Task, *args: Any) -> None:
    """Send one control message (raises when the broker is away: callers decide what then)."""
    app.send_task(str(task), args=list(args), queue=str(Queue.CONTROL))


def send_about(app: Celery, task: Task, attempt: Attempt, body: Any) -> None:
    """A message about one attempt: (submission id, attempt, body, attempt key)."""
    send(app, task, attempt.submission_id, attempt.attempt, body, attempt.key or None)
