"""Celery's own log lines, kept to the news: no heartbeats at INFO, no task arguments, no
warnings about a result backend we do not have.

Standard library only, like flashjudge.logctx: the judge workers and the control worker both
install it, and neither may import the other's side. What it changes:

- the `flashjudge.worker_status` heartbeat, received and run every few seconds per worker, is
  logged at DEBUG (a worker's liveness is on the TA page and in /readyz, not in the log);
- "Task ... received/succeeded" lines keep the task's name and id but not its arguments: a
  judge payload carries every source file, a result every test;
- "Failed to mark task ... as revoked in backend" is DEBUG: flashjudge runs without a result
  backend on purpose, so every revoke (rejudge, supersede, cancel) would warn once per worker.
"""

from __future__ import annotations

import logging

from flashjudge.contract import Task

QUIET_LOGGERS = ("celery.worker.strategy", "celery.app.trace", "celery.worker.control")
ROUTINE_TASKS = frozenset({str(Task.WORKER_STATUS)})  # tasks whose lines are DEBUG
NO_BACKEND_WARNING = "Failed to mark task %s as revoked in backend"  # celery.worker.control
HIDDEN_KEYS = ("args", "kwargs")  # keys of Celery's `data` extra that carry task arguments


class QuietCeleryFilter(logging.Filter):
    """Demote routine Celery records to DEBUG and strip task arguments from the rest."""

    def filter(self, record: logging.LogRecord) -> bool:
        data = getattr(record, "data", None)
        routine = (isinstance(data, dict) and data.get("name") in ROUTINE_TASKS) or (
            isinstance(record.msg, str) and record.msg.startswith(NO_BACKEND_WARNING))
        if isinstance(data, dict):
            record.data = {k: v for k, v in data.items() if k not in HIDDEN_KEYS}
        if not routine:
            return True
        record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        return logging.getLogger(record.name).isEnabledFor(logging.DEBUG)


def quiet_celery_logs() -> None:
    """Install the filter on Celery's task loggers (idempotent). Call it where a worker process
    sets up its logging: the loggers are process-wide, and pool children inherit them."""
    for name in QUIET_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, QuietCeleryFilter) for f in logger.filters):
            logger.addFilter(QuietCeleryFilter())
