"""course settings: what a TA changes about the course while it runs

Revision ID: 0019_course_settings
Revises: 0018_slurm_jobs
Create Date: 2026-12-03 12:00:00

`course_settings` holds one row (id 1): the course's time zone, the submit interval, a new
deadline's late policy, and the university's OpenID provider. The environment gives only its
first values (the row is made on first read by app/course/course_settings.py, its one writer),
so the course settings page changes them without a restart.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0019_course_settings"
down_revision = "0018_slurm_jobs"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "course_settings",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("timezone", sa.String(length=64), nullable=False),
        sa.Column("submit_interval_s", sa.Float(), nullable=False),
        sa.Column("late_policy", sa.String(length=16), nullable=False),
        sa.Column("penalty_per_day", sa.Float(), nullable=False),
        sa.Column("penalty_cap", sa.Float(), nullable=False),
        sa.Column("oidc_issuer", sa.String(length=500), nullable=False),
        sa.Column("oidc_client_id", sa.String(length=200), nullable=False),
        sa.Column("oidc_client_secret", sa.String(length=500), nullable=False),
        sa.Column("oidc_name", sa.String(length=100), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("course_settings")
