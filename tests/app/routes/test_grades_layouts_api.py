"""Grades the LMS takes (issue 23): Canvas's and Moodle's import layouts besides ours, the final
score after the late penalty and the board's rank; the suite (assignment) is a parameter."""

from __future__ import annotations

import csv
import io

from app.judging import recording
from tests.app.utils.factories import judged_result, make_submission, make_user


def judged(db, settings, account, passed: int, seconds: float, penalty: float = 0.0) -> None:
    sub = make_submission(db, account)
    sub.late, sub.late_penalty = bool(penalty), penalty
    db.commit()
    recording.record_result(db, settings, sub.id, 1, judged_result(passed, seconds))


def table(client, ta, query: str) -> list[list[str]]:
    answer = client.get(f"/api/admin/grades.csv{query}", headers=ta.headers)
    assert answer.status_code == 200, answer.text
    return list(csv.reader(io.StringIO(answer.text)))


def test_canvas_gets_its_gradebook_columns_and_the_final_score(client, db, settings, student,
                                                                other_student, ta):
    judged(db, settings, student, 10, 0.9)
    judged(db, settings, other_student, 10, 0.1, penalty=20.0)
    rows = table(client, ta, "?layout=canvas&column=HW4%20(1234)")
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "HW4 (1234)"]
    assert rows[1][0] == "Points Possible"
    assert rows[2:] == [["Alice", "", "alice", "alice", "", "60"],
                        ["Bob", "", "bob", "bob", "", "48"]]


def test_moodle_gets_an_identifier_a_grade_and_the_rank_in_feedback(client, db, settings,
                                                                     student, other_student, ta):
    make_user(db, "carol")
    judged(db, settings, student, 10, 0.9)
    judged(db, settings, other_student, 10, 0.1, penalty=20.0)
    rows = table(client, ta, "?layout=moodle")
    assert rows[0] == ["Username", "Email address", settings.suite, "Feedback"]
    assert rows[1][:3] == ["alice", "alice@example.edu", "60"] and "rank 1" in rows[1][3]
    assert rows[2][:3] == ["bob", "bob@example.edu", "48"]
    assert rows[2][3].startswith("late: 20% off 60; rank 2")
    assert rows[3] == ["carol", "carol@example.edu", "0", "no judged submission"]


def test_the_export_is_per_assignment_and_refuses_an_unknown_layout(client, db, settings,
                                                                    student, ta):
    judged(db, settings, student, 10, 0.9)
    assert settings.suite == "hw4-mini" and table(client, ta, "")[1][-1] == "1"  # its board
    client.post("/api/admin/assignments", headers=ta.headers,
                json={"name": "challenge", "suite": "hw4", "position": 1})
    other = table(client, ta, "?assignment=challenge")  # nothing judged on it, no rank
    assert (other[1][0], other[1][3], other[1][-2], other[1][-1]) == ("alice", "", "0", "")
    answer = client.get("/api/admin/grades.csv?layout=blackboard", headers=ta.headers)
    assert answer.status_code == 422 and "canvas, moodle" in answer.json()["detail"]
    assert client.get("/api/admin/grades.csv?layout=canvas",
                      headers=student.headers).status_code == 403
