"""libraries_allowed: an assignment where a TA lets library kernels compute the answer

Revision ID: 0017_libraries_allowed
Revises: 0016_paired
Create Date: 2026-12-03 12:00:00

A suite such as hw4 accepts only the submission's own kernels (a library's kernel is BK). A TA
may decide that, for one assignment, a library is fine (an assignment about using cuBLAS
well): `assignments.libraries_allowed` lifts the own-kernels rule for its judgings; a second
process on the GPU stays BK whatever it says.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0017_libraries_allowed"
down_revision = "0016_paired"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("assignments", sa.Column("libraries_allowed", sa.Boolean(), nullable=False,
                                           server_default=sa.false()))


def downgrade() -> None:
    op.drop_column("assignments", "libraries_allowed")
