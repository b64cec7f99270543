"""floor: the start-up floor of whole-program results, per test and in total

Revision ID: 0012_floor
Revises: 0011_announcements
Create Date: 2026-11-26 09:00:00

`test_results.floor_s` is what a calibration program that only starts (and creates its CUDA
context), reads the test's input and writes its output took on the worker that judged the test
(flashjudge/contract/floor.py); `submissions.floor_time` is their sum over the submission's tests,
set only when every test has one. Both are NULL for cuda-kernel, for results judged before this
revision and where the worker could not measure the floor: the page then shows whole-program times
alone, as before. Ranking never reads them. Plain ADD COLUMNs, and no batch copy on the way
back (below).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012_floor"
down_revision = "0011_announcements"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("test_results", sa.Column("floor_s", sa.Float(), nullable=True))
    op.add_column("submissions", sa.Column("floor_time", sa.Float(), nullable=True))


def downgrade() -> None:
    drop_column("submissions", "floor_time")
    drop_column("test_results", "floor_s")


def drop_column(table: str, column: str) -> None:
    """Never a batch copy on SQLite: `submissions` is referenced with ON DELETE CASCADE and
    migrations run with foreign keys on (0010_assignments), so a copy would drop its tests;
    SQLite 3.35+ drops a plain column in place."""
    if op.get_bind().dialect.name == "sqlite":
        op.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
    else:
        op.drop_column(table, column)
