"""Fixtures for the service: every API test runs on both setups, both real.

- "embedded": SQLite (WAL) + kombu's filesystem broker under a temporary data dir;
- "postgres": PostgreSQL (a fresh schema per session, migrated with Alembic) + Redis.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from fastapi.testclient import TestClient
from sqlalchemy import delete
from sqlalchemy.orm import Session

from app.core.config import Settings, get_settings
from app.db.migrate import upgrade
from app.db.models import Base
from app.db.session import get_engine
from app.main import create_app
from app.submissions.dispatch import fingerprint_batch
from app.wiring import wired_sessions
from tests.app.utils.factories import Account, make_user
from tests.pg_schema import PG_URL, create_schema, drop_schema
from tests.redis_claim import claimed_redis_url, flush_but_lock

TEST_SECRET = "test-secret-not-for-production"


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """This session's own Redis database (see tests/redis_claim.py)."""
    with claimed_redis_url() as url:
        yield url


@pytest.fixture(scope="session", params=["embedded", "postgres"])
def backend_settings(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
                     ) -> Iterator[Settings]:
    """Settings for one backend, its database migrated for real with Alembic."""
    data_dir = tmp_path_factory.mktemp(f"data-{request.param}")
    schema = None
    overrides: dict = {}
    if request.param == "postgres":
        schema = create_schema("fj_test")
        overrides = {"database_url": PG_URL.format(schema=schema),
                     "broker_url": request.getfixturevalue("redis_url")}
    settings = Settings(environment="test", secret_key=TEST_SECRET, data_dir=data_dir,
                        suite="hw4-mini", submit_interval_s=0, sweep_interval_s=0,
                        migrate_on_start=False, custom_run_queue="cpu", freeze_gc_at_start=False,
                        **overrides)
    upgrade(settings.db_url)
    wired_sessions(settings.db_url)  # as a process does at start (app/wiring.py)
    yield settings
    get_engine(settings.db_url).dispose()
    if schema:
        drop_schema(schema)


@pytest.fixture
def settings(backend_settings: Settings) -> Iterator[Settings]:
    """The backend's settings, with every table emptied after the test."""
    yield backend_settings
    fingerprint_batch(backend_settings).flush()  # its requests land now, not in the next test
    engine = get_engine(backend_settings.db_url)
    with engine.begin() as conn:
        for table in reversed(Base.metadata.sorted_tables):
            conn.execute(delete(table))
    if backend_settings.broker_url:
        flush_but_lock(redis.Redis.from_url(backend_settings.broker_url))
    else:  # the embedded broker's pending messages: tasks of rows that no longer exist
        for message in (backend_settings.data_dir / "broker" / "queue").glob("*"):
            message.unlink(missing_ok=True)
        shutil.rmtree(backend_settings.data_dir / "claims", ignore_errors=True)  # its ledger


@pytest.fixture
def db(settings: Settings) -> Iterator[Session]:
    session = wired_sessions(settings.db_url)()
    yield session
    session.close()


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(settings)) as test_client:
        yield test_client


@pytest.fixture
def student(db: Session) -> Account:
    return make_user(db, "alice", "student")


@pytest.fixture
def other_student(db: Session) -> Account:
    return make_user(db, "bob", "student")


@pytest.fixture
def ta(db: Session) -> Account:
    return make_user(db, "tara", "ta")


@pytest.fixture
def sources() -> Path:
    return Path(__file__).parent / "app" / "utils"


@pytest.fixture
def control_env(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> Iterator[Settings]:
    """The environment a control worker reads (get_settings()), pointing at this backend: the
    control tasks' own functions then record into the test database."""
    monkeypatch.setenv("FLASHJUDGE_DATA_DIR", str(settings.data_dir))
    if settings.database_url:
        monkeypatch.setenv("FLASHJUDGE_DATABASE_URL", settings.database_url)
    else:
        monkeypatch.delenv("FLASHJUDGE_DATABASE_URL", raising=False)
    get_settings.cache_clear()
    yield get_settings()
    get_settings.cache_clear()
