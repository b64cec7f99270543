"""The API process leaves start-up's objects out of the collector and collects young objects
rarely, so that a full collection never stalls hundreds of board requests (app/main.py's
settle_garbage_collector; the pauses it removed are in docs/benchmarks.md)."""

from __future__ import annotations

import gc
from pathlib import Path

from fastapi.testclient import TestClient

from app.core.config import Settings
from app.main import GC_THRESHOLDS, create_app
from tests.service_fixtures import TEST_SECRET


def test_a_serving_process_collects_rarely_and_puts_the_collector_back_after(
        tmp_path: Path) -> None:
    before = gc.get_threshold()
    settings = Settings(environment="test", secret_key=TEST_SECRET, data_dir=tmp_path,
                        suite="hw4-mini", sweep_interval_s=0, freeze_gc_at_start=True)
    with TestClient(create_app(settings)) as client:
        assert client.get("/healthz").status_code == 200
        assert gc.get_threshold() == GC_THRESHOLDS
        assert gc.get_freeze_count() > 10_000  # start-up's modules and routes, out of sight
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0
