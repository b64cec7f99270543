"""Shared fixtures for every test folder.

Tests mirror the source tree (tests/app/api/ for app/api/, tests/worker/sandbox/ for
worker/sandbox/, ...), so fixtures several folders need live in plugin modules loaded here:
`service_fixtures` (settings, database, client, users for both backends) and `engine_fixtures`
(the prepared hw4-mini cache, a CPU sandbox, skipping `gpu` tests without a GPU).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from worker.settings import get_worker_settings

pytest_plugins = ["tests.service_fixtures", "tests.engine_fixtures"]


@pytest.fixture(autouse=True)
def fresh_worker_settings() -> Iterator[None]:
    """Worker settings are read once per process; a test that changes FLASHJUDGE_* variables
    must see them, and must not leave its values to the next test."""
    get_worker_settings.cache_clear()
    yield
    get_worker_settings.cache_clear()
