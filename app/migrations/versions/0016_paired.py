"""paired: the paired comparisons of neighbours on the board whose time bands overlap

Revision ID: 0016_paired
Revises: 0015_worker_state
Create Date: 2026-12-02 12:00:00

`paired_runs` keeps one row per comparison asked for at a freeze or by a TA: the two
submissions in the order the board had them, the request's key, and how it ended (ordered,
tied, failed), with its rounds and the GPU seconds it held. Written only by
app/scoreboard/paired/store.py.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0016_paired"
down_revision = "0015_worker_state"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "paired_runs",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("submission_a", sa.Integer(),
                  sa.ForeignKey("submissions.id", ondelete="CASCADE"), nullable=False),
        sa.Column("submission_b", sa.Integer(),
                  sa.ForeignKey("submissions.id", ondelete="CASCADE"), nullable=False),
        sa.Column("user_a", sa.String(length=64), nullable=False),
        sa.Column("user_b", sa.String(length=64), nullable=False),
        sa.Column("key", sa.String(length=32), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("outcome", sa.String(length=16), nullable=False),
        sa.Column("reason", sa.String(length=200), nullable=False),
        sa.Column("rounds", sa.Integer(), nullable=False),
        sa.Column("gpu_s", sa.Float(), nullable=False),
        sa.Column("budget_s", sa.Float(), nullable=False),
        sa.Column("detail", sa.JSON(), nullable=True),
        sa.Column("requested_at", sa.DateTime(), nullable=False),
        sa.Column("finished_at", sa.DateTime(), nullable=True),
    )
    op.create_index("ix_paired_runs_submission_a", "paired_runs", ["submission_a"])
    op.create_index("ix_paired_runs_submission_b", "paired_runs", ["submission_b"])


def downgrade() -> None:
    op.drop_index("ix_paired_runs_submission_b", table_name="paired_runs")
    op.drop_index("ix_paired_runs_submission_a", table_name="paired_runs")
    op.drop_table("paired_runs")
