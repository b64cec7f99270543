"""course: deadlines, extensions, late marks on submissions, the languages a worker judges

Revision ID: 0006_course
Revises: 0005_insight
Create Date: 2026-12-02 10:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006_course"
down_revision = "0005_insight"
branch_labels = None
depends_on = None


def submission_columns() -> list[sa.Column]:
    """New submissions columns (fresh objects each call: a Column belongs to one table). Plain
    ADD COLUMNs with server defaults: existing rows are on time, and SQLite copies nothing."""
    return [
        sa.Column("late", sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.Column("late_penalty", sa.Float(), nullable=False, server_default="0"),
    ]


def upgrade() -> None:
    for column in submission_columns():
        op.add_column("submissions", column)
    op.add_column("workers", sa.Column("languages", sa.String(length=200), nullable=False,
                                       server_default=""))
    op.create_table(
        "deadlines",
        sa.Column("suite", sa.String(length=64), nullable=False),
        sa.Column("due_at", sa.DateTime(), nullable=False),
        sa.Column("late_policy", sa.String(length=16), nullable=False),
        sa.Column("penalty_per_day", sa.Float(), nullable=False),
        sa.Column("penalty_cap", sa.Float(), nullable=False),
        sa.Column("updated_by", sa.Integer(), nullable=True),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(["updated_by"], ["users.id"]),
        sa.PrimaryKeyConstraint("suite"),
    )
    op.create_table(
        "extensions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("suite", sa.String(length=64), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("due_at", sa.DateTime(), nullable=False),
        sa.Column("granted_by", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["granted_by"], ["users.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("suite", "user_id"),
    )
    op.create_index(op.f("ix_extensions_user_id"), "extensions", ["user_id"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_extensions_user_id"), table_name="extensions")
    op.drop_table("extensions")
    op.drop_table("deadlines")
    op.drop_column("workers", "languages")
    for column in reversed(submission_columns()):
        op.drop_column("submissions", column.name)
