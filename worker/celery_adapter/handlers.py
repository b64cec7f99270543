"""The judge worker's Celery tasks by name: one module-level function per task of
flashjudge.contract.Task that a judge worker takes, and `register_tasks`, which makes each a task
of the app under that name (the names never change: messages already queued carry them).

Each function takes its message as the dict Celery carries (JSON) and says which contract type
it is; the work itself is in the module named beside it. The per-process parts (heartbeat,
claims, speed-of-light warm-up, start-up floors) are one WorkerState per app, made on first use
and started when the pool process starts (`start_worker_state`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from celery import Celery
from celery import Task as CeleryTask

from flashjudge.contract import Task
from worker.celery_adapter import custom_run, paired, refine, tasks
from worker.celery_adapter.tasks import WorkerState

OPTIONS = {"acks_late": True, "reject_on_worker_lost": True, "bind": True}


@functools.cache
def worker_state(app: Celery) -> WorkerState:
    """The app's WorkerState in this process, made on first use."""
    return WorkerState(app)


def start_worker_state(app: Celery, **_: Any) -> None:
    """worker_process_init handler (bound to its app): clear a dead worker's work dirs, start the
    heartbeat and the speed-of-light warm-up."""
    worker_state(app).start()


def judge(task: CeleryTask, payload: dict[str, Any]) -> None:
    """flashjudge.judge, a JudgePayload: judge one attempt (worker/celery_adapter/tasks.py)."""
    tasks.judge_task(task, payload, worker_state(task.app))


def custom(task: CeleryTask, payload: dict[str, Any]) -> None:
    """flashjudge.custom_run, a CustomRunPayload: the reference output of a user's input
    (worker/celery_adapter/custom_run.py)."""
    custom_run.custom_run_task(task, payload, worker_state(task.app))


def profile(task: CeleryTask, payload: dict[str, Any]) -> None:
    """flashjudge.profile, a ProfilePayload: one ncu run (worker/celery_adapter/tasks.py)."""
    tasks.profile_task(task, payload, worker_state(task.app))


def refine_timing(task: CeleryTask, payload: dict[str, Any]) -> None:
    """flashjudge.refine_timing, a RefinePayload: the passed tests again until their times can
    carry a rank (worker/celery_adapter/refine.py)."""
    refine.refine_task(task, payload)


def paired_run(task: CeleryTask, payload: dict[str, Any]) -> None:
    """flashjudge.paired_run, a PairedPayload: two neighbours on the board run interleaved
    (worker/celery_adapter/paired.py)."""
    paired.paired_task(task, payload)


TASKS: dict[Task, Callable[[CeleryTask, dict[str, Any]], None]] = {
    Task.JUDGE: judge, Task.CUSTOM_RUN: custom, Task.PROFILE: profile,
    Task.REFINE_TIMING: refine_timing, Task.PAIRED_RUN: paired_run}


def register_tasks(app: Celery) -> None:
    """Make every function of TASKS a task of `app` under its contract name, and start the
    app's WorkerState in each pool process."""
    from celery.signals import worker_process_init

    for name, function in TASKS.items():
        app.task(name=str(name), **OPTIONS)(function)
    worker_process_init.connect(functools.partial(start_worker_state, app), weak=False)
