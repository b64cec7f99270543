"""accounts: server-side sessions, sign-in links, login throttling, token expiry and use

Revision ID: 0003_auth
Revises: 0002_feedback
Create Date: 2026-11-29 10:00:00
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import sqlalchemy as sa
from alembic import op

revision = "0003_auth"
down_revision = "0002_feedback"
branch_labels = None
depends_on = None

EXISTING_TOKEN_DAYS = 120  # personal tokens made before expiry existed get this lifetime


def upgrade() -> None:
    op.add_column("users", sa.Column("last_submission_at", sa.DateTime(), nullable=True))
    op.add_column("api_tokens", sa.Column("kind", sa.String(length=16), nullable=False,
                                          server_default="personal"))
    op.add_column("api_tokens", sa.Column("last_used_at", sa.DateTime(), nullable=True))
    op.execute("UPDATE api_tokens SET kind = 'login' WHERE name = 'password-flow'")
    expires = datetime.now(UTC).replace(tzinfo=None) + timedelta(days=EXISTING_TOKEN_DAYS)
    op.get_bind().execute(
        sa.text("UPDATE api_tokens SET expires_at = :at WHERE expires_at IS NULL"), {"at": expires})
    create_tables()


def create_tables() -> None:
    op.create_table(
        "login_sessions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("sid_hash", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("expires_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"), sa.UniqueConstraint("sid_hash"),
    )
    op.create_index(op.f("ix_login_sessions_user_id"), "login_sessions", ["user_id"])
    op.create_table(
        "signin_links",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("purpose", sa.String(length=16), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("expires_at", sa.DateTime(), nullable=False),
        sa.Column("used_at", sa.DateTime(), nullable=True),
        sa.Column("created_by", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"), sa.UniqueConstraint("token_hash"),
    )
    op.create_index(op.f("ix_signin_links_user_id"), "signin_links", ["user_id"])
    op.create_table(
        "login_attempts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("key_hash", sa.String(length=64), nullable=False),
        sa.Column("at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(op.f("ix_login_attempts_key_hash"), "login_attempts", ["key_hash"])
    op.create_index(op.f("ix_login_attempts_at"), "login_attempts", ["at"])


def downgrade() -> None:
    for table in ("login_attempts", "signin_links", "login_sessions"):
        op.drop_table(table)
    op.drop_column("api_tokens", "last_used_at")
    op.drop_column("api_tokens", "kind")
    op.drop_column("users", "last_submission_at")
