"""Every migration together: upgrading an empty database to head gives exactly the models' schema
(on both databases), so a table or column added to the models without its migration fails here,
and the newest migration goes back and forward again."""

from __future__ import annotations

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect

from app.db.migrate import alembic_config, upgrade
from app.db.models import Base
from app.db.session import make_engine


def differences(url: str) -> list:
    engine = make_engine(url)
    with engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    engine.dispose()
    return diff


def test_head_is_the_models_schema_and_the_newest_step_goes_back(url: str) -> None:
    upgrade(url)
    assert differences(url) == []
    head = ScriptDirectory.from_config(alembic_config(url)).get_current_head()
    assert head is not None  # one head: the migrations do not fork
    newest = ScriptDirectory.from_config(alembic_config(url)).get_revision(head)
    assert newest is not None and isinstance(newest.down_revision, str)
    command.downgrade(alembic_config(url), newest.down_revision)
    assert differences(url) != []  # the newest step really was undone
    upgrade(url)
    assert differences(url) == []
    engine = make_engine(url)
    assert "changes" in inspect(engine).get_table_names()
    engine.dispose()
