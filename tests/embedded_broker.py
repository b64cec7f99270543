"""The embedded (filesystem) broker's Celery settings for a test's data dir, folders made."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flashjudge.contract import celery_config, make_broker_folders


def embedded_broker(data_dir: Path) -> dict[str, Any]:
    config = celery_config(None, data_dir)
    make_broker_folders(config)
    return config
