"""Shared fixtures for every test folder."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from worker.settings import get_worker_settings


@pytest.fixture(autouse=True)
def fresh_worker_settings() -> Iterator[None]:
    """Worker settings are read once per process; a test that changes FLASHJUDGE_* variables
    must see them, and must not leave its values to the next test."""
    get_worker_settings.cache_clear()
    yield
    get_worker_settings.cache_clear()
