"""The judge worker's issue-6 adapter: shipping the .ncu-rep, the diagnosis message, and the
count of waiting judgings that a profile gives way to."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from celery import Celery

from tests.app.utils.feedback_payloads import judge_result
from tests.embedded_broker import embedded_broker
from worker.celery_adapter import tasks
from worker.pipeline import JudgeRequest


def test_a_report_is_shipped_as_base64_unless_it_is_too_large(tmp_path: Path, monkeypatch):
    report = tmp_path / "t03-profile.ncu-rep"
    report.write_bytes(b"\x00ncu" * 100)
    data, error = tasks.shipped_report(str(report))
    assert error is None and data is not None and base64.b64decode(data) == report.read_bytes()
    monkeypatch.setattr(tasks, "MAX_REPORT_BYTES", 100)
    data, error = tasks.shipped_report(str(report))
    assert data is None and error is not None and "over" in error and "not kept" in error
    assert tasks.shipped_report(None) == (None, None)


def test_only_failed_gpu_submissions_get_a_diagnosis_message():
    request = JudgeRequest("cuda-program", {"hw4.cu": b"int main() { return 1; }\n"},
                           "hw4-mini", None, None)
    assert tasks.diagnosis_of(request, judge_result("cuda-program", 0.4)) is None
    assert tasks.diagnosis_of(request, judge_result("c-program", 0.4, ("t02",))) is None


@pytest.mark.skipif(Path("/dev/nvidia0").exists(), reason="with a GPU the diagnosis runs")
def test_a_diagnosis_that_cannot_run_says_why_instead_of_never_coming():
    """On a worker without a usable GPU the page must still stop saying 'running diagnosis'."""
    request = JudgeRequest("cuda-program", {"hw4.cu": b"int main() { return 1; }\n"},
                           "hw4-mini", None, None)
    message = tasks.diagnosis_of(request, judge_result("cuda-program", 0.4, ("t02",)))
    assert message is not None and message["test_id"] == "t02"
    assert "GPU device node" in message["error"] and message["reports"] == []


def test_judgings_waiting_counts_the_gpu_queue_only(tmp_path: Path):
    app = Celery("count-test")
    app.conf.update(embedded_broker(tmp_path))
    for queue in ("gpu", "gpu", "gpu-low", "cpu"):
        app.send_task("flashjudge.judge", kwargs={"payload": {}}, queue=queue)
    assert tasks.judgings_waiting(app) == 2
