"""The judge workers' tasks: a thin adapter from a contract payload to the pipeline and back.

Payload in (flashjudge.contract.JudgePayload), progress events and the final JudgeResult out, as
messages on the `control` queue. Before judging, the worker takes the attempt in the ledger
(worker/celery_adapter/claiming.py): a stale attempt or a second delivery of a taken one is
dropped, so a re-send never judges an attempt twice, and between tests a judging stops when the
control side moved on. A system failure (an exception from the pipeline) is reported as
`record_failure`, and the control side decides to retry or give up. After the result, a GPU
submission that got WA/RE/NO is diagnosed under compute-sanitizer and the diagnosis sent
separately, so verdicts are recorded first. `profile` (one ncu run) comes on `gpu-low` and yields
to any judging waiting on `gpu`. Functions here are plain: worker/celery_adapter/handlers.py
registers them as Celery tasks, so importing this module builds nothing.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import logging
import os
import subprocess
import tempfile
import time
from collections.abc import Iterator
from functools import partial
from typing import Any

from celery import Task as CeleryTask

from flashjudge.claims import Ledger, ledger_for, submission_subject
from flashjudge.contract import (
    GPU_LANGUAGES,
    LANGUAGES,
    LOW_PRIORITY,
    Attempt,
    CompileResult,
    JudgePayload,
    JudgeResult,
    ProfilePayload,
    ProgressEvent,
    Queue,
    Task,
    diagnosis_follows,
)
from flashjudge.contract.floor import FLOOR_KEY
from flashjudge.logctx import submission_context
from worker.celery_adapter.claiming import Claims, StaleAttempt, Work
from worker.celery_adapter.drain import Drain
from worker.celery_adapter.gpu_model import belongs_elsewhere, forward, judged_suite
from worker.celery_adapter.heartbeat import Heartbeat, SpeedWarmer, worker_gpu_model
from worker.celery_adapter.messages import send, send_about, send_progress
from worker.celery_adapter.node import start_node_parts
from worker.feedback.block import feedback_for
from worker.feedback.diagnosis import diagnose
from worker.feedback.ncu_profile import profile as run_profile
from worker.pipeline import JudgeEvent, JudgeRequest, judge
from worker.sandbox.workspace import sweep_stale
from worker.settings import get_worker_settings, slurm_job
from worker.timing.floor import FloorMeter

log = logging.getLogger(__name__)
MAX_REPORT_BYTES = 32 << 20  # a larger .ncu-rep is not shipped back (the summary still is)
MAX_YIELDS = 100  # a profile or custom run gives way to waiting judgings at most this often
CHECKED_EVENTS = ("prepare", "test-start")  # before these, a judging checks it is still live


class WorkerState:
    """The per-process parts of a worker: heartbeat, claims, speed-of-light warm-up."""

    def __init__(self, app: Any) -> None:
        settings = get_worker_settings()
        self._ledger: Ledger | None = None
        self.claims = Claims(self.ledger, alive_ttl_s=3 * settings.heartbeat_s + 5)
        self.drain = Drain(slurm_job, settings.slurm_handback_s, settings.drain_file,
                           functools.partial(self.hand_back, app))
        self.heartbeat = Heartbeat(lambda status: send(app, Task.WORKER_STATUS, status.to_dict()),
                                   on_beat=self.claims.beat, drain=self.drain)
        self.speed = SpeedWarmer()
        self.floors = FloorMeter()  # the start-up floor, measured once per input size
        self.keeper: subprocess.Popen[bytes] | None = None  # the driver keeper (GPU workers)

    def ledger(self) -> Ledger:
        """The ledger beside this worker's broker (made in the working process, on first use)."""
        if self._ledger is None:
            settings = get_worker_settings()
            self._ledger = ledger_for(settings.broker_url, settings.data_path)
        return self._ledger

    def start(self) -> None:
        """Clear a dead worker's work dirs; keep the node's parts up (the driver keeper, this
        process off its runs' cores); report from the start (an idle worker shows up as idle);
        measure the speed of light."""
        settings = get_worker_settings()
        sweep_stale(settings.scratch)
        self.keeper = start_node_parts(settings.machine(), settings.driver_keeper)
        self.drain.start()
        self.heartbeat.set(None)
        self.speed.start()

    def stop(self) -> None:
        """Stop the heartbeat: for a process that made a worker's state without being one (a
        test judging in-process), whose beats would go on reading the settings of later work."""
        self.heartbeat.stop()

    def hand_back(self, app: Any, attempt: Attempt, reason: str) -> None:
        """Tell the control side to judge `attempt` again elsewhere (the drain's hand-back);
        the claim counts as reported, so the sweeper waits for the control side."""
        send_about(app, Task.RECORD_HANDBACK, attempt, reason, patient=True)
        self.claims.reported()

    def check(self, attempt: Attempt) -> None:
        """Between tests: stop (StaleAttempt) when the control side moved on or the judging
        was handed back."""
        if self.drain.handed_back(attempt):
            raise StaleAttempt(f"attempt {attempt.attempt} was handed back")
        self.claims.check_live()

    @contextlib.contextmanager
    def working(self, work: Work, announce: Attempt | None) -> Iterator[None]:
        """Hold `work` and announce `announce` for the block, both let go on the way out,
        whatever happens: no path announces a job this process is not working on."""
        held = self.drain.holding(announce) if announce else contextlib.nullcontext()
        with self.claims.holding(work), held:
            self.heartbeat.set(announce)
            try:
                yield
            finally:
                self.heartbeat.set(None)


