"""The judge workers' Celery app, built from WorkerSettings (environment variables only).

Workers hold no database credentials and import nothing from app/: the broker configuration comes
from flashjudge.contract (the same function the service uses). Results go back as tasks on the
`control` queue, consumed next to the database by app/control/tasks.py.

Logs are JSON lines (flashjudge.logctx) tagged with the submission being judged, the same format
as the web service's, so one grep for a submission id follows it across containers.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from celery import Celery

from flashjudge.celery_logging import quiet_celery_logs
from flashjudge.contract import Queue, Task, celery_config, make_broker_folders
from flashjudge.logctx import configure_json_logging
from worker.settings import get_worker_settings


def make_celery() -> Celery:
    """Build the worker-side app; its tasks live in worker/celery_adapter/tasks.py."""
    settings = get_worker_settings()
    config = celery_config(settings.broker_url, settings.data_path)
    make_broker_folders(config)
    app = Celery("flashjudge-worker")
    app.conf.update(config)
    register(app)
    return app


@lru_cache
def celery_app() -> Celery:
    """The worker's one Celery app, built on first use (never at import)."""
    return make_celery()


def json_logs(**_: object) -> None:
    """setup_logging handler: replace Celery's own log setup (worker and pool children alike) by
    JSON lines on stderr; connecting it also stops Celery from redirecting stdout/stderr."""
    configure_json_logging(get_worker_settings().log_level)
    quiet_celery_logs()


LOW_QUEUES = {Queue.GPU: (Queue.GPU_LOW, Queue.CUSTOM_GPU), Queue.CPU: (Queue.CUSTOM_CPU,)}


def consume_low_queue(sender: str, instance: Any, **_: Any) -> None:
    """celeryd_after_setup handler: a worker of a judge queue also takes that queue's
    low-priority work (`gpu`: ncu profiles and custom runs, `cpu`: custom runs), which gives way
    to waiting judgings, so `flashjudge worker`/`serve` need no extra -Q."""
    queues = instance.app.amqp.queues
    selected = queues.consume_from or {}
    for judge_queue, low in LOW_QUEUES.items():
        if judge_queue in selected:
            for queue in low:
                if queue not in selected:
                    queues.select_add(queues[queue])


def register(app: Celery) -> None:
    """The worker's tasks and signal handlers, on this app (called once, by make_celery)."""
    from celery.signals import celeryd_after_setup, setup_logging, worker_process_init

    from worker.celery_adapter import custom_run, paired, refine, tasks
    from worker.celery_adapter.gpu_model import consume_model_queue

    state = tasks.WorkerState(app)
    options = {"acks_late": True, "reject_on_worker_lost": True, "bind": True}

    def judge(self: Any, payload: dict[str, Any]) -> None:
        tasks.judge_task(self, payload, state)

    def custom(self: Any, payload: dict[str, Any]) -> None:
        custom_run.custom_run_task(self, payload, state)

    def profile(self: Any, payload: dict[str, Any]) -> None:
        tasks.profile_task(self, payload, state)

    def start_state(**_: Any) -> None:
        state.start()

    app.task(name=str(Task.JUDGE), **options)(judge)
    app.task(name=str(Task.CUSTOM_RUN), **options)(custom)
    app.task(name=str(Task.PROFILE), **options)(profile)
    app.task(name=str(Task.REFINE_TIMING), **options)(refine.refine_task)
    app.task(name=str(Task.PAIRED_RUN), **options)(paired.paired_task)
    setup_logging.connect(json_logs, weak=False)
    celeryd_after_setup.connect(consume_low_queue, weak=False)
    celeryd_after_setup.connect(consume_model_queue, weak=False)
    worker_process_init.connect(start_state, weak=False)
