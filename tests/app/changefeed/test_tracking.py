"""Every writer of what a submission's page shows notes "submission:ID" in its own transaction,
on both databases, without calling anything itself (app/changefeed/tracking.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy import event, select, update
from sqlalchemy.orm import Session, sessionmaker

from app.changefeed.tracking import note_bulk, note_flushed
from app.core.config import Settings
from app.db.models import Change, Profile, Submission, User
from app.db.session import session_factory
from app.scoreboard.standing import hooks
from app.submissions import feedback, lifecycle, profiles, recording, refinement, ta_actions
from app.wiring import install_listeners, wired_sessions
from tests.app.utils.factories import Account, judged_result, make_submission

Writer = Callable[[Session, Settings, Submission, Account], Any]


def notes_after(db: Session, mark: int) -> list[str]:
    """Topics noted (and committed) after id `mark`, in order."""
    db.expire_all()
    return list(db.scalars(select(Change.topic).where(Change.id > mark).order_by(Change.id)))


def newest(db: Session) -> int:
    return db.scalar(select(Change.id).order_by(Change.id.desc()).limit(1)) or 0


def done(db: Session, settings: Settings, sub: Submission) -> None:
    recording.record_result(db, settings, sub.id, 1, judged_result(3, 0.5, total=3))


def ta_user(db: Session, account: Account) -> User:
    user = db.get(User, account.id)
    assert user is not None
    user.role = "ta"
    db.commit()
    return user


def rejudged(db: Session, s: Settings, sub: Submission, a: Account) -> None:
    done(db, s, sub)
    ta_actions.rejudge(db, ta_user(db, a), sub, s)


def superseded(db: Session, s: Settings, sub: Submission, a: Account) -> None:
    lifecycle.supersede_queued(db, a.id)
    db.commit()


def refined(db: Session, s: Settings, sub: Submission, a: Account) -> None:
    done(db, s, sub)
    refinement.record_timing(db, sub.id, 1, {"error": "no clocks"})


def diagnosed(db: Session, s: Settings, sub: Submission, a: Account) -> None:
    done(db, s, sub)
    feedback.record_diagnosis(db, sub.id, 1, {"summary": "oob"})


def flag_cleared(db: Session, s: Settings, sub: Submission, a: Account) -> None:
    done(db, s, sub)
    sub.flag_status = "held"
    db.commit()
    feedback.clear_flag(db, ta_user(db, a), sub)
    db.commit()


WRITERS: dict[str, Writer] = {
    "progress": lambda db, s, sub, a: recording.record_progress(
        db, sub.id, 1, {"type": "test-done", "test": judged_result(1, 0.5)["tests"][0]}),
    "result": lambda db, s, sub, a: done(db, s, sub),
    "failure, new attempt (bulk update)": lambda db, s, sub, a: recording.record_failure(
        db, s, sub.id, 1, "the GPU fell off"),
    "sweeper: lost judging": lambda db, s, sub, a: recording.record_lost(db, sub, "lost", s),
    "rejudge (bulk update, tests cleared)": rejudged,
    "cancel": lambda db, s, sub, a: ta_actions.cancel_submission(db, ta_user(db, a), sub, s),
    "cancel queued (bulk)": lambda db, s, sub, a: ta_actions.cancel_queued(
        db, ta_user(db, a), sub.language, s),
    "superseded (bulk)": superseded,
    "refined times": refined,
    "diagnosis": diagnosed,
    "flag cleared": flag_cleared,
    "profile finished": lambda db, s, sub, a: profiles.finish(
        db, add_profile(db, sub, a), {"main": "k"}, ""),
}


def add_profile(db: Session, sub: Submission, account: Account) -> Profile:
    profile = Profile(submission_id=sub.id, requested_by=account.id, test_id="t01",
                      status="queued", error="", report_file="")
    db.add(profile)
    db.commit()
    return profile


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_every_writer_notes_the_submission(writer, db, settings, student):
    status = "queued" if writer in ("cancel queued (bulk)", "superseded (bulk)") else "running"
    sub = make_submission(db, student, status=status)
    mark = newest(db)
    WRITERS[writer](db, settings, sub, student)
    assert f"submission:{sub.id}" in notes_after(db, mark)


def test_a_change_rolled_back_leaves_no_note(db, student):
    sub = make_submission(db, student)
    mark = newest(db)
    sub.status = "running"
    db.flush()
    db.rollback()
    assert notes_after(db, mark) == []


def test_one_note_per_transaction_however_many_flushes(db, student):
    sub = make_submission(db, student)
    mark = newest(db)
    sub.status = "running"
    db.flush()
    sub.compile_log = "ok"
    db.flush()
    db.execute(update(Submission).where(Submission.id == sub.id).values(passed=1))
    db.commit()
    assert notes_after(db, mark) == [f"submission:{sub.id}"]


def test_heartbeats_and_sends_are_not_noted(db, student):
    """Bookkeeping no page shows would wake every watcher on every worker heartbeat."""
    sub = make_submission(db, student, status="running")
    mark = newest(db)
    recording.record_worker(db, {"hostname": "w1", "busy": True,
                                 "job": {"submission_id": sub.id, "attempt": 1}})
    sub.sent_at, sub.task_id = sub.heartbeat_at, "task-1"
    db.commit()
    assert notes_after(db, mark) == []


def test_listeners_come_from_where_a_process_starts_not_the_database_module(tmp_path):
    """Importing defines; the database floor's session_factory installs nothing (it imports
    neither the change feed nor the standing); app/wiring.py installs both, once per factory
    however often it is asked, and a bare sessionmaker gets them the same way."""
    url = f"sqlite:///{tmp_path / 'fresh.db'}"
    factory = session_factory(url)
    assert not event.contains(factory, "after_flush", note_flushed)
    assert not event.contains(factory, "before_commit", hooks.before_commit)
    assert wired_sessions(url) is factory is install_listeners(factory)
    assert event.contains(factory, "do_orm_execute", note_bulk)
    assert event.contains(factory, "before_commit", hooks.before_commit)
    bare = sessionmaker()
    install_listeners(bare)
    assert event.contains(bare, "after_flush", note_flushed)
