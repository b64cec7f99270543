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
from flashjudge.contract import Queue, celery_config, make_broker_folders
from flashjudge.logctx import configure_json_logging
from worker.settings import get_worker_settings


def make_celery() -> Celery:
    """Build the worker-side app; its tasks are worker/celery_adapter/handlers.py's."""
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
    """The worker's tasks (worker/celery_adapter/handlers.py) and signal handlers, on this app
    (called once, by make_celery)."""
    from celery.signals import celeryd_after_setup, setup_logging

    from worker.celery_adapter.gpu_model import consume_model_queue
    from worker.celery_adapter.handlers import register_tasks

    register_tasks(app)
    setup_logging.connect(json_logs, weak=False)
    celeryd_after_setup.connect(consume_low_queue, weak=False)
    celeryd_after_setup.connect(consume_model_queue, weak=False)
