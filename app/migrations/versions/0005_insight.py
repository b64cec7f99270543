"""the GPU model of a result, similarity sources and fingerprints

Revision ID: 0005_insight
Revises: 0004_exactly_once
Create Date: 2026-12-01 10:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005_insight"
down_revision = "0004_exactly_once"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # a plain ADD COLUMN (SQLite would copy the table for anything more)
    op.add_column("submissions", sa.Column("gpu_model", sa.String(length=200), nullable=True))
    op.create_index(op.f("ix_submissions_gpu_model"), "submissions", ["gpu_model"])
    op.create_table(
        "similarity_sources",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("suite", sa.String(length=64), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("uploaded_by", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(["uploaded_by"], ["users.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(op.f("ix_similarity_sources_suite"), "similarity_sources", ["suite"])
    op.create_table(
        "fingerprints",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("submission_id", sa.Integer(), nullable=True),
        sa.Column("source_id", sa.Integer(), nullable=True),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.Column("count", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(["submission_id"], ["submissions.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["source_id"], ["similarity_sources.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("submission_id"),
        sa.UniqueConstraint("source_id"),
    )


def downgrade() -> None:
    op.drop_table("fingerprints")
    op.drop_index(op.f("ix_similarity_sources_suite"), table_name="similarity_sources")
    op.drop_table("similarity_sources")
    op.drop_index(op.f("ix_submissions_gpu_model"), table_name="submissions")
    op.drop_column("submissions", "gpu_model")
