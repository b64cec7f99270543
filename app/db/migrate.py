"""Run the Alembic migrations shipped in app/migrations (used by serve, commands and tests)."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import inspect, text

from app.db.session import make_engine

ALEMBIC_INI = Path(__file__).resolve().parent.parent / "alembic.ini"

# The migrations were renumbered once to follow their chain, under one id style. A database migrated
# before holds an old id in alembic_version, naming the same schema as its new id here.
RENAMED = {
    "0001": "0001_initial_schema",
    "0002": "0002_feedback",
    "0005_exactly_once": "0004_exactly_once",
    "0007_insight": "0005_insight",
    "0004_course": "0006_course",
    "0008_live": "0007_live",
    "0009_standing": "0008_standing",
}


def alembic_config(url: str) -> Config:
    """An Alembic config pointing at `url` (never read from the ini, which holds no secrets)."""
    config = Config(str(ALEMBIC_INI))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


def rename_old_revisions(url: str) -> None:
    """Give a database stamped with a revision id from before the renumbering its new id, so
    Alembic finds it in the chain instead of refusing to upgrade an unknown revision."""
    engine = make_engine(url)
    try:
        with engine.begin() as conn:
            if not inspect(conn).has_table("alembic_version"):
                return
            for old, new in RENAMED.items():
                conn.execute(text("UPDATE alembic_version SET version_num = :new "
                                  "WHERE version_num = :old"), {"old": old, "new": new})
    finally:
        engine.dispose()


def upgrade(url: str, revision: str = "head", suite: str | None = None) -> None:
    """Bring the database at `url` up to `revision`; safe to run on every start. `suite`, the
    configured one (FLASHJUDGE_SUITE), tells 0010_assignments which of the assignments it makes
    from an older database stays open (None: all of them)."""
    rename_old_revisions(url)
    config = alembic_config(url)
    config.attributes["suite"] = suite
    command.upgrade(config, revision)
