"""TA control of the queue: cancel one or every queued submission of a language, rejudge all
saying what it did, and grades from stored scores with the late penalty."""

from __future__ import annotations

from sqlalchemy import select

from app.db.models import AuditLog, Submission
from app.submissions import recording
from app.submissions.lifecycle import CANCELLED, SUPERSEDED
from tests.app.utils.factories import judged_result, live_worker, make_submission, make_user


def verdict(db, sub_id: int) -> tuple[str, str | None]:
    db.expire_all()
    sub = db.get(Submission, sub_id)
    return sub.status, sub.verdict


def test_a_ta_cancels_a_queued_submission_and_it_shows_as_cancelled(client, db, student, ta):
    sub = make_submission(db, student, language="cuda-program")
    response = client.post(f"/api/admin/submissions/{sub.id}/cancel", headers=ta.headers)
    assert response.json() == {"id": sub.id, "verdict": "CANCELLED"}
    assert verdict(db, sub.id) == ("done", "CANCELLED")
    body = client.get(f"/api/submissions/{sub.id}", headers=student.headers).json()
    assert (body["status"], body["verdict"], body["queue_position"]) == ("done", "CANCELLED",
                                                                          None)
    again = client.post(f"/api/admin/submissions/{sub.id}/cancel", headers=ta.headers)
    assert again.status_code == 409 and "already cancelled" in again.json()["detail"]
    assert client.post(f"/api/admin/submissions/{sub.id}/cancel",
                       headers=student.headers).status_code == 403
    assert db.scalar(select(AuditLog.action)) == "cancel"


def test_cancel_all_queued_of_one_language(client, db, settings, student, other_student, ta):
    waiting = [make_submission(db, a, language="cuda-kernel") for a in (student, other_student)]
    cpu = make_submission(db, student)
    judged = make_submission(db, other_student, language="cuda-kernel")
    recording.record_result(db, settings, judged.id, 1, judged_result(3, 0.1))
    response = client.post("/api/admin/cancel-queued", headers=ta.headers,
                           json={"language": "cuda-kernel"})
    assert response.json() == {"language": "cuda-kernel", "cancelled": 2}
    assert [verdict(db, s.id) for s in waiting] == [("done", CANCELLED)] * 2
    assert verdict(db, cpu.id) == ("queued", None)
    assert verdict(db, judged.id)[1] == "WA"
    bad = client.post("/api/admin/cancel-queued", headers=ta.headers, json={"language": "rust"})
    assert bad.status_code == 422 and bad.json()["field"] == "language"


def test_rejudge_all_covers_queued_work_and_says_what_it_skipped(client, db, settings,
                                                                 student, ta):
    live_worker(db)  # c-program can be judged now, cuda-program cannot
    done = make_submission(db, student)
    recording.record_result(db, settings, done.id, 1, judged_result(3, 0.1))
    queued_cuda = make_submission(db, student, language="cuda-program")
    superseded = make_submission(db, student)
    superseded.status, superseded.verdict = "done", SUPERSEDED
    cancelled = make_submission(db, student)
    cancelled.status, cancelled.verdict = "done", CANCELLED
    db.commit()
    body = client.post("/api/admin/rejudge-all", headers=ta.headers).json()
    assert (body["count"], body["by_status"]) == (2, {"done": 1, "queued": 1})
    assert body["skipped"] == {"cancelled": 1, "superseded": 1}
    assert body["waiting"] == {"cuda-program": 1}
    assert body["message"] == ("rejudging 2 submission(s) (1 done, 1 queued); skipped "
                               "1 cancelled, 1 superseded; waiting for a worker: 1 cuda-program")
    db.expire_all()
    assert [db.get(Submission, s.id).attempt for s in (done, queued_cuda)] == [2, 2]
    assert db.get(Submission, superseded.id).attempt == 1


def test_grades_use_the_stored_score_and_the_late_penalty(client, db, settings, ta):
    alice, bob = make_user(db, "alice"), make_user(db, "bob")
    make_user(db, "carol")
    on_time = make_submission(db, alice)
    result = judged_result(7, 0.5)
    result["score"], result["max_score"] = 42, 100  # whatever the worker computed is kept
    recording.record_result(db, settings, on_time.id, 1, result)
    late = make_submission(db, bob)
    late.late, late.late_penalty = True, 25.0
    db.commit()
    recording.record_result(db, settings, late.id, 1, judged_result(10, 0.5))
    lines = client.get("/api/admin/grades.csv", headers=ta.headers).text.splitlines()
    assert lines[0] == ("username,display_name,email,submission,passed,score,max_score,late,"
                        "penalty_percent,final_score,rank")
    assert lines[1] == f"alice,Alice,alice@example.edu,{on_time.id},7,42,100,no,0,42,2"
    assert lines[2] == f"bob,Bob,bob@example.edu,{late.id},10,60,100,yes,25,45,1"  # 45 > 42
    assert lines[3] == "carol,Carol,carol@example.edu,,0,0,100,,0,0,"
    assert client.get("/api/admin/grades.csv", headers=alice.headers).status_code == 403
