"""A throwaway PostgreSQL schema per test session, on the local server (trust auth, db `test`)."""

from __future__ import annotations

import uuid

import psycopg
import pytest

PG_SERVER = "postgresql://postgres@127.0.0.1:5432/test"
PG_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test?options=-csearch_path%3D{schema}"


def create_schema(prefix: str) -> str:
    """A new empty schema named `prefix_<random>`; skips the test when PostgreSQL is away."""
    schema = f"{prefix}_{uuid.uuid4().hex[:10]}"
    try:
        with psycopg.connect(PG_SERVER, autocommit=True, connect_timeout=3) as conn:
            conn.execute(f"CREATE SCHEMA {schema}")
    except psycopg.OperationalError as exc:
        pytest.skip(f"PostgreSQL is not reachable at 127.0.0.1:5432: {exc}")
    return schema


def drop_schema(schema: str) -> None:
    with psycopg.connect(PG_SERVER, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
