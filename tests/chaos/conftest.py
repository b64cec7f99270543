"""Fixtures of the chaos tests: a real deployment (own Redis, PostgreSQL schema, control and judge
workers as processes, the app in-process) and students to submit as."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from app.accounts import users
from app.core.config import Settings
from app.db.migrate import upgrade
from app.db.models import Submission
from app.db.session import get_engine
from app.main import create_app
from app.wiring import wired_sessions
from flashjudge.contract import Status
from testcases.prepared import prepare_suite
from testcases.suite import load_suite
from tests.app.utils.processes import REPO
from tests.chaos.deployment import REDIS_SERVER, Deployment, RedisServer
from tests.pg_schema import PG_URL, create_schema, drop_schema
from tests.service_fixtures import TEST_SECRET

SOURCE = (REPO / "tests" / "app" / "utils" / "seq_attention.c").read_bytes()  # AC on t01


@dataclass
class Live:
    """A running deployment and the means to drive it."""

    settings: Settings  # every process's configuration
    redis: RedisServer  # the broker, killable
    workers: Deployment  # control and judge workers, killable
    client: TestClient  # the app, in this process (its sweeper runs in a thread)

    def submit_all(self, tokens: list[str]) -> list[int]:
        """One c-program submission per student (202 even while the broker is down)."""
        ids = []
        for token in tokens:
            response = self.client.post(
                "/api/submissions", headers={"Authorization": f"Bearer {token}"},
                data={"language": "c-program"}, files=[("files", ("hw4.c", SOURCE))])
            assert response.status_code == 202, response.text
            ids.append(response.json()["id"])
        return ids

    def done(self) -> int:
        with wired_sessions(self.settings.db_url)() as db:
            return db.scalar(select(func.count()).select_from(Submission)
                             .where(Submission.status == Status.DONE)) or 0

    def submissions(self) -> list[Submission]:
        with wired_sessions(self.settings.db_url)() as db:
            rows = list(db.scalars(select(Submission).order_by(Submission.id)))
            db.expunge_all()
            return rows

    def students(self, count: int) -> list[str]:
        """`count` students (no password: token only), their personal tokens."""
        tokens = []
        with wired_sessions(self.settings.db_url)() as db:
            for i in range(count):
                user = users.add_user(db, f"student{i:03d}", "student", None)
                tokens.append(users.issue_token(db, user, "chaos", None))
            db.commit()
        return tokens


@pytest.fixture
def deploy(tmp_path: Path, engine_cache: Path) -> Iterator[Callable[..., Live]]:
    """deploy(**settings) starts everything; it is all stopped and dropped afterwards."""
    if REDIS_SERVER is None or shutil.which("bwrap") is None:
        pytest.skip("the chaos tests need redis-server and bubblewrap on this machine")
    suite = load_suite("hw4-mini")
    prepare_suite(suite, engine_cache, device="cpu", tests=["t01"])  # no worker prepares it
    data = tmp_path / "data"
    data.mkdir()
    (data / "cache").symlink_to(engine_cache)
    redis = RedisServer(tmp_path / "redis")
    schema = create_schema("fj_chaos")
    started: list[tuple[Deployment, TestClient]] = []

    def start(**overrides: Any) -> Live:
        redis.start()
        settings = Settings(
            environment="test", secret_key=TEST_SECRET, data_dir=data, suite="hw4-mini",
            judge_tests="t01", database_url=PG_URL.format(schema=schema),
            broker_url=redis.url, submit_interval_s=0, migrate_on_start=False,
            custom_run_queue="cpu", **overrides)
        upgrade(settings.db_url)
        workers = Deployment(settings, tmp_path)
        workers.start("control")
        workers.start("judge")
        client = TestClient(create_app(settings))
        client.__enter__()
        started.append((workers, client))
        return Live(settings, redis, workers, client)

    try:
        yield start
    finally:
        for workers, client in started:
            client.__exit__(None, None, None)
            workers.stop_all()
            get_engine(workers.settings.db_url).dispose()
        redis.stop()
        drop_schema(schema)
