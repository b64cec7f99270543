"""Shared fixtures for every test folder.

Tests mirror the source tree (tests/app/api/ for app/api/, tests/worker/sandbox/ for
worker/sandbox/, ...), so fixtures several folders need live in plugin modules loaded here:
`service_fixtures` (settings, database, client, users for both backends) and `engine_fixtures`
(the prepared hw4-mini cache, a CPU sandbox, skipping `gpu` tests without a GPU).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

import pytest

from worker.celery_adapter.app import celery_app
from worker.settings import get_worker_settings

pytest_plugins = ["tests.service_fixtures", "tests.engine_fixtures"]


@pytest.fixture(autouse=True)
def fresh_worker_settings() -> Iterator[None]:
    """Worker settings are read once per process; a test that changes FLASHJUDGE_* variables
    must see them, and must not leave its values to the next test."""
    get_worker_settings.cache_clear()
    yield
    get_worker_settings.cache_clear()


WorkerEnv = Callable[[Mapping[str, str | None]], None]


@pytest.fixture
def worker_env_vars(monkeypatch: pytest.MonkeyPatch) -> Iterator[WorkerEnv]:
    """Point this process's worker side (settings, Celery app) at new FLASHJUDGE_* variables
    (None unsets one). Both caches are cleared after the variables are set, not before: a thread
    an earlier test left running may read the settings in between, and a message sent through
    them would land in another test's broker."""

    def point(values: Mapping[str, str | None]) -> None:
        for key, value in values.items():
            if value is None:
                monkeypatch.delenv(key, raising=False)
            else:
                monkeypatch.setenv(key, value)
        get_worker_settings.cache_clear()
        celery_app.cache_clear()

    yield point
    get_worker_settings.cache_clear()
    celery_app.cache_clear()
