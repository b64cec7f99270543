"""Task `flashjudge.refine_timing`: the lower-priority phase after the verdicts, in which a
submission's passed tests run again until their times can carry a rank.

The service sends it when it records a result (verdicts never wait for it); the report goes back
as `record_timing` for the same attempt, so a refinement of an attempt since rejudged is ignored.
A failure of ours is logged and reported as the report's error: the verdict pass's times stand.
"""

from __future__ import annotations

import logging
from typing import Any

from celery import Task as CeleryTask

from flashjudge.contract import RefinePayload, Task
from flashjudge.logctx import submission_context
from worker.celery_adapter.gpu_model import belongs_elsewhere, forward, judged_suite
from worker.celery_adapter.heartbeat import worker_gpu_model, worker_hostname
from worker.celery_adapter.messages import send_about
from worker.pipeline import JudgeRequest
from worker.settings import get_worker_settings
from worker.timing.gpustate import GpuMonitor
from worker.timing.refine import refine_submission

log = logging.getLogger(__name__)


def refine_task(task: CeleryTask, payload: dict[str, Any]) -> None:
    """Re-run the passed tests of one judged attempt; send the timing report to `control`."""
    job = RefinePayload.from_dict(payload)
    attempt = job.judge.attempt
    with submission_context(attempt.submission_id):
        if belongs_elsewhere(job.judge, worker_gpu_model()):  # times compare only on one model
            forward(task.app, Task.REFINE_TIMING, payload, job.judge)
            return
        log.info("refining the times of attempt %s: %d test(s)", attempt.attempt, len(job.tests),
                 extra={"worker": worker_hostname()})
        send_about(task.app, Task.RECORD_TIMING, attempt, timing_of(job))


def timing_of(job: RefinePayload) -> dict[str, Any]:
    """TimingReport.to_dict(), or {"error": why} when we could not refine."""
    settings = get_worker_settings()
    request = JudgeRequest.of(job.judge)
    config = settings.judge_config(suite=judged_suite(job.judge, worker_gpu_model()))
    monitor = GpuMonitor.of(config.machine)
    try:
        report = refine_submission(request, job.tests, settings.cache_dir, config,
                                   monitor=monitor)
    except Exception as exc:  # noqa: BLE001 - the verdict pass's times stand; the TA sees why
        log.exception("refining the times failed")
        return {"error": f"{type(exc).__name__}: {exc}"}
    finally:
        if monitor is not None:
            monitor.close()
    log.info("refined times: %d more runs, total %.4f s +- %.4f", report.runs,
             report.total.statistic, (report.total.high - report.total.low) / 2,
             extra={"worker": worker_hostname()})
    return report.to_dict()
