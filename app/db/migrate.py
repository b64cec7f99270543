"""Run the Alembic migrations shipped in app/migrations (used by serve, commands and tests)."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config

ALEMBIC_INI = Path(__file__).resolve().parent.parent / "alembic.ini"


def alembic_config(url: str) -> Config:
    """An Alembic config pointing at `url` (never read from the ini, which holds no secrets)."""
    config = Config(str(ALEMBIC_INI))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


def upgrade(url: str, revision: str = "head") -> None:
    """Bring the database at `url` up to `revision`; safe to run on every start."""
    command.upgrade(alembic_config(url), revision)
