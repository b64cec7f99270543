"""The judge workers' Celery app, configured from environment variables only.

Workers hold no database credentials and import nothing from app/: they read a broker URL
(FLASHJUDGE_BROKER_URL, Redis in a cluster) or fall back to kombu's filesystem transport under
FLASHJUDGE_DATA_DIR/broker, so one machine needs no server. Results go back as tasks on the
`control` queue, consumed next to the database by app/control_tasks.py.

Logs are JSON lines (flashjudge.logctx) tagged with the submission being judged, the same format
as the web service's, so one grep for a submission id follows it across containers.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from celery import Celery
from celery.signals import celeryd_after_setup, setup_logging
from kombu import Exchange, Queue

from flashjudge.logctx import configure_json_logging

QUEUES = ("gpu", "cpu", "control", "gpu-low")
LOW_QUEUE = "gpu-low"  # profiles: read by GPU workers, after their judgings (worker/tasks.py)


def data_dir() -> Path:
    """The data directory shared with `flashjudge serve` (broker files, suite cache)."""
    return Path(os.environ.get("FLASHJUDGE_DATA_DIR", "data")).resolve()


def broker_settings(broker_url: str | None, data: Path) -> dict[str, Any]:
    """Celery settings for a broker URL, or for the embedded filesystem broker when None.

    app/queue.py imports this (configuration only, no worker logic) so both sides always agree
    on the broker.
    """
    common: dict[str, Any] = {
        "task_acks_late": True,
        "task_reject_on_worker_lost": True,
        "worker_prefetch_multiplier": 1,
        "task_serializer": "json",
        "accept_content": ["json"],
        "result_backend": None,
        "task_ignore_result": True,
        # one direct exchange per queue, keyed by its name: a task sent to a queue lands only there
        "task_queues": [Queue(name, Exchange(name, type="direct"), routing_key=name)
                        for name in QUEUES],
        "task_default_queue": "control",
        "broker_connection_retry_on_startup": True,
        "worker_hijack_root_logger": False,
    }
    if broker_url:
        return {**common, "broker_url": broker_url}
    folder = data / "broker"
    for sub in ("queue", "control"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    options = {
        "data_folder_in": str(folder / "queue"),
        "data_folder_out": str(folder / "queue"),
        "control_folder": str(folder / "control"),
        "store_processed": False,
    }
    return {
        **common,
        "broker_url": "filesystem://localhost//",
        "broker_transport_options": options,
        "broker_pool_limit": 0,
    }


def make_celery() -> Celery:
    """Build the worker-side app; tasks live in worker/tasks.py."""
    app = Celery("flashjudge-worker")
    app.conf.update(broker_settings(os.environ.get("FLASHJUDGE_BROKER_URL") or None, data_dir()))
    app.conf.imports = ("worker.tasks",)
    return app


celery_app = make_celery()


@setup_logging.connect
def _json_logs(**_: object) -> None:
    """Replace Celery's own log setup (worker and pool children alike) by JSON lines on stderr;
    connecting this signal also stops Celery from redirecting stdout/stderr into its logger."""
    configure_json_logging(os.environ.get("FLASHJUDGE_LOG_LEVEL", "INFO"))


@celeryd_after_setup.connect
def consume_low_queue(sender: str, instance: Any, **_: Any) -> None:
    """A worker of the `gpu` queue also takes the low-priority `gpu-low` queue (ncu profiles),
    so `flashjudge worker`/`serve` need no extra -Q; it is added after the worker's own queues."""
    queues = instance.app.amqp.queues
    selected = queues.consume_from or {}
    if "gpu" in selected and LOW_QUEUE not in selected:
        queues.select_add(queues[LOW_QUEUE])  # the declared Queue: its own direct exchange
