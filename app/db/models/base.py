"""The declarative base and the one clock every table's timestamps come from."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy.orm import DeclarativeBase


def utcnow() -> datetime:
    """Aware UTC now; stored naive-UTC so SQLite and PostgreSQL compare the same way."""
    return datetime.now(UTC).replace(tzinfo=None)


class Base(DeclarativeBase):
    """Declarative base for every table."""
