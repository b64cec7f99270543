"""standing: each student's board rows kept at write time, and the board's version

Revision ID: 0008_standing
Revises: 0007_live
Create Date: 2026-11-24 12:00:00

The tables start empty and `board_state` without its row: the first writer or reader after the
upgrade finds the standing not built and computes it from the submissions
(app/scoreboard/standing/), so this migration needs none of the ranking rules.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008_standing"
down_revision = "0007_live"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "standings",
        sa.Column("id", sa.Integer(), nullable=False),
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
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("cut", "gpu_model", "user_id"),
    )
    op.create_index(op.f("ix_standings_user_id"), "standings", ["user_id"], unique=False)
    op.create_table(
        "board_state",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("built", sa.Boolean(), nullable=False),
        sa.Column("models", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )


def downgrade() -> None:
    op.drop_table("board_state")
    op.drop_index(op.f("ix_standings_user_id"), table_name="standings")
    op.drop_table("standings")
