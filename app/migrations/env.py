"""Alembic environment: runs migrations on the URL the caller put in the config."""

from __future__ import annotations

from alembic import context

from app.db.models import Base
from app.db.session import make_engine

config = context.config
target_metadata = Base.metadata


def run_migrations() -> None:
    """Online migrations only: the service always migrates a live database."""
    connection = config.attributes.get("connection")
    if connection is not None:
        context.configure(connection=connection, target_metadata=target_metadata)
        with context.begin_transaction():
            context.run_migrations()
        return
    url = config.get_main_option("sqlalchemy.url")
    if url is None:
        raise SystemExit("alembic: no sqlalchemy.url set; migrate through app/db/migrate.py")
    engine = make_engine(url)
    with engine.connect() as conn:
        context.configure(connection=conn, target_metadata=target_metadata)
        with context.begin_transaction():
            context.run_migrations()
    engine.dispose()


run_migrations()
