"""The migrations (0003_auth included) build exactly what the models declare, on both databases;
0003 gives personal tokens made before it an expiry."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import create_engine, text

from app.db.migrate import upgrade
from app.db.models import Base
from app.db.session import get_engine


def test_the_migrated_schema_matches_the_models(settings):
    with get_engine(settings.db_url).connect() as conn:
        assert compare_metadata(MigrationContext.configure(conn), Base.metadata) == []


def test_tokens_that_never_expired_get_an_expiry(tmp_path):
    url = f"sqlite:///{tmp_path / 'old.db'}"
    upgrade(url, "0002_feedback")
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO users (id, username, display_name, email, role, active, "
                          "created_at) VALUES (1, 'old', '', '', 'student', 1, '2026-01-01')"))
        conn.execute(text("INSERT INTO api_tokens (user_id, token_hash, name, created_at) VALUES "
                          "(1, 'a', 'cli', '2026-01-01'), (1, 'b', 'password-flow', '2026-01-01')"))
    upgrade(url)
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT name, kind, expires_at FROM api_tokens ORDER BY name"))
        assert [(name, kind, bool(expires)) for name, kind, expires in rows] == [
            ("cli", "personal", True), ("password-flow", "login", True)]
    engine.dispose()
