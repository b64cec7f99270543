"""What a judge worker tells the control side about itself: its GPU, that it lives, what it judges.

A heartbeat thread sends `flashjudge.worker_status` every `heartbeat_s`, and a GPU worker measures
its speed of light once in the background at start, which judging waits for so that nothing is
timed meanwhile. The heartbeat stops announcing a job as soon as the job ends, whether or not its
result could be sent: a job the control side does not hear about is swept and re-sent. Each beat
also calls `on_beat` (the claims' alive mark, worker/celery_adapter/claiming.py) before sending.
"""

from __future__ import annotations

import logging
import os
import shutil
import socket
import subprocess
import threading
from collections.abc import Callable
from functools import lru_cache

from flashjudge.contract import LANGUAGES, Attempt, WorkerStatus
from worker.feedback.block import worker_speed
from worker.feedback.speed import SpeedOfLight
from worker.languages.triton_env import known_triton_python
from worker.settings import get_worker_settings

log = logging.getLogger(__name__)
Sender = Callable[[WorkerStatus], None]
Hook = Callable[[], None]


@lru_cache
def gpu_name() -> str:
    """This worker's GPU model as nvidia-smi names it (e.g. "NVIDIA H100 80GB HBM3"), or "cpu"."""
    if shutil.which("nvidia-smi") is None:
        return "cpu"
    index = os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0] or "0"
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader", "-i",
                              index], capture_output=True, text=True, timeout=10, check=True)
    except (OSError, subprocess.SubprocessError):
        return "cpu"
    return out.stdout.strip() or "cpu"


def judged_languages(queues: str, gpu: str) -> list[str]:
    """The languages a worker consuming these queues can judge: a CUDA language only with a GPU
    (a `gpu` queue consumer whose nvidia-smi answers nothing judges none), triton-kernel only once
    a Python with torch and triton is found, so that the service offers only what some live
    worker can judge."""
    names = {q.strip() for q in queues.split(",")}
    return [n for n, f in LANGUAGES.items()
            if str(f.queue) in names and (gpu != "cpu" or not f.uses_gpu)
            and (n != "triton-kernel" or known_triton_python() is not None)]


def worker_hostname() -> str:
    """This worker process's name in heartbeats and logs: "gpu0@node1" (or "worker-PID@...")."""
    name = get_worker_settings().worker_name or f"worker-{os.getpid()}"
    return f"{name}@{socket.gethostname()}"


class Heartbeat:
    """Tells the control side every heartbeat_s that this worker lives, and what it judges."""

    def __init__(self, sender: Sender, on_beat: Hook | None = None) -> None:
        settings = get_worker_settings()
        self._send = sender
        self._on_beat = on_beat
        self._period = settings.heartbeat_s
        self._queues = settings.queues
        self.job: Attempt | None = None
        self.hostname = worker_hostname()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    def status(self) -> WorkerStatus:
        job = self.job
        return WorkerStatus(
            hostname=self.hostname, gpu=gpu_name(), queues=self._queues, busy=job is not None,
            job={"submission_id": job.submission_id, "attempt": job.attempt, "job": job.key}
            if job else None, languages=judged_languages(self._queues, gpu_name()),
            pid=os.getpid())

    def set(self, job: Attempt | None) -> None:
        """Announce a job (or none) now, and from then on at every beat."""
        self.job = job
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, daemon=True, name="heartbeat")
            self._thread.start()
        self._wake.set()

    def _loop(self) -> None:
        while True:
            if self._on_beat is not None:
                self._on_beat()  # never raises (Claims.beat swallows ledger errors)
            try:
                self._send(self.status())
            except Exception as exc:  # the broker is away: try again next beat
                log.debug("heartbeat not sent: %s", exc)
            self._wake.wait(self._period)
            self._wake.clear()


class SpeedWarmer:
    """Measures this worker's SpeedOfLight once in the background at start (about a minute the
    first time, then read from the cache); judging waits for it, so nothing runs meanwhile."""

    def __init__(self) -> None:
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if gpu_name() != "cpu" and self._thread is None:
            settings = get_worker_settings()
            self._thread = threading.Thread(target=worker_speed,
                                            args=(settings.cache_dir, settings.suite,
                                                  settings.machine()),
                                            daemon=True, name="speed-of-light")
            self._thread.start()

    def get(self, suite: str) -> SpeedOfLight | None:
        if self._thread is not None:
            self._thread.join()
        if gpu_name() == "cpu":
            return None
        settings = get_worker_settings()
        return worker_speed(settings.cache_dir, suite, settings.machine())
