"""Task `flashjudge.paired_run`: two judged neighbours on the board run interleaved on this
worker's GPU until their order is significant or the pair's budget is spent (worker/timing/
paired.py); the outcome goes back as `record_paired` with the request's key.

It waits where timing refinements wait (`gpu-low`, the CPU track's `cpu`) at low priority, so a
judging is never delayed by it; a pair judged on another GPU model is forwarded to that model's
queue (times compare only on one model). A failure of ours comes back as a FAILED outcome with
the reason, never as an order.
"""

from __future__ import annotations

import logging
import time
import zlib
from typing import Any

from celery import Task as CeleryTask

from flashjudge.contract import JudgePayload, PairedPayload, PairedResult, Task
from flashjudge.contract.paired import FAILED
from worker.celery_adapter.gpu_model import belongs_elsewhere, forward, judged_suite
from worker.celery_adapter.heartbeat import worker_gpu_model
from worker.celery_adapter.messages import send
from worker.pipeline import JudgeRequest
from worker.settings import get_worker_settings
from worker.timing.paired import PairedConfig, compare_submissions
from worker.timing.sequential import RuleConfig

log = logging.getLogger(__name__)


def paired_task(task: CeleryTask, payload: dict[str, Any]) -> None:
    """Compare the two sides; send the PairedResult to `control`."""
    job = PairedPayload.from_dict(payload)
    if belongs_elsewhere(job.a, worker_gpu_model()):
        forward(task.app, Task.PAIRED_RUN, payload, job.a)
        return
    started = time.monotonic()
    result = outcome_of(job)
    result.worker = {"gpu": worker_gpu_model(), "seconds": round(time.monotonic() - started, 3)}
    log.info("paired run %s: %s (%s) after %d rounds, %.1f GPU s", job.run_id, result.outcome,
             result.reason, len(result.rounds), result.gpu_s)
    send(task.app, Task.RECORD_PAIRED, job.run_id, job.key, result.to_dict(), patient=True)


def request_of(side: JudgePayload) -> JudgeRequest:
    return JudgeRequest.of(side)


def paired_config(job: PairedPayload, rule: RuleConfig) -> PairedConfig:
    """The request's budget and rule; its judged seconds choose the drawn tests, its key seeds
    the draws (the same request draws the same tests)."""
    return PairedConfig(job.budget_s, rule, job.judged, zlib.crc32(job.key.encode()))


def outcome_of(job: PairedPayload) -> PairedResult:
    """The comparison, or a FAILED result saying why there is none."""
    settings = get_worker_settings()
    rule = RuleConfig(alpha=job.alpha, margin=job.margin, max_rounds=job.max_rounds)
    tests = list(job.a.tests or [])
    if not tests:
        return PairedResult(FAILED, "no tests", error="the two share no passed test to compare")
    try:
        config = settings.judge_config(suite=judged_suite(job.a, worker_gpu_model()))
        return compare_submissions(request_of(job.a), request_of(job.b), tests,
                                   settings.cache_dir, paired_config(job, rule), config)
    except Exception as exc:  # noqa: BLE001 - no order is claimed; the TA page shows why
        log.exception("paired run %s failed", job.run_id)
        return PairedResult(FAILED, "our failure", error=f"{type(exc).__name__}: {exc}")
