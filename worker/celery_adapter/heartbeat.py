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
import socket
import threading
from collections.abc import Callable

from flashjudge.contract import Attempt, WorkerStatus
from worker.celery_adapter.drain import Drain
from worker.feedback.block import worker_speed
from worker.feedback.speed import SpeedOfLight
from worker.languages import REGISTRY, Registry
from worker.machine import NO_GPU
from worker.settings import get_worker_settings

log = logging.getLogger(__name__)
Sender = Callable[[WorkerStatus], None]
Hook = Callable[[], None]


def worker_gpu_model() -> str:
    """This worker's GPU model (Machine.gpu: the GPU it was handed, as the driver named it at
    start), e.g. "NVIDIA H100 80GB HBM3", or "cpu"."""
    return get_worker_settings().machine().gpu_model


def judged_languages(queues: str, gpu: str, registry: Registry = REGISTRY) -> list[str]:
    """The languages a worker consuming these queues can judge, read from each language's row:
    one of the queues is its queue, a GPU language only with a GPU (a `gpu` queue consumer whose
    driver names no GPU judges none), and a language that needs more than the toolchain (its
    row's `needs`: triton-kernel's torch and triton) only once its class has found it here, so
    that the service offers only what some live worker can judge."""
    names = {q.strip() for q in queues.split(",")}
    return [cls.facts.name for cls in registry
            if str(cls.facts.queue) in names and (gpu != NO_GPU or not cls.facts.uses_gpu)
            and (not cls.facts.needs or cls.needs_met())]


def worker_hostname() -> str:
    """This worker process's name in heartbeats and logs: "gpu0@node1" (or "worker-PID@...")."""
    name = get_worker_settings().worker_name or f"worker-{os.getpid()}"
    return f"{name}@{socket.gethostname()}"


class Heartbeat:
    """Tells the control side every heartbeat_s that this worker lives, and what it judges."""

    def __init__(self, sender: Sender, on_beat: Hook | None = None,
                 drain: Drain | None = None) -> None:
        settings = get_worker_settings()
        self._send = sender
        self._on_beat = on_beat
        self._drain = drain
        self._period = settings.heartbeat_s
        self._queues = settings.queues
        self.job: Attempt | None = None
        self.hostname = worker_hostname()
        self._wake = threading.Event()
        self._stopped = False
        self._thread: threading.Thread | None = None

    def status(self) -> WorkerStatus:
        """This beat: while draining, its state says so and it offers no language (nothing new
        should wait for it); in a Slurm job, the job (the TA page counts down to its end)."""
        job, gpu, drain = self.job, worker_gpu_model(), self._drain
        state = drain.state() if drain is not None else ""
        slurm = drain.job.summary() if drain is not None and drain.job is not None else None
        return WorkerStatus(
            hostname=self.hostname, gpu=gpu, queues=self._queues, busy=job is not None,
            job={"submission_id": job.submission_id, "attempt": job.attempt, "job": job.key}
            if job else None,
            languages=[] if state else judged_languages(self._queues, gpu),
            pid=os.getpid(), state=state, slurm=slurm)

    def set(self, job: Attempt | None) -> None:
        """Announce a job (or none) now, and from then on at every beat."""
        self.job = job
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, daemon=True, name="heartbeat")
            self._thread.start()
        self._wake.set()

    def stop(self) -> None:
        """End the beats (a worker process exits instead; a process that made this worker's
        state for a while, as a test does, must not keep reading settings and sending beats)."""
        self._stopped = True
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def _loop(self) -> None:
        while not self._stopped:
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
        if worker_gpu_model() != NO_GPU and self._thread is None:
            settings = get_worker_settings()
            self._thread = threading.Thread(target=worker_speed,
                                            args=(settings.cache_dir, settings.suite,
                                                  settings.machine()),
                                            daemon=True, name="speed-of-light")
            self._thread.start()

    def get(self, suite: str) -> SpeedOfLight | None:
        if self._thread is not None:
            self._thread.join()
        if worker_gpu_model() == NO_GPU:
            return None
        settings = get_worker_settings()
        return worker_speed(settings.cache_dir, suite, settings.machine())
