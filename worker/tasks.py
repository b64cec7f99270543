"""Celery tasks of the judge workers: a thin adapter from a payload to worker.pipeline.judge.

Payload in (ids, language, base64 sources, suite), progress and the final JudgeResult.to_dict()
out, as tasks on the `control` queue. A system failure (an exception from the pipeline) is
reported as `flashjudge.record_failure`, and the control side decides to retry or give up.
"""

from __future__ import annotations

import base64
import logging
import os
import shutil
import socket
import subprocess
import threading
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from celery.signals import worker_process_init

from kernels.compare import compare_files
from kernels.reference import compute_reference
from worker.celery_app import celery_app, data_dir
from worker.pipeline import JudgeEvent, JudgeRequest
from worker.pipeline import judge as run_judge
from worker.verdicts import CompileResult, TestResult

log = logging.getLogger(__name__)
HEARTBEAT_S = float(os.environ.get("FLASHJUDGE_HEARTBEAT_S", "10"))


@dataclass(frozen=True)
class Job:
    """What one judge task is about."""

    submission_id: int  # the service's submission id
    attempt: int  # which send of it this is; results of other attempts are ignored
    key: str  # random key of this attempt, echoed in every message about it


def send(name: str, *args: Any) -> None:
    """Send a control task by name (the control side is not importable from here)."""
    celery_app.send_task(name, args=list(args), queue="control")


@lru_cache
def gpu_name() -> str:
    """This worker's GPU as nvidia-smi names it, or "cpu"."""
    if shutil.which("nvidia-smi") is None:
        return "cpu"
    index = os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0] or "0"
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader", "-i",
                              index], capture_output=True, text=True, timeout=10, check=True)
    except (OSError, subprocess.SubprocessError):
        return "cpu"
    return out.stdout.strip() or "cpu"


class Heartbeat:
    """Tells the control side every HEARTBEAT_S that this worker lives, and what it judges."""

    def __init__(self) -> None:
        self.job: Job | None = None
        name = os.environ.get("FLASHJUDGE_WORKER_NAME") or f"worker-{os.getpid()}"
        self.hostname = f"{name}@{socket.gethostname()}"  # gpu0@node1: one row per GPU
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    def status(self) -> dict[str, Any]:
        job = self.job
        return {"hostname": self.hostname, "gpu": gpu_name(), "busy": job is not None,
                "queues": os.environ.get("FLASHJUDGE_QUEUES", ""),
                "job": {"submission_id": job.submission_id, "attempt": job.attempt,
                        "job": job.key}
                if job else None}

    def set(self, job: Job | None) -> None:
        self.job = job
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, daemon=True, name="heartbeat")
            self._thread.start()
        self._wake.set()

    def _loop(self) -> None:
        while True:
            try:
                send("flashjudge.worker_status", self.status())
            except Exception as exc:  # the broker is away: try again next beat
                log.warning("heartbeat not sent: %s", exc)
            self._wake.wait(HEARTBEAT_S)
            self._wake.clear()


heartbeat = Heartbeat()


@worker_process_init.connect
def start_heartbeat(**_: Any) -> None:
    """Each pool process reports from its start, so an idle worker shows up as idle."""
    heartbeat.set(None)


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

    def report(name: str, body: Any) -> None:
        send(name, job.submission_id, job.attempt, body, job.key or None)

    heartbeat.set(job)
    report("flashjudge.record_progress", {"type": "started"})
    try:
        result = run_judge(judge_request(payload), data_dir() / "cache",
                           on_event=lambda e: report("flashjudge.record_progress", plain(e)))
    except Exception as exc:  # a system failure: the control side retries or gives up (SE)
        log.exception("judging submission %s failed", job.submission_id)
        report("flashjudge.record_failure", f"{type(exc).__name__}: {exc}")
        return
    finally:
        heartbeat.set(None)
    report("flashjudge.record_result", result.to_dict())


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
