"""floor: the start-up floor of whole-program results, per test and in total

Revision ID: 0011_floor
Revises: 0010_assignments
Create Date: 2026-11-26 09:00:00

`test_results.floor_s` is what a calibration program that only starts (and creates its CUDA
context), reads the test's input and writes its output took on the worker that judged the test
(flashjudge/contract/floor.py); `submissions.floor_time` is their sum over the submission's tests,
set only when every test has one. Both are NULL for cuda-kernel, for results judged before this
revision and where the worker could not measure the floor: the page then shows whole-program times
alone, as before. Ranking never reads them.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011_floor"
down_revision = "0010_assignments"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("test_results") as batch:
        batch.add_column(sa.Column("floor_s", sa.Float(), nullable=True))
    with op.batch_alter_table("submissions") as batch:
        batch.add_column(sa.Column("floor_time", sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("submissions") as batch:
        batch.drop_column("floor_time")
    with op.batch_alter_table("test_results") as batch:
        batch.drop_column("floor_s")
