"""boards: one standing per assignment

Revision ID: 0014_boards
Revises: 0013_board_names
Create Date: 2026-11-26 10:00:00

`standings` gains `assignment_id` (whose board a row is on) in its unique key. The standing is
derived data: the table is made again empty and `board_state.built` set false, so the first
writer or reader after the upgrade rebuilds every board from the submissions
(app/scoreboard/standing/maintain.py). The freeze moves from its `state` row to each
assignment's `frozen_at`. Nothing is lost; the downgrade does the same backwards.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0014_boards"
down_revision = "0013_board_names"
branch_labels = None
depends_on = None

FROZEN_KEY = "scoreboard_frozen_at"  # the freeze's `state` row before this revision


def standings(per_assignment: bool) -> None:
    """The standings table, empty, with or without the assignment in its key."""
    key = ["assignment_id", "cut", "gpu_model", "user_id"] if per_assignment else [
        "cut", "gpu_model", "user_id"]
    op.create_table(
        "standings",
        sa.Column("id", sa.Integer(), nullable=False),
        *([sa.Column("assignment_id", sa.Integer(), nullable=False)] if per_assignment else []),
        sa.Column("cut", sa.String(length=8), nullable=False),
        sa.Column("gpu_model", sa.String(length=200), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("username", sa.String(length=64), nullable=False),
        sa.Column("display_name", sa.String(length=200), nullable=False),
        sa.Column("submission_id", sa.Integer(), nullable=False),
        sa.Column("passed", sa.Integer(), nullable=False),
        sa.Column("total_time", sa.Float(), nullable=False),
        sa.Column("score", sa.Integer(), nullable=False),
        sa.Column("late", sa.Boolean(), nullable=False),
        sa.Column("band_s", sa.Float(), nullable=True),
        sa.Column("tests", sa.JSON(), nullable=False),
        sa.Column("stamp", sa.Integer(), nullable=False),
        sa.Column("penalty", sa.Float(), nullable=False, server_default="0"),  # 0013_board_names
        sa.Column("alias", sa.String(length=40), nullable=True),
        sa.Column("hidden", sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint(*key),
    )
    op.create_index(op.f("ix_standings_user_id"), "standings", ["user_id"], unique=False)


def remake(per_assignment: bool) -> None:
    op.drop_index(op.f("ix_standings_user_id"), table_name="standings")
    op.drop_table("standings")
    standings(per_assignment)
    op.execute(sa.text("UPDATE board_state SET built = :no").bindparams(no=False))


def upgrade() -> None:
    remake(True)
    freeze_per_assignment()


def downgrade() -> None:
    remake(False)
    conn = op.get_bind()
    first = conn.execute(sa.text("SELECT MIN(frozen_at) FROM assignments")).scalar()
    if first is not None:
        value = first if isinstance(first, str) else first.isoformat()
        conn.execute(sa.text("INSERT INTO state (key, value) VALUES (:k, :v)"),
                     {"k": FROZEN_KEY, "v": value.replace(" ", "T")})


def freeze_per_assignment() -> None:
    """Until now one freeze (a `state` row) froze the one board: it freezes every assignment's
    board as it stood (0010 copied it; a freeze or thaw since then is taken from the row),
    and the row goes."""
    conn = op.get_bind()
    value = conn.execute(sa.text("SELECT value FROM state WHERE key = :k"),
                         {"k": FROZEN_KEY}).scalar()
    conn.execute(sa.text("UPDATE assignments SET frozen_at = :f"),
                 {"f": value[:26].replace("T", " ") if value else None})
    conn.execute(sa.text("DELETE FROM state WHERE key = :k"), {"k": FROZEN_KEY})
