"""The migration tests' database: each test runs on an empty SQLite file and an empty PostgreSQL
schema, and migrates it itself."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.pg_schema import PG_URL, create_schema, drop_schema


@pytest.fixture(params=["sqlite", "postgres"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'migrate.db'}"
        return
    schema = create_schema("fj_migrate")
    yield PG_URL.format(schema=schema)
    drop_schema(schema)
