"""Celery tasks of the judge workers: a thin adapter from a payload to worker.pipeline.judge.

Payload in (ids, language, base64 sources, suite), progress and the final JudgeResult.to_dict()
out, as tasks on the `control` queue. A system failure (an exception from the pipeline) is
reported as `flashjudge.record_failure`, and the control side decides to retry or give up.

Issue 6: the result carries the feedback block (roofline, flags, GPU); a GPU submission that got
WA/RE/NO is then diagnosed under compute-sanitizer and the diagnosis sent separately, after the
result, so verdicts are recorded first and passing submissions never wait. `flashjudge.profile`
(one ncu run) comes on the `gpu-low` queue and yields to any judging waiting on `gpu`.

Every log line written while a task handles a submission carries its id (flashjudge.logctx),
and the result names who judged it and for how long (`worker`), which app/metrics.py turns into
the judge-duration histogram and each worker's GPU busy time.
"""

from __future__ import annotations

import base64
import logging
import os
import tempfile
import time
from dataclasses import dataclass
from typing import Any

from celery import Celery
from celery.signals import worker_process_init

from flashjudge.logctx import submission_context
from kernels.compare import compare_files
from kernels.reference import compute_reference
from worker.celery_app import LOW_QUEUE, celery_app
from worker.diagnosis import diagnose
from worker.feedback import GPU_LANGUAGES, feedback_for
from worker.pipeline import JudgeConfig, JudgeEvent, JudgeRequest, insecure_from_env
from worker.pipeline import judge as run_judge
from worker.profiling import profile as run_profile
from worker.verdicts import CompileResult, JudgeResult, TestResult
from worker.worker_status import cache_dir, gpu_name, heartbeat, send, warmer

log = logging.getLogger(__name__)
MAX_REPORT_BYTES = 32 << 20  # a larger .ncu-rep is not shipped back (the summary still is)
MAX_YIELDS = 10_000  # a profile gives way to waiting judgings at most this often, then runs


@dataclass(frozen=True)
class Job:
    """What one judge task is about."""

    submission_id: int  # the service's submission id
    attempt: int  # which send of it this is; results of other attempts are ignored
    key: str  # random key of this attempt, echoed in every message about it


@worker_process_init.connect
def start_heartbeat(**_: Any) -> None:
    """Each pool process reports from its start, so an idle worker shows up as idle; a GPU
    worker starts measuring its speed of light (handlers here must return within seconds)."""
    heartbeat.set(None)
    warmer.start()


def judge_request(payload: dict[str, Any]) -> JudgeRequest:
    files = {name: base64.b64decode(data) for name, data in payload["files"].items()}
    return JudgeRequest(language=payload["language"], files=files, suite=payload["suite"],
                        tests=payload.get("tests"), seed=payload.get("seed"))


def plain(event: JudgeEvent) -> dict[str, Any]:
    """A pipeline event as the JSON the control side records."""
    data: dict[str, Any] = {"type": event.kind, "test_id": event.test_id, "index": event.index,
                            "total": event.total}
    if isinstance(event.result, CompileResult):
        data.update(ok=event.result.ok, log=event.result.log)
    elif isinstance(event.result, TestResult):
        data["test"] = event.result.to_dict()
    return data


@celery_app.task(name="flashjudge.judge", acks_late=True, reject_on_worker_lost=True)
def judge(payload: dict[str, Any]) -> None:
    """Judge one submission attempt and report progress and the result on `control`."""
    job = Job(int(payload["submission_id"]), int(payload["attempt"]), str(payload.get("job", "")))
    with submission_context(job.submission_id):
        judge_job(job, payload)


def judge_job(job: Job, payload: dict[str, Any]) -> None:
    """The judge task's body, inside the submission's log context."""

    def report(name: str, body: Any) -> None:
        send(name, job.submission_id, job.attempt, body, job.key or None)

    request = judge_request(payload)
    profile = warmer.get(request.suite) if request.language in GPU_LANGUAGES else None
    heartbeat.set(job)
    report("flashjudge.record_progress", {"type": "started"})
    log.info("judging attempt %s: %s on suite %s", job.attempt, request.language, request.suite)
    started = time.monotonic()
    try:
        result = run_judge(request, cache_dir(),
                           on_event=lambda e: report("flashjudge.record_progress", plain(e)),
                           config=JudgeConfig(insecure=insecure_from_env()))
        body = result.to_dict()
        body["feedback"] = feedback_for(result, profile)
        body["worker"] = worker_info(time.monotonic() - started)
    except Exception as exc:  # a system failure: the control side retries or gives up (SE)
        log.exception("judging submission %s failed", job.submission_id)
        report("flashjudge.record_failure", f"{type(exc).__name__}: {exc}")
        heartbeat.set(None)
        return
    log.info("judged: %d/%d tests passed, score %d, in %.2f s", result.passed, len(result.tests),
             result.score, body["worker"]["seconds"])
    report("flashjudge.record_result", body)
    try:
        diagnosis = diagnosis_of(request, result)
    finally:
        heartbeat.set(None)
    if diagnosis is not None:
        report("flashjudge.record_diagnosis", diagnosis)


