"""board names: a student's alias or opt-out on the public board, the late penalty on the board

Revision ID: 0013_board_names
Revises: 0012_floor
Create Date: 2026-11-26 09:00:00

`users.board_alias` is the name a student chose for the public board and `users.board_hidden`
keeps them off it (TAs still see both names and every row). The standing copies both
and the submission's late penalty (`standings.penalty`: the board ranks the graded score, issue
19). The standing is marked unbuilt, so the next reader or writer computes it again with the
new columns filled.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013_board_names"
down_revision = "0012_floor"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # plain ALTERs (no batch copy): on SQLite a batch would recreate `users`, and dropping the
    # old table cascades to every row that refers to it (tokens, sessions, ...)
    op.add_column("users", sa.Column("board_alias", sa.String(length=40), nullable=True))
    op.add_column("users", sa.Column("board_hidden", sa.Boolean(), nullable=False,
                                     server_default=sa.false()))
    op.add_column("standings", sa.Column("penalty", sa.Float(), nullable=False,
                                         server_default="0"))
    op.add_column("standings", sa.Column("alias", sa.String(length=40), nullable=True))
    op.add_column("standings", sa.Column("hidden", sa.Boolean(), nullable=False,
                                         server_default=sa.false()))
    op.execute(sa.text("UPDATE board_state SET built = :no").bindparams(no=False))


def downgrade() -> None:
    for table, column in (("standings", "hidden"), ("standings", "alias"),
                          ("standings", "penalty"), ("users", "board_hidden"),
                          ("users", "board_alias")):
        op.drop_column(table, column)
