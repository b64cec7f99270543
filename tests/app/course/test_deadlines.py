"""Deadlines by the server's clock: refuse or mark late with a capped penalty, extensions, audit."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import select

from app.core.errors import UserError
from app.course import deadlines
from app.db.models import AuditLog, User

DUE = datetime(2026, 12, 1, 15, 59, tzinfo=UTC)  # 2026-12-01T23:59+08:00


def alice(db, student) -> User:
    return db.get(User, student.id)


def test_due_times_need_an_offset_and_are_kept_in_utc():
    assert deadlines.parse_due("2026-12-01T23:59+08:00") == DUE
    assert deadlines.parse_due("2026-12-01T15:59Z") == DUE
    with pytest.raises(UserError, match="has no UTC offset; add one, e.g. 2026-12-01T23:59\\+08"):
        deadlines.parse_due("2026-12-01T23:59")
    with pytest.raises(UserError, match="not an ISO 8601 time") as refused:
        deadlines.parse_due("next friday")
    assert refused.value.field == "due_at"


@pytest.mark.parametrize(("late_by", "percent"), [
    (timedelta(0), 0), (timedelta(seconds=1), 10), (timedelta(hours=24), 10),
    (timedelta(hours=24, seconds=1), 20), (timedelta(days=30), 50)])
def test_the_penalty_counts_started_days_and_stops_at_the_cap(late_by, percent):
    assert deadlines.penalty_for(late_by.total_seconds(), 10, 50) == percent


def test_refuse_policy_refuses_after_the_due_time_but_not_before(db, student, ta):
    deadlines.set_deadline(db, alice(db, ta), "hw4-mini", DUE, "refuse")
    before = deadlines.mark_upload(db, alice(db, student), "hw4-mini", DUE - timedelta(seconds=1))
    assert (before.late, before.penalty) == (False, 0.0)
    with pytest.raises(UserError, match="late submissions are refused") as refused:
        deadlines.mark_upload(db, alice(db, student), "hw4-mini", DUE + timedelta(seconds=1))
    assert refused.value.status == 403
    assert deadlines.mark_upload(db, alice(db, ta), "hw4-mini", DUE + timedelta(days=3)).late \
        is False  # TAs test the judge: never refused nor late


def test_penalty_policy_accepts_and_marks_late(db, student, ta):
    deadlines.set_deadline(db, alice(db, ta), "hw4-mini", DUE, "penalty", 10, 25)
    mark = deadlines.mark_upload(db, alice(db, student), "hw4-mini", DUE + timedelta(hours=30))
    assert (mark.late, mark.penalty) == (True, 20.0)
    state = deadlines.status_for(db, alice(db, student), "hw4-mini", DUE + timedelta(days=9))
    assert state.penalty == 25.0 and not state.closed
    assert "a submission now loses 25% of its score" in state.message()
    assert deadlines.final_score(60, 25.0) == 45.0


def test_an_extension_moves_one_students_due_time(db, student, other_student, ta):
    deadlines.set_deadline(db, alice(db, ta), "hw4-mini", DUE, "refuse")
    deadlines.grant_extension(db, alice(db, ta), "hw4-mini", "alice", DUE + timedelta(days=2))
    later = DUE + timedelta(days=1)
    state = deadlines.status_for(db, alice(db, student), "hw4-mini", later)
    assert state.extended and not state.late and "(your extension): 1 d left" in state.message()
    with pytest.raises(UserError):
        deadlines.mark_upload(db, alice(db, other_student), "hw4-mini", later)
    assert deadlines.revoke_extension(db, alice(db, ta), "hw4-mini", "alice")
    with pytest.raises(UserError):
        deadlines.mark_upload(db, alice(db, student), "hw4-mini", later)


def test_bad_rules_are_refused_by_field(db, ta):
    with pytest.raises(UserError, match="no assignment 'hw9'") as refused:
        deadlines.set_deadline(db, alice(db, ta), "hw9", DUE)
    assert refused.value.field == "assignment" and refused.value.status == 404
    with pytest.raises(UserError, match="late_policy must be one of refuse, penalty"):
        deadlines.set_deadline(db, alice(db, ta), "hw4", DUE, "forgive")
    with pytest.raises(UserError, match="penalty_cap must be a percentage") as refused:
        deadlines.set_deadline(db, alice(db, ta), "hw4", DUE, "penalty", 10, 150)
    assert refused.value.field == "penalty_cap"
    with pytest.raises(UserError, match="set one first"):
        deadlines.grant_extension(db, alice(db, ta), "hw4", "alice", DUE)
    deadlines.set_deadline(db, alice(db, ta), "hw4", DUE)
    with pytest.raises(UserError, match="must end after hw4's due time"):
        deadlines.grant_extension(db, alice(db, ta), "hw4", "tara", DUE - timedelta(hours=1))
    with pytest.raises(UserError, match="no user 'nobody'"):
        deadlines.grant_extension(db, alice(db, ta), "hw4", "nobody", DUE + timedelta(hours=1))


def test_every_change_is_in_the_audit_log(db, student, ta):
    actor = alice(db, ta)
    deadlines.set_deadline(db, actor, "hw4-mini", DUE, "penalty", 10, 50)
    deadlines.grant_extension(db, actor, "hw4-mini", "alice", DUE + timedelta(days=1))
    deadlines.revoke_extension(db, actor, "hw4-mini", "alice")
    deadlines.clear_deadline(db, actor, "hw4-mini")
    rows = list(db.scalars(select(AuditLog).order_by(AuditLog.id)))
    assert [(r.action, r.target, r.actor_id) for r in rows] == [
        ("deadline-set", "hw4-mini", actor.id), ("extension-grant", "hw4-mini alice", actor.id),
        ("extension-revoke", "hw4-mini alice", actor.id), ("deadline-clear", "hw4-mini", actor.id)]
    assert rows[0].detail == {"due_at": "2026-12-01T15:59:00Z", "late_policy": "penalty",
                              "penalty_per_day": 10, "penalty_cap": 50}


def test_the_due_time_is_said_in_the_zone_of_the_moment_asked_about(db, student, ta):
    deadlines.set_deadline(db, alice(db, ta), "hw4-mini", DUE, "refuse")
    taipei = (DUE - timedelta(days=1)).astimezone(ZoneInfo("Asia/Taipei"))
    state = deadlines.status_for(db, alice(db, student), "hw4-mini", taipei)
    assert state.message() == "hw4-mini is due 2026-12-01 23:59 UTC+08:00: 1 d left"
    assert state.to_dict()["due_at"] == "2026-12-01T15:59:00Z"  # the API stays in UTC
    with pytest.raises(UserError, match=r"due 2026-12-01 23:59 UTC\+08:00: the deadline has"):
        deadlines.mark_upload(db, alice(db, student), "hw4-mini", taipei + timedelta(days=2))
    utc = deadlines.status_for(db, alice(db, student), "hw4-mini", DUE - timedelta(days=1))
    assert utc.message().startswith("hw4-mini is due 2026-12-01 15:59 UTC:")
