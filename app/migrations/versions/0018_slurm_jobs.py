"""slurm jobs: the Slurm job a worker lives in, and the worker jobs the control side submitted

Revision ID: 0018_slurm_jobs
Revises: 0017_libraries_allowed
Create Date: 2026-12-03 12:00:00

`workers.slurm` is the Slurm job a worker's heartbeat names (job id, node, partition, GPUs, the
end in epoch seconds), NULL outside Slurm: the TA page counts down to its end. `slurm_jobs` holds
one row per worker job the control side's autoscaler submitted (or tried to): Slurm's job id
(NULL when sbatch refused it), the queue it serves, its last known state and reason, and the
decision that submitted it, so the TA page shows pending and failed jobs instead of retrying.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0018_slurm_jobs"
down_revision = "0017_libraries_allowed"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("workers") as batch:
        batch.add_column(sa.Column("slurm", sa.JSON(), nullable=True))
    op.create_table(
        "slurm_jobs",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("job_id", sa.String(length=64), nullable=True),
        sa.Column("queue", sa.String(length=32), nullable=False),
        sa.Column("state", sa.String(length=32), nullable=False),
        sa.Column("reason", sa.String(length=500), nullable=False, server_default=""),
        sa.Column("why", sa.String(length=300), nullable=False, server_default=""),
        sa.Column("submitted_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.Column("ended_at", sa.DateTime(), nullable=True),
    )
    op.create_index("ix_slurm_jobs_state", "slurm_jobs", ["state"])


def downgrade() -> None:
    op.drop_index("ix_slurm_jobs_state", table_name="slurm_jobs")
    op.drop_table("slurm_jobs")
    with op.batch_alter_table("workers") as batch:
        batch.drop_column("slurm")