def put_back(task: CeleryTask, payload: dict[str, Any], why: str) -> None:
    """Send a judge message, unchanged and unclaimed, back to the queue it came from."""
    info = task.request.delivery_info or {}
    job = JudgePayload.from_dict(payload)
    queue = str(info.get("routing_key") or LANGUAGES[job.language].queue)
    task.app.send_task(str(Task.JUDGE), kwargs={"payload": payload}, queue=queue)
    log.info("put attempt %s back on %s: %s", job.attempt.attempt, queue, why)


def judge_request(payload: JudgePayload) -> JudgeRequest:
    return JudgeRequest.of(payload)


def progress(event: JudgeEvent) -> ProgressEvent:
    """A pipeline event as the contract's progress message."""
    result = event.result
    if isinstance(result, CompileResult):
        return ProgressEvent(event.kind, event.test_id, event.index, event.total,
                             ok=result.ok, log=result.log)
    test = result.to_dict() if result is not None else None
    return ProgressEvent(event.kind, event.test_id, event.index, event.total, test=test)


def judge_task(task: CeleryTask, payload: dict[str, Any], state: WorkerState) -> None:
    """Task `flashjudge.judge`: judge one submission attempt if it is live and not yet taken,
    report on `control`."""
    job = JudgePayload.from_dict(payload)
    attempt = job.attempt
    with submission_context(attempt.submission_id):
        if belongs_elsewhere(job, worker_gpu_model()):  # judged on another model: it goes there
            forward(task.app, Task.JUDGE, payload, job)
            return
        leaving = state.drain.why_not_start()
        if leaving is not None:  # unclaimed: the next worker of its queue takes it
            put_back(task, payload, leaving)
            return
        work = Work(submission_subject(attempt.submission_id), attempt.attempt, attempt.key)
        refusal = state.claims.refusal(work)
        if refusal is not None:
            log.info("not judging attempt %s: %s", attempt.attempt, refusal)
            return
        judge_attempt(task.app, job, state, work)


def judge_attempt(app: Any, job: JudgePayload, state: WorkerState, work: Work) -> None:
    """The judge task's body, inside the submission's log context, with the attempt held."""
    attempt = job.attempt
    with state.working(work, attempt):
        waited = time.monotonic()
        speed = state.speed.get(job.suite) if job.language in GPU_LANGUAGES else None
        send_progress(app, attempt, ProgressEvent("started").to_dict())
        result = run_judging(app, job, speed, state, time.monotonic() - waited)
        if result is None or not state.drain.may_report(attempt):
            return
        outcome = partial(send_about, app, Task.RECORD_RESULT, attempt, result.to_dict(),
                          patient=True)
        outcome()
        state.claims.reported(resend=outcome)
    send_diagnosis(app, job, result)


