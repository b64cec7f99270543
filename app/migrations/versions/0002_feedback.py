"""feedback, diagnosis, flags and profiles

Revision ID: 0002_feedback
Revises: 0001_initial_schema
Create Date: 2026-11-22 09:40:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002_feedback"
down_revision = "0001_initial_schema"
branch_labels = None
depends_on = None


def columns() -> list[sa.Column]:
    """The new submissions columns (fresh objects each call: a Column belongs to one table)."""
    return [
        sa.Column("feedback", sa.JSON(), nullable=True),
        sa.Column("diagnosis", sa.JSON(), nullable=True),
        sa.Column("diagnosis_status", sa.String(length=16), nullable=False, server_default=""),
        sa.Column("flag_status", sa.String(length=16), nullable=False, server_default=""),
        sa.Column("flag_cleared_by", sa.Integer(), nullable=True),
        sa.Column("flag_cleared_at", sa.DateTime(), nullable=True),
    ]


def upgrade() -> None:
    # plain ADD COLUMNs (flag_cleared_by without a foreign key): SQLite would have to copy the
    # table, and dropping the old copy with foreign keys on would cascade to its children
    for column in columns():
        op.add_column("submissions", column)
    op.create_table(
        "profiles",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("submission_id", sa.Integer(), nullable=False),
        sa.Column("requested_by", sa.Integer(), nullable=False),
        sa.Column("test_id", sa.String(length=16), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("summary", sa.JSON(), nullable=True),
        sa.Column("error", sa.Text(), nullable=False),
        sa.Column("report_file", sa.String(length=200), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("finished_at", sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(["submission_id"], ["submissions.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["requested_by"], ["users.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(op.f("ix_profiles_submission_id"), "profiles", ["submission_id"],
                    unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_profiles_submission_id"), table_name="profiles")
    op.drop_table("profiles")
    for column in reversed(columns()):
        op.drop_column("submissions", column.name)
