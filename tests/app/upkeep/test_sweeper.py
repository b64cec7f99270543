"""The sweeper: waiting work is sent again as the SAME attempt (never an SE), a judging lost with
its worker becomes a new attempt, and a worker's live claim is left alone. The attempt ledger is
the real one of each backend (files beside the embedded broker, keys in Redis)."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from sqlalchemy import select

from app.db.models import Change, CustomRun, Submission, utcnow
from app.submissions import dispatch
from app.submissions.recording import record_progress
from app.upkeep.broker_watch import in_flight_s
from app.upkeep.sweeper import UNSENT_GRACE_S, sweep
from flashjudge.claims import attempt_name, custom_run_subject, submission_subject
from tests.app.utils.broker import messages_waiting
from tests.app.utils.factories import make_submission

WORKER = "node1:4242:abcd1234"  # a worker process's owner name in the ledger


def age(db, row, **fields) -> None:
    for name, seconds in fields.items():
        setattr(row, name, utcnow() - timedelta(seconds=seconds))
    db.commit()


def unsent(db, account) -> Submission:
    """A queued submission its upload did not manage to send (the broker was down)."""
    sub = make_submission(db, account)
    age(db, sub, created_at=UNSENT_GRACE_S + 1)
    return sub


def reload(db, sub_id: int) -> Submission:
    db.expire_all()
    return db.get(Submission, sub_id)


def taken(settings, sub: Submission, alive: bool) -> None:
    """A worker took the submission's attempt (and beats, if alive)."""
    ledger, name = dispatch.ledger(settings), attempt_name(sub.attempt, sub.job_key)
    assert ledger.claim(submission_subject(sub.id), name, WORKER)
    if alive:
        ledger.beat(submission_subject(sub.id), name, WORKER, 60)


def test_a_fresh_submission_is_left_alone(db, settings, student):
    sub = make_submission(db, student)
    age(db, sub, sent_at=1)
    assert sweep(db, settings).resent == []


def test_an_unsent_submission_is_sent_with_the_same_attempt(db, settings, student):
    sub = make_submission(db, student)
    assert sweep(db, settings).resent == []  # its upload is sending it right now
    age(db, sub, created_at=UNSENT_GRACE_S + 1)  # it never managed to (the broker was down)
    report = sweep(db, settings)
    db.refresh(sub)
    assert report.resent == [sub.id]
    assert (sub.attempt, sub.status) == (1, "queued") and sub.sent_at is not None


def test_waiting_in_the_queue_is_never_an_attempt_nor_an_se(db, settings, student):
    """Its message is in the broker (the send is marked): left there, however often the
    sweeper looks; an old mark (a message that may be gone) gets one more copy."""
    sub = unsent(db, student)
    assert sweep(db, settings).resent == [sub.id]  # never sent (broker down at upload)
    for _ in range(settings.max_attempts + settings.max_lost_attempts + 1):
        age(db, sub, sent_at=settings.queued_timeout_s + 5)
        assert sweep(db, settings).waiting == [sub.id]
        sub = reload(db, sub.id)
    assert (sub.status, sub.attempt, sub.failures, sub.lost) == ("queued", 1, 0, 0)
    name = attempt_name(sub.attempt, sub.job_key)
    dispatch.ledger(settings).mark_sent(submission_subject(sub.id), name, at=time.time()
                                        - in_flight_s(settings) - 5)
    assert sweep(db, settings).resent == [sub.id]
    live = dispatch.ledger(settings).live(submission_subject(sub.id))
    assert live is not None and live.admits(1, sub.job_key)


def test_a_queued_attempt_a_worker_holds_is_left_to_it(db, settings, student):
    sub = make_submission(db, student)
    taken(settings, sub, alive=True)  # its "started" message waits on a control worker that is down
    age(db, sub, sent_at=settings.queued_timeout_s + 5)
    report = sweep(db, settings)
    assert (report.waiting, report.resent, report.retried) == ([sub.id], [], [])
    assert reload(db, sub.id).attempt == 1


def test_a_running_attempt_whose_worker_beats_is_left_even_with_a_silent_database(
        db, settings, student):
    sub = make_submission(db, student, status="running")
    taken(settings, sub, alive=True)
    age(db, sub, sent_at=600, heartbeat_at=settings.running_timeout_s + 5)
    assert sweep(db, settings).waiting == [sub.id]
    assert reload(db, sub.id).attempt == 1


def test_a_judging_lost_with_its_worker_becomes_a_new_attempt(db, settings, student):
    sub = make_submission(db, student)
    record_progress(db, sub.id, 1, {"type": "test-done", "test": {"id": "t01", "verdict": "AC"}})
    taken(settings, sub, alive=False)  # took it, then was SIGKILLed: no beat, no report
    age(db, sub, sent_at=600, heartbeat_at=settings.running_timeout_s + 5)
    report = sweep(db, settings)
    sub = reload(db, sub.id)
    assert report.retried == [sub.id]
    assert (sub.status, sub.attempt, sub.tests, sub.lost, sub.failures) == ("queued", 2, [], 1, 0)
    assert "stopped reporting" in sub.error
    live = dispatch.ledger(settings).live(submission_subject(sub.id))
    assert live is not None and live.attempt == 2  # workers now drop attempt 1's copies


