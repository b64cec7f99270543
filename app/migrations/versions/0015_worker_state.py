"""worker state: what a judge worker that is not yet taking jobs is doing

Revision ID: 0015_worker_state
Revises: 0014_boards
Create Date: 2026-12-02 12:00:00

`workers.state` is "" for a worker that takes jobs, else what it is doing before it can, as its
supervisor announced it ("starting (preflight)", "starting (connecting to the broker)", "not
starting: ..."): /readyz names it instead of saying no worker is there, and such a worker
judges no language yet. Old rows get "" (they were taking jobs).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0015_worker_state"
down_revision = "0014_boards"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("workers") as batch:
        batch.add_column(sa.Column("state", sa.String(length=300), nullable=False,
                                   server_default=""))


def downgrade() -> None:
    with op.batch_alter_table("workers") as batch:
        batch.drop_column("state")
