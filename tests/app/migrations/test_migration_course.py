"""Migration 0006_course on both databases: deadlines, extensions, the late marks and a worker's
languages match the models, rows from before are on time, and the migration goes back."""

from __future__ import annotations

import importlib

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect, text

from app.db.migrate import alembic_config, upgrade
from app.db.models import Base
from app.db.session import make_engine

REVISION = importlib.import_module("app.migrations.versions.0006_course")
TABLES = {"deadlines", "extensions"}
COLUMNS = {("submissions", "late"), ("submissions", "late_penalty"), ("workers", "languages")}


def ours(url: str) -> list:
    """What differs between the database and the models, in what this migration owns."""
    engine = make_engine(url)
    with engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    engine.dispose()
    names = TABLES | {c for _, c in COLUMNS}
    return [d for d in diff if names & set(str(d).replace('"', "'").split("'"))]


def test_the_schema_matches_and_older_rows_are_on_time_and_it_goes_back(url: str) -> None:
    command.upgrade(alembic_config(url), REVISION.down_revision)
    engine = make_engine(url)
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO users (id, username, display_name, email, role, active, "
                          "created_at) VALUES (1, 'old', 'Old', '', 'student', true, "
                          "CURRENT_TIMESTAMP)"))
        conn.execute(text("INSERT INTO submissions (id, user_id, language, suite, status, "
                          "attempt, job_key, task_id, compile_log, error, created_at, "
                          "diagnosis_status, flag_status) VALUES (1, 1, 'c-program', 'hw4', "
                          "'done', 1, '', '', '', '', CURRENT_TIMESTAMP, '', '')"))
    upgrade(url)
    assert ours(url) == []
    with engine.connect() as conn:
        assert conn.execute(text("SELECT late, late_penalty FROM submissions")).one() == (
            False, 0.0)
    command.downgrade(alembic_config(url), REVISION.down_revision)
    tables = set(inspect(engine).get_table_names())
    columns = {(t, c["name"]) for t in ("submissions", "workers")
               for c in inspect(engine).get_columns(t)}
    engine.dispose()
    assert not TABLES & tables and not COLUMNS & columns
    upgrade(url)
    assert ours(url) == []
