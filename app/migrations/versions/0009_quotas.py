"""quotas: the bytes a custom run keeps on disk, and what each browser session is

Revision ID: 0009_quotas
Revises: 0008_standing
Create Date: 2026-12-01 12:00:00

`custom_runs.kept_bytes` is what a run holds (or, while it uploads, may hold) under the data
dir; per-student and total quotas add it up (app/custom_runs/quota.py). `login_sessions.label`
names the browser and address of a session on /account. Old rows get 0 and "": runs uploaded
before this revision count nothing until they expire (24 h at most).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009_quotas"
down_revision = "0008_standing"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("custom_runs") as batch:
        batch.add_column(sa.Column("kept_bytes", sa.BigInteger(), nullable=False,
                                   server_default="0"))
    with op.batch_alter_table("login_sessions") as batch:
        batch.add_column(sa.Column("label", sa.String(length=200), nullable=False,
                                   server_default=""))


def downgrade() -> None:
    with op.batch_alter_table("login_sessions") as batch:
        batch.drop_column("label")
    with op.batch_alter_table("custom_runs") as batch:
        batch.drop_column("kept_bytes")
