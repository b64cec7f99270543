"""A student's history: two submissions compared test by test, and the best-so-far over time."""

from __future__ import annotations

from datetime import timedelta

from app.db.models import Assignment, Submission, utcnow
from app.submissions import recording
from tests.app.utils.factories import judged_result, make_submission


def judged(db, settings, account, passed: int, seconds: float, minutes_ago: int = 0,
           gpu: str | None = None) -> int:
    sub = make_submission(db, account)
    sub.created_at = utcnow() - timedelta(minutes=minutes_ago)
    db.commit()
    result = judged_result(passed, seconds)
    if gpu:
        result["worker"] = {"gpu": gpu}
    recording.record_result(db, settings, sub.id, 1, result)
    return sub.id


def test_two_submissions_compare_verdict_changes_and_time_differences(client, db, settings,
                                                                      student):
    a = judged(db, settings, student, 8, 0.5, minutes_ago=10)
    b = judged(db, settings, student, 9, 0.4)
    body = client.get("/api/history/compare", params={"a": a, "b": b},
                      headers=student.headers).json()
    assert body["fixed"] == ["t09"] and body["broken"] == []
    t01 = body["tests"][0]
    assert (t01["verdict_a"], t01["verdict_b"], t01["changed"]) == ("AC", "AC", False)
    assert abs(t01["delta_s"] + 0.1) < 1e-9  # 0.4 - 0.5: faster
    t09 = next(t for t in body["tests"] if t["test_id"] == "t09")
    assert (t09["verdict_a"], t09["verdict_b"], t09["changed"], t09["delta_s"]) == (
        "WA", "AC", True, None)
    assert abs(body["delta_total_s"] - (4.0 - 5.0)) < 1e-9
    assert body["a"]["passed"] == 8 and body["b"]["passed"] == 9


def test_someone_elses_submission_cannot_be_compared(client, db, settings, student,
                                                     other_student, ta):
    mine = judged(db, settings, student, 8, 0.5)
    theirs = judged(db, settings, other_student, 8, 0.5)
    refused = client.get("/api/history/compare", params={"a": mine, "b": theirs},
                         headers=student.headers)
    assert refused.status_code == 404  # as for any submission: ids cannot be probed
    mixed = client.get("/api/history/compare", params={"a": mine, "b": theirs},
                       headers=ta.headers)
    assert mixed.status_code == 422 and mixed.json()["field"] == "b"
    bad = client.get("/api/history/compare", params={"a": "x", "b": mine},
                     headers=student.headers)
    assert bad.status_code == 422 and bad.json()["field"] == "a"


def test_the_best_so_far_steps_only_when_a_submission_beats_it(client, db, settings, student):
    first = judged(db, settings, student, 8, 0.5, minutes_ago=30)
    worse = judged(db, settings, student, 7, 0.1, minutes_ago=20)
    better = judged(db, settings, student, 10, 0.6, minutes_ago=10)
    make_submission(db, student)  # still queued: not on the chart
    body = client.get("/api/history/progress", headers=student.headers).json()
    [series] = body["series"]
    assert series["model"] == "CPU"
    steps = [(p["submission_id"], p["best_id"], p["passed"], p["improved"])
             for p in series["points"]]
    assert steps == [(first, first, 8, True), (worse, first, 8, False),
                     (better, better, 10, True)]
    assert series["points"][2]["total_s"] == 6.0


def test_the_best_so_far_is_kept_per_gpu_model(client, db, settings, student):
    judged(db, settings, student, 10, 0.5, minutes_ago=20, gpu="NVIDIA GeForce GTX 1080")
    judged(db, settings, student, 10, 0.1, minutes_ago=10, gpu="NVIDIA H100 80GB HBM3")
    body = client.get("/api/history/progress", headers=student.headers).json()
    assert [s["model"] for s in body["series"]] == ["NVIDIA GeForce GTX 1080",
                                                    "NVIDIA H100 80GB HBM3"]


def test_only_tas_see_another_students_history(client, db, settings, student, other_student,
                                               ta):
    judged(db, settings, other_student, 5, 0.5)
    refused = client.get("/api/history/progress", params={"user": "bob"},
                         headers=student.headers)
    assert refused.status_code == 403 and refused.json()["field"] == "user"
    seen = client.get("/api/history/progress", params={"user": "bob"}, headers=ta.headers)
    assert seen.json()["user"] == "bob" and len(seen.json()["series"][0]["points"]) == 1
    missing = client.get("/api/history/progress", params={"user": "nobody"}, headers=ta.headers)
    assert missing.status_code == 404


def test_rows_of_another_assignment_are_not_in_its_history(client, db, settings, student):
    sub_id = judged(db, settings, student, 5, 0.5)
    first = db.get(Submission, sub_id).assignment
    other = Assignment(term_id=first.term_id, name="challenge", suite="hw4", position=1)
    db.add(other)
    db.flush()
    db.get(Submission, sub_id).assignment_id = other.id
    db.commit()
    assert client.get("/api/history/progress", headers=student.headers).json()["series"] == []
    there = client.get("/api/history/progress", params={"assignment": "challenge"},
                       headers=student.headers).json()
    assert len(there["series"][0]["points"]) == 1


def test_an_accepted_result_against_a_compile_error_has_no_time_difference(client, db,
                                                                           settings, student):
    """A CE's total is 0 s: AC against it read "-7.671 s", as if the fix had cost time."""
    broken = make_submission(db, student)
    recording.record_result(db, settings, broken.id, 1, {
        "compile": {"ok": False, "log": "hw4.c:1: error: expected ';'"}, "score": 0,
        "passed": 0, "tests": [], "system_error": None})
    fixed = judged(db, settings, student, 10, 0.7)
    body = client.get("/api/history/compare", params={"a": broken.id, "b": fixed},
                      headers=student.headers).json()
    assert body["a"]["verdict"] == "CE" and body["b"]["verdict"] == "AC"
    assert body["delta_total_s"] is None
    assert body["fixed"] == [f"t{i:02d}" for i in range(1, 11)]
