"""The sweeper re-sends stuck submissions and closes them as SE after the last attempt."""

from __future__ import annotations

from datetime import timedelta

from app.db.models import CustomRun, Submission, utcnow
from app.services.recording import record_progress
from app.services.sweeper import sweep
from tests.app.utils.factories import make_submission


def age(db, sub: Submission, **fields) -> None:
    for name, seconds in fields.items():
        setattr(sub, name, utcnow() - timedelta(seconds=seconds))
    db.commit()


def test_a_fresh_submission_is_left_alone(db, settings, student):
    sub = make_submission(db, student)
    age(db, sub, sent_at=1)
    assert sweep(db, settings).resent == []


def test_an_unsent_submission_is_sent_with_the_same_attempt(db, settings, student):
    sub = make_submission(db, student)
    report = sweep(db, settings)
    db.refresh(sub)
    assert report.resent == [sub.id]
    assert (sub.attempt, sub.status) == (1, "queued") and sub.sent_at is not None


def test_a_silent_running_submission_gets_a_new_attempt(db, settings, student):
    sub = make_submission(db, student)
    record_progress(db, sub.id, 1, {"type": "test-done", "test": {"id": "t01", "verdict": "AC"}})
    age(db, sub, sent_at=600, heartbeat_at=settings.running_timeout_s + 5)
    report = sweep(db, settings)
    db.expire_all()
    sub = db.get(Submission, sub.id)
    assert report.resent == [sub.id]
    assert (sub.status, sub.attempt, sub.tests) == ("queued", 2, [])
    assert "stopped reporting" in sub.error


def test_after_the_last_attempt_it_ends_as_se(db, settings, student):
    sub = make_submission(db, student, status="running", attempt=settings.max_attempts)
    age(db, sub, sent_at=600, heartbeat_at=600)
    report = sweep(db, settings)
    db.expire_all()
    sub = db.get(Submission, sub.id)
    assert report.failed == [sub.id]
    assert (sub.status, sub.verdict) == ("done", "SE")
    assert "worker stopped reporting" in sub.error


def test_an_unfinished_custom_run_is_sent_again_then_given_up(db, settings, student):
    run = CustomRun(user_id=student.id, folder="f", B=2, N=128, d=32, attempt=1, error="")
    db.add(run)
    db.commit()
    for attempt in range(2, settings.max_attempts + 1):
        age(db, run, sent_at=settings.queued_timeout_s + 5)
        assert sweep(db, settings).resent_runs == [run.id]
        db.refresh(run)
        assert run.attempt == attempt and run.sent_at is not None
    age(db, run, sent_at=settings.queued_timeout_s + 5)
    assert sweep(db, settings).failed_runs == [run.id]
    db.refresh(run)
    assert run.status == "done" and "no worker finished" in run.error
