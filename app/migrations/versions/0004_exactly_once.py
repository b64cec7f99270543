"""exactly-once judging: failures and lost judgings counted apart; custom runs expire

Revision ID: 0004_exactly_once
Revises: 0003_auth
Create Date: 2026-12-01 10:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004_exactly_once"
down_revision = "0003_auth"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # only system errors count toward max_attempts; a judging lost with its worker counts apart
    op.add_column("submissions", sa.Column("failures", sa.Integer(), nullable=False,
                                           server_default="0"))
    op.add_column("submissions", sa.Column("lost", sa.Integer(), nullable=False,
                                           server_default="0"))
    op.add_column("custom_runs", sa.Column("expired_at", sa.DateTime(), nullable=True))


def downgrade() -> None:
    op.drop_column("custom_runs", "expired_at")
    op.drop_column("submissions", "lost")
    op.drop_column("submissions", "failures")
