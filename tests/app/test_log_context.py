"""The service's log lines about a submission carry its id: the API's acceptance and each control
task that records a worker's message (so one grep follows a submission from start to verdict)."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest

from app.control import tasks
from app.db.models import Submission
from flashjudge.logctx import json_handler
from tests.app.api.test_submissions_api import submit


@pytest.fixture
def json_lines() -> Iterator[io.StringIO]:
    """A JSON-lines handler on the root logger, beside whatever the app installs at start-up."""
    root = logging.getLogger()
    buffer = io.StringIO()
    handler = json_handler(buffer)
    saved_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    yield buffer
    root.removeHandler(handler)
    root.setLevel(saved_level)


def records(buffer: io.StringIO, logger: str) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in buffer.getvalue().splitlines()]
    return [line for line in lines if line["logger"] == logger]


def test_the_api_logs_an_accepted_submission_under_its_id(client, student, json_lines) -> None:
    sub_id = submit(client, student).json()["id"]
    (accepted,) = records(json_lines, "app.api.submissions")
    assert accepted["submission_id"] == str(sub_id)
    assert accepted["msg"].startswith("accepted: c-program from alice")


def test_control_tasks_log_under_the_submission_they_record(db, student, control_env,
                                                             json_lines) -> None:
    sub = Submission(user_id=student.id, language="c-program", suite="hw4-mini",
                     status="running", attempt=2, job_key="live")
    db.add(sub)
    db.commit()
    # messages of an older attempt: each task logs that it ignores them, under the submission
    tasks.record_progress(sub.id, 1, {"type": "started"}, "old")
    tasks.record_result(sub.id, 1, {"compile": {"ok": True}, "tests": []}, "old")
    tasks.record_failure(sub.id, 1, "worker lost", "old")
    tasks.record_diagnosis(sub.id, 1, {"test_id": "t01"}, "old")
    ignored = [*records(json_lines, "app.submissions.recording"),
               *records(json_lines, "app.submissions.feedback")]
    assert [line["msg"].split(" for ")[0] for line in ignored] == [
        "ignoring stale message"] * 3 + ["ignoring diagnosis"]
    assert {line["submission_id"] for line in ignored} == {str(sub.id)}
