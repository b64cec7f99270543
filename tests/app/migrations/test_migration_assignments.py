"""Migration 0010_assignments on both databases, from a database the previous head made with
rows in it: every submission, deadline, extension, custom run, similarity source and the freeze
end up attached to one assignment named after their suite, nothing is lost (the submissions'
files and tests survive: SQLite must not copy `submissions`), the configured suite's assignment
is the open one, and the migration goes back to deadlines and extensions by suite."""

from __future__ import annotations

from alembic import command
from sqlalchemy import text

from app.db.migrate import alembic_config, upgrade
from app.db.session import make_engine
from tests.app.migrations.test_migration_head import differences

BEFORE = "0009_quotas"
ROWS = [
    "INSERT INTO users (id, username, display_name, email, role, active, created_at) VALUES "
    "(1, 'alice', 'Alice', '', 'student', true, CURRENT_TIMESTAMP)",
    "INSERT INTO submissions (id, user_id, language, suite, status, attempt, job_key, task_id, "
    "compile_log, error, created_at, diagnosis_status, flag_status, late, late_penalty) VALUES "
    "(1, 1, 'c-program', 'hw4', 'done', 1, '', '', '', '', CURRENT_TIMESTAMP, '', '', true, 10),"
    "(2, 1, 'c-program', 'hw4-mini', 'done', 1, '', '', '', '', CURRENT_TIMESTAMP, '', '', "
    "false, 0)",
    "INSERT INTO submission_files (id, submission_id, name, content) VALUES (1, 1, 'hw4.c', "
    "'x')",
    "INSERT INTO test_results (id, submission_id, attempt, test_id, verdict) VALUES "
    "(1, 1, 1, 't01', 'AC')",
    "INSERT INTO deadlines (suite, due_at, late_policy, penalty_per_day, penalty_cap, "
    "updated_at) VALUES ('hw4', '2026-12-01 15:59:00', 'penalty', 10, 50, CURRENT_TIMESTAMP)",
    "INSERT INTO extensions (id, suite, user_id, due_at, created_at) VALUES "
    "(1, 'hw4', 1, '2026-12-03 15:59:00', CURRENT_TIMESTAMP)",
    "INSERT INTO state (key, value) VALUES ('scoreboard_frozen_at', '2026-11-30T10:00:00')",
]


def test_an_old_database_becomes_assignments_with_nothing_lost_and_goes_back(url: str) -> None:
    command.upgrade(alembic_config(url), BEFORE)
    engine = make_engine(url)
    with engine.begin() as conn:
        for row in ROWS:
            conn.execute(text(row))
    upgrade(url, suite="hw4")
    assert differences(url) == []
    with engine.connect() as conn:
        made = conn.execute(text("SELECT a.name, a.suite, a.is_open, a.due_at, a.late_policy, "
                                 "a.penalty_per_day, a.penalty_cap, a.frozen_at, t.name FROM "
                                 "assignments a JOIN terms t ON t.id = a.term_id "
                                 "ORDER BY a.id")).all()
        hw4, mini = made
        assert (hw4[0], hw4[1], bool(hw4[2]), hw4[4], hw4[5], hw4[6], hw4[8]) == (
            "hw4", "hw4", True, "penalty", 10.0, 50.0, "current")
        assert str(hw4[3]).startswith("2026-12-01 15:59") and str(hw4[7]).startswith(
            "2026-11-30 10:00")
        assert (mini[0], bool(mini[2]), mini[3]) == ("hw4-mini", False, None)
        attached = conn.execute(text("SELECT s.id, a.name, s.late FROM submissions s JOIN "
                                     "assignments a ON a.id = s.assignment_id "
                                     "ORDER BY s.id")).all()
        assert [(i, n, bool(late)) for i, n, late in attached] == [
            (1, "hw4", True), (2, "hw4-mini", False)]
        assert conn.execute(text("SELECT COUNT(*) FROM submission_files")).scalar() == 1
        assert conn.execute(text("SELECT COUNT(*) FROM test_results")).scalar() == 1
        assert conn.execute(text("SELECT a.name FROM extensions e JOIN assignments a ON "
                                 "a.id = e.assignment_id")).scalar() == "hw4"
    command.downgrade(alembic_config(url), BEFORE)
    with engine.connect() as conn:
        assert conn.execute(text("SELECT suite, late_policy FROM deadlines")).all() == [
            ("hw4", "penalty")]
        assert conn.execute(text("SELECT suite FROM extensions")).scalar() == "hw4"
        assert conn.execute(text("SELECT COUNT(*) FROM submission_files")).scalar() == 1
    engine.dispose()
    upgrade(url)
    assert differences(url) == []


def test_without_a_configured_suite_every_migrated_assignment_stays_open(url: str) -> None:
    command.upgrade(alembic_config(url), BEFORE)
    engine = make_engine(url)
    with engine.begin() as conn:
        for row in ROWS[:2]:
            conn.execute(text(row))
    upgrade(url)
    with engine.connect() as conn:
        assert {bool(o) for (o,) in conn.execute(text("SELECT is_open FROM assignments"))} == {
            True}
    engine.dispose()
