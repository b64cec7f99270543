"""The Celery configuration both sides use, as plain data, so they always agree on the broker.

Queues are declared in Celery's plain-dict form (one direct exchange per queue, keyed by its name:
a task sent to a queue lands only there), which keeps this module free of Celery and kombu.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flashjudge.contract.names import ALL_QUEUES, Queue

# kombu's filesystem transport with messages delivered in the order sent (the module says why)
EMBEDDED_TRANSPORT = "flashjudge.embedded_transport:Transport"


def celery_config(broker_url: str | None, data_dir: Path) -> dict[str, Any]:
    """Celery settings for a broker URL, or for the embedded filesystem broker under
    data_dir/broker when None (one machine needs no server)."""
    common: dict[str, Any] = {
        "task_acks_late": True,
        "task_reject_on_worker_lost": True,
        "worker_prefetch_multiplier": 1,
        "task_serializer": "json",
        "accept_content": ["json"],
        "result_backend": None,
        "task_ignore_result": True,
        "task_queues": {str(q): {"exchange": str(q), "exchange_type": "direct",
                                 "routing_key": str(q)} for q in ALL_QUEUES},
        "task_default_queue": str(Queue.CONTROL),
        "broker_connection_retry_on_startup": True,
        "worker_hijack_root_logger": False,
    }
    if broker_url:
        return {**common, "broker_url": broker_url}
    folder = data_dir / "broker"
    options = {"data_folder_in": str(folder / "queue"), "data_folder_out": str(folder / "queue"),
               "control_folder": str(folder / "control"), "store_processed": False}
    return {**common, "broker_url": "filesystem://localhost//",
            "broker_transport": EMBEDDED_TRANSPORT,
            "broker_transport_options": options, "broker_pool_limit": 0}


def make_broker_folders(config: dict[str, Any]) -> None:
    """Create the embedded broker's folders (a no-op for a real broker); called when an app is
    built, never at import."""
    for key in ("data_folder_in", "control_folder"):
        folder = config.get("broker_transport_options", {}).get(key)
        if folder:
            Path(folder).mkdir(parents=True, exist_ok=True)
