"""What a judge worker tells the control side about itself: its GPU, that it lives, what it judges.

Split from worker/tasks.py (the task adapters): a heartbeat thread sends `flashjudge.worker_status`
every HEARTBEAT_S, and a GPU worker measures its speed of light once in the background at start,
which judging waits for so that nothing is timed meanwhile.
"""

from __future__ import annotations

import logging
import os
import shutil
import socket
import subprocess
import threading
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

from worker.celery_app import celery_app, data_dir
from worker.feedback import worker_profile
from worker.gpu_profile import GpuProfile

log = logging.getLogger(__name__)
HEARTBEAT_S = float(os.environ.get("FLASHJUDGE_HEARTBEAT_S", "10"))


class JobLike(Protocol):
    """The judge job a heartbeat reports (worker.tasks.Job)."""

    submission_id: int
    attempt: int
    key: str


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
        self.job: JobLike | None = None
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

    def set(self, job: JobLike | None) -> None:
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


class ProfileWarmer:
    """Measures this worker's GpuProfile once in the background at start (about a minute the
    first time, then read from the cache); judging waits for it, so nothing runs meanwhile."""

    def __init__(self) -> None:
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if gpu_name() != "cpu" and self._thread is None:
            suite = os.environ.get("FLASHJUDGE_SUITE", "hw4")  # the service's suite
            self._thread = threading.Thread(target=worker_profile, args=(cache_dir(), suite),
                                            daemon=True, name="gpu-profile")
            self._thread.start()

    def get(self, suite: str) -> GpuProfile | None:
        if self._thread is not None:
            self._thread.join()
        return worker_profile(cache_dir(), suite) if gpu_name() != "cpu" else None


warmer = ProfileWarmer()


def cache_dir() -> Path:
    return data_dir() / "cache"
