"""A deployment migrated before the migrations were renumbered holds an old revision id; the
project's migrate brings it to head without losing its rows, on both databases."""

from __future__ import annotations

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import text

from app.db.migrate import alembic_config, upgrade
from app.db.models import Base
from app.db.session import make_engine

# The chain as it stood at commit 829c150, in order: the ids databases were stamped with.
OLD_CHAIN = ["0001", "0002", "0003_auth", "0005_exactly_once", "0007_insight", "0004_course",
             "0008_live", "0009_standing"]


def new_chain(url: str) -> list[str]:
    scripts = ScriptDirectory.from_config(alembic_config(url))
    return [s.revision for s in reversed(list(scripts.walk_revisions()))]


def at_old_revision(url: str, place: int) -> None:
    """The schema the old files built up to `place`, stamped with the old id, holding one user."""
    command.upgrade(alembic_config(url), new_chain(url)[place])
    engine = make_engine(url)
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO users (id, username, display_name, email, role, active, "
                          "created_at) VALUES (1, 'old', 'Old', '', 'student', true, "
                          "CURRENT_TIMESTAMP)"))
        conn.execute(text("UPDATE alembic_version SET version_num = :old"),
                     {"old": OLD_CHAIN[place]})
    engine.dispose()


@pytest.mark.parametrize("place", range(len(OLD_CHAIN)), ids=OLD_CHAIN)
def test_a_database_at_an_old_id_upgrades_to_head_and_keeps_its_rows(url: str,
                                                                      place: int) -> None:
    at_old_revision(url, place)
    upgrade(url)
    engine = make_engine(url)
    with engine.connect() as conn:
        assert conn.scalars(text("SELECT version_num FROM alembic_version")).all() == [
            new_chain(url)[-1]]
        assert conn.scalars(text("SELECT username FROM users")).all() == ["old"]
        assert compare_metadata(MigrationContext.configure(conn), Base.metadata) == []
    engine.dispose()
