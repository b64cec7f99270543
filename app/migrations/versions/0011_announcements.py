"""announcements: TAs' messages on every page, each user's dismissals; the audit log by date

Revision ID: 0011_announcements
Revises: 0010_assignments
Create Date: 2026-11-26 09:00:00

`announcements` holds what a TA posted (title, plain-text body, optional expiry);
`announcement_dismissals` one row per user who hid one. `audit_log.created_at` gets an index:
the TAs' audit page filters by date range.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011_announcements"
down_revision = "0010_assignments"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "announcements",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("title", sa.String(length=200), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("created_by", sa.Integer(),
                  sa.ForeignKey("users.id", ondelete="SET NULL"), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("expires_at", sa.DateTime(), nullable=True),
    )
    op.create_table(
        "announcement_dismissals",
        sa.Column("announcement_id", sa.Integer(),
                  sa.ForeignKey("announcements.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("user_id", sa.Integer(), sa.ForeignKey("users.id", ondelete="CASCADE"),
                  primary_key=True),
        sa.Column("at", sa.DateTime(), nullable=False),
    )
    op.create_index("ix_announcement_dismissals_user_id", "announcement_dismissals",
                    ["user_id"])
    op.create_index("ix_audit_log_created_at", "audit_log", ["created_at"])


def downgrade() -> None:
    op.drop_index("ix_audit_log_created_at", table_name="audit_log")
    op.drop_index("ix_announcement_dismissals_user_id", table_name="announcement_dismissals")
    op.drop_table("announcement_dismissals")
    op.drop_table("announcements")
