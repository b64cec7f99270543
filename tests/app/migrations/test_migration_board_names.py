"""0013_board_names on a database in use: users keep their tokens (no table copy cascades them
away), nobody is aliased or hidden, and the standing is marked for a rebuild so the new columns
(the late penalty) are filled before anyone reads a board."""

from __future__ import annotations

from sqlalchemy import text

from app.db.migrate import upgrade
from app.db.session import make_engine


def test_old_users_keep_their_tokens_and_the_standing_is_rebuilt(url: str) -> None:
    upgrade(url, "0012_floor")
    engine = make_engine(url)
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO users (id, username, display_name, email, role, active, "
                          "created_at) VALUES (1, 'old', 'Old', '', 'student', TRUE, "
                          "'2026-01-01')"))
        conn.execute(text("INSERT INTO api_tokens (user_id, token_hash, name, created_at, kind) "
                          "VALUES (1, 'a', 'cli', '2026-01-01', 'personal')"))
        conn.execute(text("INSERT INTO board_state (id, version, built, models) "
                          "VALUES (1, 7, TRUE, '[]')"))
    upgrade(url)
    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM api_tokens")).scalar() == 1
        user = conn.execute(text("SELECT board_alias, board_hidden FROM users")).one()
        assert (user.board_alias, bool(user.board_hidden)) == (None, False)
        assert not conn.execute(text("SELECT built FROM board_state")).scalar()
    engine.dispose()