def test_a_reported_attempt_waits_for_its_result_then_counts_as_lost(db, settings, student):
    sub = make_submission(db, student, status="running")
    taken(settings, sub, alive=True)
    dispatch.ledger(settings).reported(submission_subject(sub.id), attempt_name(1, sub.job_key))
    age(db, sub, sent_at=600, heartbeat_at=settings.running_timeout_s + 5)
    assert sweep(db, settings).waiting == [sub.id]
    impatient = settings.model_copy(update={"queued_timeout_s": 0.0})
    assert sweep(db, impatient).retried == [sub.id]
    assert "report never arrived" in reload(db, sub.id).error


def test_after_the_last_lost_judging_it_ends_as_se(db, settings, student):
    sub = make_submission(db, student, status="running")
    sub.lost = settings.max_lost_attempts - 1
    age(db, sub, sent_at=600, heartbeat_at=600)
    report = sweep(db, settings)
    sub = reload(db, sub.id)
    assert report.failed == [sub.id]
    assert (sub.status, sub.verdict) == ("done", "SE")
    assert "worker stopped reporting" in sub.error and "judgings lost" in sub.error
    live = dispatch.ledger(settings).live(submission_subject(sub.id))
    assert live is not None and live.attempt is None


def make_run(db, account, **fields) -> CustomRun:
    run = CustomRun(user_id=account.id, folder="f", B=2, N=128, d=32, attempt=1, error="",
                    **fields)
    db.add(run)
    db.commit()
    return run


def test_a_waiting_custom_run_is_sent_again_with_the_same_attempt(db, settings, student):
    run = make_run(db, student)
    age(db, run, sent_at=settings.queued_timeout_s + 5)  # sent, but no mark: its message is lost
    assert sweep(db, settings).resent_runs == [run.id]
    for _ in range(settings.max_attempts + 1):  # now its message is in the broker
        age(db, run, sent_at=settings.queued_timeout_s + 5)
        assert sweep(db, settings).resent_runs == []
        db.refresh(run)
    assert (run.status, run.attempt) == ("queued", 1)


def test_a_lost_custom_run_is_retried_then_given_up(db, settings, student):
    run = make_run(db, student)
    ledger = dispatch.ledger(settings)
    for attempt in range(2, settings.max_attempts + 1):
        assert ledger.claim(custom_run_subject(run.id), attempt_name(run.attempt), WORKER)  # died
        age(db, run, sent_at=settings.running_timeout_s + 5)
        assert sweep(db, settings).retried_runs == [run.id]
        db.refresh(run)
        assert run.attempt == attempt and run.sent_at is not None
    assert ledger.claim(custom_run_subject(run.id), attempt_name(run.attempt), WORKER)
    age(db, run, sent_at=settings.running_timeout_s + 5)
    assert sweep(db, settings).failed_runs == [run.id]
    db.refresh(run)
    assert run.status == "done" and "no worker finished" in run.error


def test_old_custom_runs_expire_and_lose_their_files(db, settings, student):
    done = make_run(db, student, status="done", reference="cpu-float64-v1")
    waiting = make_run(db, student)
    (settings.custom_dir / "f").mkdir(parents=True, exist_ok=True)
    (settings.custom_dir / "f" / "reference.bin").write_bytes(b"\0" * 16)
    keep_s = settings.custom_run_keep_h * 3600
    age(db, done, created_at=keep_s + 60)
    age(db, waiting, created_at=keep_s + 60, sent_at=30)
    report = sweep(db, settings)
    assert sorted(report.expired_runs) == [done.id, waiting.id]
    assert not (settings.custom_dir / "f").exists()
    for run in (done, waiting):
        db.refresh(run)
        assert run.status == "done" and run.expired_at is not None
    assert "expired before a worker computed it" in waiting.error
    assert sweep(db, settings).expired_runs == []


def test_with_the_broker_down_the_sweeper_waits_and_counts_nothing(db, settings, student):
    if not settings.broker_url:
        pytest.skip("the embedded broker's ledger is files beside it: never away")
    sub = make_submission(db, student, status="running")
    age(db, sub, sent_at=600, heartbeat_at=600)
    down = settings.model_copy(update={"broker_url": "redis://127.0.0.1:9/0"})
    report = sweep(db, down)
    sub = reload(db, sub.id)
    assert (report.retried, report.failed) == ([], [])
    assert (sub.status, sub.attempt, sub.lost) == ("running", 1, 0)


def test_a_pass_deletes_change_rows_older_than_live_keep_s(db, settings, student):
    sub = make_submission(db, student)  # notes submission:ID
    rows = db.scalars(select(Change)).all()
    for row in rows:
        row.created_at = utcnow() - timedelta(seconds=settings.live_keep_s + 60)
    db.add(Change(topic="scoreboard"))
    db.commit()
    assert sweep(db, settings).pruned_changes == len(rows)
    db.expire_all()
    assert db.scalars(select(Change.topic)).all() == ["scoreboard"]
    assert db.get(Submission, sub.id) is not None  # only the feed is pruned


def test_a_short_queued_timeout_keeps_one_message_per_attempt(db, settings, student):
    """With a queued timeout of seconds, every pass used to send every waiting
    attempt again (1,001 broker messages for at most 82 queued submissions)."""
    impatient = settings.model_copy(update={"queued_timeout_s": 1.0})
    before = messages_waiting(settings)
    subs = [unsent(db, student) for _ in range(10)]
    assert sorted(sweep(db, impatient).resent) == [s.id for s in subs]
    for _ in range(20):
        for sub in subs:
            age(db, sub, sent_at=5)
        assert sweep(db, impatient).resent == []
    assert messages_waiting(settings) - before == len(subs)  # LLEN on Redis