def run_judging(app: Any, job: JudgePayload, speed: Any, state: WorkerState,
                speed_wait_s: float = 0.0) -> JudgeResult | None:
    """The pipeline for one attempt; None when it stopped (stale) or raised (failure reported)."""
    attempt = job.attempt
    log.info("judging attempt %s: %s on suite %s", attempt.attempt, job.language, job.suite)
    started = time.monotonic()

    def on_event(event: JudgeEvent) -> None:
        if event.kind in CHECKED_EVENTS:
            state.check(attempt)
        send_progress(app, attempt, progress(event).to_dict())

    try:
        settings = get_worker_settings()
        config = settings.judge_config(suite=judged_suite(job, worker_gpu_model()))
        result = judge(judge_request(job), settings.cache_dir, on_event=on_event, config=config)
    except StaleAttempt as exc:  # the control side moved on: nothing to report
        log.warning("stopped judging attempt %s: %s", attempt.attempt, exc)
        return None
    except Exception as exc:  # a system failure: the control side retries or gives up (SE)
        log.exception("judging submission %s failed", attempt.submission_id)
        if not state.drain.may_report(attempt):  # stopped under it: handed back instead
            return None
        failure = partial(send_about, app, Task.RECORD_FAILURE, attempt,
                          f"{type(exc).__name__}: {exc}", patient=True)
        failure()
        state.claims.reported(resend=failure)
        return None
    result.extra["feedback"] = feedback_for(result, speed, config.languages.facts(result.language))
    floor_began = time.monotonic()
    floor = state.floors.measure(judge_request(job), result, settings.cache_dir, config)
    if floor is not None:
        result.extra[FLOOR_KEY] = floor.to_dict()
    floor_s = time.monotonic() - floor_began
    result.extra["worker"] = worker_info(state.heartbeat.hostname, time.monotonic() - started)
    log.info("judged: %d/%d tests passed, score %d, in %.2f s", result.passed,
             len(result.tests), result.score, result.extra["worker"]["seconds"],
             extra={"worker": state.heartbeat.hostname,
                    "phases": judging_phases(result, speed_wait_s, floor_s)})
    return result


def judging_phases(result: JudgeResult, speed_wait_s: float, floor_s: float
                   ) -> dict[str, float]:
    """Where one judging's wall time went (the `judged` log line, read by bench/gpu_cluster.py):
    waiting for the speed-of-light warm-up, the build, preparing inputs, the tests, measuring
    the start-up floor (once per input size and worker process)."""
    seconds = float(result.extra["worker"]["seconds"])
    build_s, prepare_s = result.compile.seconds, result.prepare_s
    return {"speed_wait_s": round(speed_wait_s, 3), "build_s": round(build_s, 3),
            "prepare_s": round(prepare_s, 3),
            "tests_s": round(max(0.0, seconds - build_s - prepare_s - floor_s), 3),
            "floor_s": round(floor_s, 3)}


def worker_info(hostname: str, seconds: float) -> dict[str, Any]:
    """Who judged a submission, on which GPU (None: the CPU track) and for how many wall seconds:
    the result's `worker` block, read by app/metrics.py."""
    gpu = worker_gpu_model()
    return {"hostname": hostname, "gpu": None if gpu == "cpu" else gpu,
            "seconds": round(seconds, 3)}


def send_diagnosis(app: Any, job: JudgePayload, result: JudgeResult | None) -> None:
    """After the result: the sanitizer's findings on a failed GPU submission, if any."""
    body = diagnosis_of(judge_request(job), result) if result is not None else None
    if body is not None:
        send_about(app, Task.RECORD_DIAGNOSIS, job.attempt, body)


