"""Recording results from the control queue: one final result per attempt, stale ones ignored."""

from __future__ import annotations

from app.db.models import JudgedTest, Submission
from app.submissions import recording
from tests.app.utils.factories import judged_result, make_submission


def reload(db, sub_id: int) -> Submission:
    db.expire_all()
    return db.get(Submission, sub_id)


def test_progress_marks_running_and_keeps_partial_tests(db, settings, student):
    sub = make_submission(db, student)
    test = judged_result(1, 0.5)["tests"][0]
    assert recording.record_progress(db, sub.id, 1, {"type": "compile", "ok": True, "log": "ok"})
    assert recording.record_progress(db, sub.id, 1, {"type": "test-done", "test": test})
    sub = reload(db, sub.id)
    assert sub.status == "running" and sub.compile_log == "ok"
    assert [(t.test_id, t.verdict) for t in sub.tests] == [("t01", "AC")]


def test_a_result_is_recorded_once_and_duplicates_change_nothing(db, settings, student):
    sub = make_submission(db, student)
    assert recording.record_result(db, settings, sub.id, 1, judged_result(7, 0.25))
    assert not recording.record_result(db, settings, sub.id, 1, judged_result(10, 0.1))
    assert not recording.record_progress(db, sub.id, 1, {"type": "started"})
    sub = reload(db, sub.id)
    assert (sub.status, sub.verdict, sub.passed, sub.score) == ("done", "WA", 7, 51)
    assert sub.total_time == 2.5
    assert db.query(JudgedTest).filter_by(submission_id=sub.id).count() == 10


def test_a_stale_attempt_is_ignored(db, settings, student):
    sub = make_submission(db, student, attempt=2)
    assert not recording.record_result(db, settings, sub.id, 1, judged_result(10, 0.1))
    assert not recording.record_progress(db, sub.id, 1, {"type": "started"})
    sub = reload(db, sub.id)
    assert (sub.status, sub.verdict) == ("queued", None)


def test_a_compile_error_is_ce(db, settings, student):
    sub = make_submission(db, student)
    result = {**judged_result(0, 0.0), "compile": {"ok": False, "log": "hw4.c:1: error"}}
    recording.record_result(db, settings, sub.id, 1, result)
    sub = reload(db, sub.id)
    assert sub.verdict == "CE" and "error" in sub.compile_log


def test_system_errors_retry_then_end_as_se_visible_to_tas(db, settings, student):
    sub = make_submission(db, student)
    for attempt in (1, 2):
        assert recording.record_failure(db, settings, sub.id, attempt, "sandbox broke")
        assert reload(db, sub.id).attempt == attempt + 1
    failing = {**judged_result(0, 0.0), "system_error": "cache unreadable"}
    assert recording.record_result(db, settings, sub.id, 3, failing)
    sub = reload(db, sub.id)
    assert (sub.status, sub.verdict, sub.attempt) == ("done", "SE", 3)
    assert "cache unreadable" in sub.error and "3 attempt" in sub.error


def test_a_message_for_another_job_key_is_ignored(db, settings, student):
    sub = make_submission(db, student)
    sub.job_key = "current-key"
    db.commit()
    assert not recording.record_result(db, settings, sub.id, 1, judged_result(10, 0.1),
                                       job="key-of-an-older-life")
    assert recording.record_result(db, settings, sub.id, 1, judged_result(10, 0.1),
                                   job="current-key")
    assert reload(db, sub.id).verdict == "AC"


def test_any_bytes_a_submission_printed_are_stored(db, settings, student):
    """Red-team item 5: a NUL byte in the build log made the result unstorable on PostgreSQL
    (three judgings, then SE). NUL, lone surrogates (invalid UTF-8 escaped in JSON) and NaN in
    every text field and JSON value are stored, replaced by U+FFFD or spelled out."""
    sub = make_submission(db, student)
    dirty = "warning\x00: bad byte \udcff here"
    assert recording.record_progress(db, sub.id, 1, {"type": "compile", "ok": True,
                                                     "log": dirty})
    result = judged_result(9, 0.25)
    result["compile"]["log"] = dirty
    result["tests"][9].update(message=dirty, stderr_tail="\x00" * 3, max_error=float("nan"),
                              mismatches=[{"got": float("nan"), "want": 1.0, "note": dirty}])
    result["notes"] = [dirty]
    result["extra\x00key"] = {"nested": [dirty, float("inf")]}
    assert recording.record_result(db, settings, sub.id, 1, result)
    sub = reload(db, sub.id)
    assert (sub.status, sub.verdict, sub.passed) == ("done", "WA", 9)
    clean = "warning\ufffd: bad byte \ufffd here"
    assert sub.compile_log == clean
    last = sub.tests[-1]
    assert last.detail is not None and sub.result is not None
    assert last.detail["message"] == clean and last.detail["stderr_tail"] == "\ufffd" * 3
    assert last.detail["mismatches"][0]["got"] == "nan"
    assert sub.result["notes"] == [clean]
    assert sub.result["extra\ufffdkey"] == {"nested": [clean, "inf"]}


def test_a_failure_message_with_nul_is_stored_and_counted(db, settings, student):
    sub = make_submission(db, student)
    assert recording.record_failure(db, settings, sub.id, 1, "sandbox\x00broke")
    sub = reload(db, sub.id)
    assert (sub.attempt, sub.failures, sub.lost) == (2, 1, 0)
    assert sub.error == "sandbox\ufffdbroke"


def test_a_handed_back_attempt_is_judged_again_and_counted_as_nothing(db, settings, student):
    """A worker whose Slurm job ends hands its judging back: the next attempt goes out at once,
    and however often that happens the submission comes no nearer to SE."""
    sub = make_submission(db, student)
    assert recording.record_progress(db, sub.id, 1, {"type": "started"})
    for attempt in range(1, settings.max_attempts + settings.max_lost_attempts + 1):
        assert recording.record_handback(db, settings, sub.id, attempt, "Slurm job 12 ends")
    sub = reload(db, sub.id)
    last = settings.max_attempts + settings.max_lost_attempts + 1
    assert (sub.status, sub.attempt, sub.failures, sub.lost) == ("queued", last, 0, 0)
    assert sub.error == "handed back: Slurm job 12 ends"
    assert sub.sent_at is not None  # sent at once, not left to the sweeper


def test_a_hand_back_after_the_result_or_of_an_old_attempt_changes_nothing(db, settings,
                                                                           student):
    sub = make_submission(db, student)
    assert recording.record_handback(db, settings, sub.id, 1, "job ends")
    assert not recording.record_handback(db, settings, sub.id, 1, "job ends")  # a duplicate
    assert not recording.record_result(db, settings, sub.id, 1, judged_result(10, 0.1))
    assert recording.record_result(db, settings, sub.id, 2, judged_result(10, 0.1))
    assert not recording.record_handback(db, settings, sub.id, 2, "job ends")  # judged already
    sub = reload(db, sub.id)
    assert (sub.status, sub.verdict, sub.attempt) == ("done", "AC", 2)
