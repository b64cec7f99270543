"""Celery's lines in a worker's log: heartbeats only at DEBUG, no task arguments, no warning per
revoke about the result backend flashjudge does not use."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest

from flashjudge.celery_logging import quiet_celery_logs
from flashjudge.logctx import configure_json_logging

RECEIVED = "Task %(name)s[%(id)s] received"


@pytest.fixture
def log_lines() -> Iterator[io.StringIO]:
    """JSON logs at INFO into a buffer, as a judge worker has them, with the filter installed."""
    root, saved = logging.getLogger(), (logging.getLogger().handlers[:], logging.getLogger().level)
    stream = io.StringIO()
    configure_json_logging("INFO", stream)
    quiet_celery_logs()
    quiet_celery_logs()  # idempotent: one filter per logger
    yield stream
    root.handlers, root.level = saved
    for name in ("celery.worker.strategy", "celery.app.trace", "celery.worker.control"):
        logging.getLogger(name).filters.clear()


def received(name: str, kwargs: str) -> None:
    context = {"id": "abc", "name": name, "args": "[]", "kwargs": kwargs, "eta": None}
    logging.getLogger("celery.worker.strategy").info(RECEIVED, context, extra={"data": context})


def test_heartbeats_are_not_logged_at_info(log_lines: io.StringIO) -> None:
    received("flashjudge.worker_status", "{'status': {...}}")
    assert log_lines.getvalue() == ""
    assert len(logging.getLogger("celery.worker.strategy").filters) == 1


def test_task_lines_keep_the_name_but_not_the_arguments(log_lines: io.StringIO) -> None:
    received("flashjudge.judge", "{'payload': {'files': {'hw4.cu': 'I2luY2x1ZGU...'}}}")
    line = json.loads(log_lines.getvalue())
    assert line["msg"] == "Task flashjudge.judge[abc] received" and line["level"] == "INFO"
    assert line["data"] == {"id": "abc", "name": "flashjudge.judge", "eta": None}
    assert "I2luY2x1ZGU" not in log_lines.getvalue()


def test_a_revoke_without_a_result_backend_does_not_warn(log_lines: io.StringIO) -> None:
    logging.getLogger("celery.worker.control").warning(
        "Failed to mark task %s as revoked in backend: %s", "abc", "No result backend")
    logging.getLogger("celery.worker.control").warning("Terminating %s (%s)", "abc", "TERM")
    lines = log_lines.getvalue().splitlines()
    assert [json.loads(x)["msg"] for x in lines] == ["Terminating abc (TERM)"]