def diagnosis_of(request: JudgeRequest, result: JudgeResult) -> dict[str, Any] | None:
    """Diagnosis.to_dict() of a failed GPU submission (None: nothing to diagnose); a failure of
    ours becomes the diagnosis's error, so the page never waits for one that will not come."""
    if not diagnosis_follows(result):
        return None
    try:
        settings = get_worker_settings()
        found = diagnose(request, result, settings.cache_dir, machine=settings.machine())
    except Exception as exc:  # noqa: BLE001 - reported on the page as our error
        log.exception("diagnosing a %s submission failed", result.language)
        failing = next((t.id for t in result.tests if t.verdict in ("WA", "RE", "NO")), "")
        return {"test_id": failing, "shape": None, "reports": [], "message": "",
                "error": f"the diagnosis failed on our side: {type(exc).__name__}: {exc}",
                "seconds": 0.0}
    return found.to_dict() if found is not None else None


def judgings_waiting(app: Any, queue: Queue = Queue.GPU) -> int:
    """Judge messages waiting on `queue` (0 when the broker cannot tell). On Redis only those
    above LOW_PRIORITY count: the CPU track's timing refinements wait on `cpu` too, at low
    priority, and a custom run that gave way to them once put itself back 10,000 times."""
    try:
        with app.connection_for_read() as conn:
            return waiting_above_low(conn.default_channel, str(queue))
    except Exception as exc:  # noqa: BLE001 - then the profile simply runs
        log.warning("could not count waiting judgings: %s", exc)
        return 0


def waiting_above_low(channel: Any, queue: str) -> int:
    """Messages on `queue` of a priority above LOW_PRIORITY: kombu's Redis channel keeps a list
    per priority step (`_q_for_pri`); a broker without priorities counts them all."""
    if not hasattr(channel, "_q_for_pri") or not hasattr(channel, "priority_steps"):
        return int(channel.queue_declare(queue=queue).message_count)
    lists = {channel._q_for_pri(queue, step) for step in channel.priority_steps
             if step < LOW_PRIORITY}
    with channel.conn_or_acquire() as client:
        return sum(int(client.llen(name)) for name in lists)


def profile_task(task: CeleryTask, payload: dict[str, Any], state: WorkerState) -> None:
    """Task `flashjudge.profile`: one ncu run. Low priority: while judgings wait on `gpu`, it puts
    itself back at the end of `gpu-low` and the worker takes the judging first."""
    job = ProfilePayload.from_dict(payload)
    if job.yields < MAX_YIELDS and judgings_waiting(task.app) > 0:
        again = ProfilePayload(job.judge, job.profile_id, job.test_id, job.yields + 1)
        task.app.send_task(str(Task.PROFILE), kwargs={"payload": again.to_dict()},
                           queue=str(Queue.GPU_LOW), priority=LOW_PRIORITY)
        return
    with submission_context(job.judge.attempt.submission_id):
        outcome = profile_outcome(job, state)
        send(task.app, Task.RECORD_PROFILE, job.profile_id, outcome)


def profile_outcome(job: ProfilePayload, state: WorkerState) -> dict[str, Any]:
    """Run ncu once: Profile.to_dict(), the shipped report, or the error."""
    outcome: dict[str, Any] = {"profile": None, "report": None, "error": None}
    state.heartbeat.set(Attempt(job.judge.attempt.submission_id, job.judge.attempt.attempt,
                                "profile"))
    try:
        with tempfile.TemporaryDirectory(prefix="fj-profile-") as out:
            settings = get_worker_settings()
            result = run_profile(judge_request(job.judge), settings.cache_dir, job.test_id, out,
                                 machine=settings.machine())
            outcome["profile"] = result.to_dict()
            outcome["report"], outcome["error"] = shipped_report(result.report_path)
    except Exception as exc:  # noqa: BLE001 - reported on the page as the profile's error
        log.exception("profiling submission %s failed", job.judge.attempt.submission_id)
        outcome["error"] = f"profiling failed on our side: {type(exc).__name__}: {exc}"
    finally:
        state.heartbeat.set(None)
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
