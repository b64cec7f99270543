"""Fixtures for the operations endpoints: the real app on both setups, and real worker processes.

- "embedded": SQLite + kombu's filesystem broker in a temporary data dir;
- "cluster": PostgreSQL (a fresh schema) + Redis (database 12, which no other test uses).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.core.config import Settings
from app.db.migrate import upgrade
from app.db.session import get_engine
from app.main import create_app
from tests.pg_schema import PG_URL, create_schema, drop_schema
from tests.redis_claim import claimed_redis_url

REPO = Path(__file__).resolve().parents[3]
TEST_SECRET = "deploy-tests-secret-not-for-production"


def make_settings(data_dir: Path, **overrides: Any) -> Settings:
    """Test settings: no sweeper, no migration on start unless asked, a non-default secret."""
    values: dict[str, Any] = {"environment": "test", "secret_key": TEST_SECRET,
                                 "data_dir": data_dir, "sweep_interval_s": 0,
                                 "migrate_on_start": False, **overrides}
    return Settings(**values)


@pytest.fixture(scope="module", params=["embedded", "cluster"])
def settings(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
             ) -> Iterator[Settings]:
    """Migrated settings for one setup; the schema and the Redis database are cleaned after."""
    with contextlib.ExitStack() as stack:
        overrides: dict[str, str] = {}
        schema = None
        if request.param == "cluster":
            broker = stack.enter_context(claimed_redis_url())
            schema = create_schema("fj_deploy")
            overrides = {"database_url": PG_URL.format(schema=schema), "broker_url": broker}
        settings = make_settings(tmp_path_factory.mktemp(request.param), **overrides)
        upgrade(settings.db_url)
        yield settings
        get_engine(settings.db_url).dispose()
        if schema:
            drop_schema(schema)


@pytest.fixture
def ready_env(settings: Settings) -> Iterator[Callable[[str], None]]:
    """Set the queues /readyz requires for this test (FLASHJUDGE_READY_QUEUES in production)."""

    def set_queues(queues: str) -> None:
        settings.ready_queues = queues

    settings.ready_queues = ""
    yield set_queues
    settings.ready_queues = ""


@pytest.fixture
def client(settings: Settings, ready_env: Callable[[str], None]) -> Iterator[TestClient]:
    with TestClient(create_app(settings)) as test_client:
        yield test_client


def worker_env(settings: Settings) -> dict[str, str]:
    """The environment compose gives a worker container, for these settings."""
    env = {**os.environ, "FLASHJUDGE_DATA_DIR": str(settings.data_dir),
           "FLASHJUDGE_DATABASE_URL": settings.db_url, "PYTHONPATH": str(REPO)}
    env.pop("FLASHJUDGE_BROKER_URL", None)
    if settings.broker_url:
        env["FLASHJUDGE_BROKER_URL"] = settings.broker_url
    return env


@pytest.fixture
def live_workers(settings: Settings) -> Iterator[list[subprocess.Popen]]:
    """The real `flashjudge worker --control` and `flashjudge worker --gpus none` processes."""
    flashjudge = str(Path(sys.executable).with_name("flashjudge"))
    procs = [subprocess.Popen([flashjudge, "worker", *args], env=worker_env(settings),
                              cwd=settings.data_dir, start_new_session=True,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
             for args in (["--control"], ["--gpus", "none"])]
    yield procs
    for proc in procs:
        proc.send_signal(signal.SIGTERM)
    for proc in procs:
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def wait_until(predicate: Callable[[], bool], timeout_s: float, what: str) -> None:
    """Poll `predicate` (each call is itself a bounded network round trip) until it holds."""
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail(f"{what} did not happen within {timeout_s:g} s")
