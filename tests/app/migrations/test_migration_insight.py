"""Migration 0005_insight on both databases: the schema matches the models, and it goes back."""

from __future__ import annotations

import importlib

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect

from app.db.migrate import alembic_config, upgrade
from app.db.models import Base
from app.db.session import make_engine

OURS = {"similarity_sources", "fingerprints"}
BEFORE = importlib.import_module("app.migrations.versions.0005_insight").down_revision


def differences(url: str) -> list:
    """What differs between the database and the models, for what this migration owns."""
    engine = make_engine(url)
    with engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    engine.dispose()
    return [d for d in diff if OURS & set(str(d).split("'")) or "gpu_model" in str(d)]


def test_the_schema_matches_the_models_and_the_migration_goes_back(url: str) -> None:
    upgrade(url)
    assert differences(url) == []
    command.downgrade(alembic_config(url), BEFORE)
    engine = make_engine(url)
    tables = set(inspect(engine).get_table_names())
    columns = {c["name"] for c in inspect(engine).get_columns("submissions")}
    engine.dispose()
    assert not OURS & tables and "gpu_model" not in columns
    upgrade(url)
    assert differences(url) == []
