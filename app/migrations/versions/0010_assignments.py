"""assignments: terms, assignments (with the deadline), submissions and extensions attached

Revision ID: 0010_assignments
Revises: 0009_quotas
Create Date: 2026-11-26 09:00:00

Before this revision a deployment judged one suite (FLASHJUDGE_SUITE); deadlines and extensions
were keyed by suite. Now every submission, extension, custom run and similarity source belongs
to an assignment of a term. The upgrade makes term "current" and one assignment per suite the
data names (submissions, deadlines, extensions, similarity sources), named after that suite,
carrying its deadline and the board's freeze; only the configured suite's stays open when the
caller names it (`config.attributes["suite"]`, app/db/migrate.py). Nothing is deleted: every
row is attached, and the downgrade puts deadlines and extensions back by suite.

SQLite: `submissions` is referenced with ON DELETE CASCADE and migrations run with foreign keys
on, so it is never copied (a batch copy would drop its tests); its column is a plain ADD
COLUMN with its REFERENCES, nullable (SQLite cannot add it NOT NULL with a foreign key).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010_assignments"
down_revision = "0009_quotas"
branch_labels = None
depends_on = None

FROZEN_KEY = "scoreboard_frozen_at"  # app/scoreboard/standing/rules.py at this revision
ATTACHED = ("submissions", "custom_runs", "similarity_sources")  # tables given assignment_id


def create_tables() -> None:
    op.create_table(
        "terms",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("archived_at", sa.DateTime(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("name"),
    )
    op.create_table(
        "assignments",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("term_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("title", sa.String(length=200), nullable=False),
        sa.Column("suite", sa.String(length=64), nullable=False),
        sa.Column("languages", sa.String(length=500), nullable=False),
        sa.Column("is_open", sa.Boolean(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("due_at", sa.DateTime(), nullable=True),
        sa.Column("late_policy", sa.String(length=16), nullable=False),
        sa.Column("penalty_per_day", sa.Float(), nullable=False),
        sa.Column("penalty_cap", sa.Float(), nullable=False),
        sa.Column("frozen_at", sa.DateTime(), nullable=True),
        sa.Column("gpu_model", sa.String(length=200), nullable=False),
        sa.Column("visibility", sa.String(length=16), nullable=False),
        sa.Column("secret_seed", sa.BigInteger(), nullable=True),
        sa.Column("updated_by", sa.Integer(), nullable=True),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(["term_id"], ["terms.id"]),
        sa.ForeignKeyConstraint(["updated_by"], ["users.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("term_id", "name"),
    )
    op.create_index(op.f("ix_assignments_term_id"), "assignments", ["term_id"], unique=False)


def add_assignment_column(table: str) -> None:
    """assignment_id with its foreign key, nullable, without copying the table (see above)."""
    if op.get_bind().dialect.name == "sqlite":
        op.execute(f"ALTER TABLE {table} ADD COLUMN assignment_id INTEGER "
                   "REFERENCES assignments (id)")
    else:
        op.add_column(table, sa.Column("assignment_id", sa.Integer(), nullable=True))
        op.create_foreign_key(None, table, "assignments", ["assignment_id"], ["id"])


def known_suites(conn: sa.Connection) -> list[str]:
    """Every suite some row names, oldest use first."""
    found: list[str] = []
    for query in ("SELECT suite FROM submissions GROUP BY suite ORDER BY MIN(id)",
                  "SELECT suite FROM deadlines", "SELECT suite FROM extensions",
                  "SELECT suite FROM similarity_sources"):
        found += [s for (s,) in conn.execute(sa.text(query)) if s not in found]
    return found


def make_assignments(conn: sa.Connection, configured: str | None) -> None:
    """Term "current" and one assignment per known suite, with its deadline and the freeze."""
    conn.execute(sa.text("INSERT INTO terms (name, created_at) VALUES ('current', "
                         "CURRENT_TIMESTAMP)"))
    term = conn.execute(sa.text("SELECT id FROM terms WHERE name = 'current'")).scalar_one()
    frozen = conn.execute(sa.text("SELECT value FROM state WHERE key = :k"),
                          {"k": FROZEN_KEY}).scalar()
    for position, suite in enumerate(known_suites(conn)):
        rule = conn.execute(sa.text("SELECT due_at, late_policy, penalty_per_day, penalty_cap, "
                                    "updated_by FROM deadlines WHERE suite = :s"),
                            {"s": suite}).first()
        conn.execute(sa.text(
            "INSERT INTO assignments (term_id, name, title, suite, languages, is_open, "
            "position, due_at, late_policy, penalty_per_day, penalty_cap, frozen_at, gpu_model, "
            "visibility, updated_by, updated_at, created_at) VALUES (:term, :s, '', :s, '', "
            ":open, :pos, :due, :policy, :per_day, :cap, :frozen, '', 'all', :by, "
            "CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"),
            {"term": term, "s": suite, "open": configured in (None, suite), "pos": position,
             "due": rule[0] if rule else None, "policy": rule[1] if rule else "refuse",
             "per_day": rule[2] if rule else 0.0, "cap": rule[3] if rule else 100.0,
             "by": rule[4] if rule else None,
             "frozen": frozen[:26].replace("T", " ") if frozen else None})


def attach(table: str) -> None:
    """Each row to the assignment named after its suite; custom runs, which name none, to the
    open one made first (the deployment's suite)."""
    if table != "custom_runs":
        op.execute(f"UPDATE {table} SET assignment_id = (SELECT a.id FROM assignments a "
                   f"WHERE a.name = {table}.suite)")
        return
    op.execute("UPDATE custom_runs SET assignment_id = (SELECT a.id FROM assignments a "
               "ORDER BY a.is_open DESC, a.id LIMIT 1)")


def extensions_table(with_suite: bool) -> sa.Table:
    """The extensions table as batch mode must copy it on SQLite: without its old unnamed
    unique (suite, user_id), which SQLite cannot drop by name."""
    return sa.Table(
        "extensions", sa.MetaData(),
        sa.Column("id", sa.Integer(), primary_key=True),
        *([sa.Column("suite", sa.String(length=64), nullable=False)] if with_suite else []),
        sa.Column("assignment_id", sa.Integer(), nullable=not with_suite),
        sa.Column("user_id", sa.Integer(), sa.ForeignKey("users.id", ondelete="CASCADE"),
                  nullable=False),
        sa.Column("due_at", sa.DateTime(), nullable=False),
        sa.Column("granted_by", sa.Integer(), sa.ForeignKey("users.id"), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Index("ix_extensions_user_id", "user_id"),
    )


def extensions_batch(sqlite: bool):  # noqa: ANN201 (alembic's batch context manager)
    """SQLite: a copy of the table made from `extensions_table` (its old unique left behind);
    PostgreSQL: plain ALTERs, the table and its id sequence kept."""
    if sqlite:
        return op.batch_alter_table("extensions", recreate="always",
                                    copy_from=extensions_table(True))
    return op.batch_alter_table("extensions")


def rekey_extensions() -> None:
    """extensions: (suite, user) -> (assignment, user)."""
    op.add_column("extensions", sa.Column("assignment_id", sa.Integer(), nullable=True))
    attach("extensions")
    sqlite = op.get_bind().dialect.name == "sqlite"
    with extensions_batch(sqlite) as table:
        if not sqlite:
            table.drop_constraint("extensions_suite_user_id_key", type_="unique")
        table.drop_column("suite")
        table.alter_column("assignment_id", existing_type=sa.Integer(), nullable=False)
        table.create_unique_constraint("uq_extensions_assignment_id_user_id",
                                       ["assignment_id", "user_id"])
        table.create_foreign_key("fk_extensions_assignment_id", "assignments",
                                 ["assignment_id"], ["id"], ondelete="CASCADE")


def upgrade() -> None:
    create_tables()
    conn = op.get_bind()
    config = op.get_context().config
    make_assignments(conn, config.attributes.get("suite") if config else None)
    for table in ATTACHED:
        add_assignment_column(table)
        attach(table)
    op.create_index(op.f("ix_submissions_assignment_id"), "submissions", ["assignment_id"],
                    unique=False)
    rekey_extensions()
    op.drop_table("deadlines")


def downgrade() -> None:
    op.create_table(
        "deadlines",
        sa.Column("suite", sa.String(length=64), nullable=False),
        sa.Column("due_at", sa.DateTime(), nullable=False),
        sa.Column("late_policy", sa.String(length=16), nullable=False),
        sa.Column("penalty_per_day", sa.Float(), nullable=False),
        sa.Column("penalty_cap", sa.Float(), nullable=False),
        sa.Column("updated_by", sa.Integer(), nullable=True),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(["updated_by"], ["users.id"]),
        sa.PrimaryKeyConstraint("suite"),
    )
    op.execute("INSERT INTO deadlines (suite, due_at, late_policy, penalty_per_day, penalty_cap, "
               "updated_by, updated_at) SELECT suite, due_at, late_policy, penalty_per_day, "
               "penalty_cap, updated_by, updated_at FROM assignments a WHERE due_at IS NOT NULL "
               "AND id = (SELECT MIN(b.id) FROM assignments b WHERE b.suite = a.suite "
               "AND b.due_at IS NOT NULL)")
    sqlite = op.get_bind().dialect.name == "sqlite"
    op.add_column("extensions", sa.Column("suite", sa.String(length=64), nullable=True))
    op.execute("UPDATE extensions SET suite = (SELECT a.suite FROM assignments a "
               "WHERE a.id = extensions.assignment_id)")
    with extensions_batch(sqlite) as table:
        if not sqlite:
            table.drop_constraint("uq_extensions_assignment_id_user_id", type_="unique")
            table.drop_constraint("fk_extensions_assignment_id", type_="foreignkey")
        table.drop_column("assignment_id")
        table.alter_column("suite", existing_type=sa.String(length=64), nullable=False)
        table.create_unique_constraint("extensions_suite_user_id_key", ["suite", "user_id"])
    op.drop_index(op.f("ix_submissions_assignment_id"), table_name="submissions")
    for name in ATTACHED:
        drop_assignment_column(name)
    op.drop_index(op.f("ix_assignments_term_id"), table_name="assignments")
    op.drop_table("assignments")
    op.drop_table("terms")


def drop_assignment_column(table: str) -> None:
    """SQLite 3.35+ drops a column that only references another table; PostgreSQL drops its
    foreign key with it."""
    if op.get_bind().dialect.name == "sqlite":
        op.execute(f"ALTER TABLE {table} DROP COLUMN assignment_id")
    else:
        op.drop_column(table, "assignment_id")