def worker_info(seconds: float) -> dict[str, Any]:
    """Who judged a submission, on which GPU (None: the CPU track) and for how many wall seconds:
    the result's `worker` block, read by app/metrics.py (hostname as in the heartbeat)."""
    gpu = gpu_name()
    return {"hostname": heartbeat.hostname, "gpu": None if gpu == "cpu" else gpu,
            "seconds": round(seconds, 3)}


def diagnosis_of(request: JudgeRequest, result: JudgeResult) -> dict[str, Any] | None:
    """Diagnosis.to_dict() of a failed GPU submission (None: nothing to diagnose); a failure of
    ours becomes the diagnosis's error, so the page never waits for one that will not come."""
    try:
        diagnosis = diagnose(request, result, cache_dir())
    except Exception as exc:  # noqa: BLE001 - reported on the page as our error
        log.exception("diagnosing a %s submission failed", result.language)
        failing = next((t.id for t in result.tests if t.verdict in ("WA", "RE", "NO")), "")
        return {"test_id": failing, "shape": None, "reports": [], "message": "",
                "error": f"the diagnosis failed on our side: {type(exc).__name__}: {exc}",
                "seconds": 0.0}
    return diagnosis.to_dict() if diagnosis is not None else None


@celery_app.task(name="flashjudge.custom_run", acks_late=True, reject_on_worker_lost=True)
def custom_run(payload: dict[str, Any]) -> None:
    """Compute the reference output of an uploaded input; compare the user's output if any."""
    outcome: dict[str, Any] = {"reference": None, "report": None, "error": None}
    try:
        outcome["reference"] = compute_reference(payload["input_path"], payload["output_path"])
        if payload.get("own_output_path"):
            report = compare_files(payload["own_output_path"], payload["output_path"])
            outcome["report"] = report.to_dict()
    except Exception as exc:  # reported to the user as the run's error
        log.exception("custom run %s failed", payload["run_id"])
        outcome["error"] = f"{type(exc).__name__}: {exc}"
    send("flashjudge.record_custom_run", payload["run_id"], payload["attempt"], outcome)


def judgings_waiting(app: Celery = celery_app) -> int:
    """Judge messages waiting on the `gpu` queue (0 when the broker cannot tell)."""
    try:
        with app.connection_for_read() as conn:
            return int(conn.default_channel.queue_declare(queue="gpu").message_count)
    except Exception as exc:  # noqa: BLE001 - then the profile simply runs
        log.warning("could not count waiting judgings: %s", exc)
        return 0


@celery_app.task(name="flashjudge.profile", acks_late=True, reject_on_worker_lost=True)
def profile(payload: dict[str, Any]) -> None:
    """One ncu run of a submission on one test. Low priority: while judgings wait on `gpu`, the
    task puts itself back at the end of `gpu-low` and the worker takes the judging first."""
    yields = int(payload.get("yields", 0))
    if yields < MAX_YIELDS and judgings_waiting() > 0:
        celery_app.send_task("flashjudge.profile", kwargs={"payload": {**payload,
                             "yields": yields + 1}}, queue=LOW_QUEUE, priority=9)
        return
    with submission_context(payload["submission_id"]):
        send("flashjudge.record_profile", payload["profile_id"], profile_outcome(payload))


def profile_outcome(payload: dict[str, Any]) -> dict[str, Any]:
    """Run ncu once for the profile task: Profile.to_dict(), the shipped report, or the error."""
    outcome: dict[str, Any] = {"profile": None, "report": None, "error": None}
    heartbeat.set(Job(int(payload["submission_id"]), int(payload["attempt"]), "profile"))
    try:
        with tempfile.TemporaryDirectory(prefix="fj-profile-") as out:
            result = run_profile(judge_request(payload), cache_dir(), payload["test_id"], out)
            outcome["profile"] = result.to_dict()
            outcome["report"], outcome["error"] = shipped_report(result.report_path)
    except Exception as exc:  # noqa: BLE001 - reported on the page as the profile's error
        log.exception("profiling submission %s failed", payload["submission_id"])
        outcome["error"] = f"profiling failed on our side: {type(exc).__name__}: {exc}"
    finally:
        heartbeat.set(None)
    return outcome


def shipped_report(path: str | None) -> tuple[str | None, str | None]:
    """(base64 of the .ncu-rep, None), or (None, why it is not shipped)."""
    if path is None:
        return None, None
    size = os.path.getsize(path)
    if size > MAX_REPORT_BYTES:
        return None, f"the .ncu-rep ({size >> 20} MB) is over {MAX_REPORT_BYTES >> 20} MB: not kept"
    with open(path, "rb") as f:
        return base64.b64encode(f.read()).decode(), None
