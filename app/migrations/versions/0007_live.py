"""live: the change feed that API processes poll once each instead of once per open stream

Revision ID: 0007_live
Revises: 0006_course
Create Date: 2026-11-24 10:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007_live"
down_revision = "0006_course"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "changes",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("topic", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_changes_created_at", "changes", ["created_at"])


def downgrade() -> None:
    op.drop_index("ix_changes_created_at", table_name="changes")
    op.drop_table("changes")
