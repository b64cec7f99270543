"""Grades the LMS takes: Canvas's and Moodle's import layouts besides ours, the final
score after the late penalty and the board's rank; the suite (assignment) is a parameter."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from app.submissions import recording
from app.web import downloads
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


def test_every_download_is_named_for_its_course_assignment_layout_and_day(client, db, settings,
                                                                          student, ta):
    """They all arrived as grades.csv: two exports of a day could not be told apart."""
    judged(db, settings, student, 10, 0.9)
    day = datetime.now(settings.course_zone).strftime("%Y-%m-%d")
    names = {}
    for layout in ("flashjudge", "canvas", "moodle"):
        answer = client.get("/api/admin/grades.csv", headers=ta.headers,
                            params={"layout": layout})
        names[layout] = answer.headers["content-disposition"]
    board = client.get("/api/scoreboard.csv", headers=ta.headers)
    names["board"] = board.headers["content-disposition"]
    a = settings.suite  # the default assignment's name
    assert names == {
        "flashjudge": f'attachment; filename="flashjudge-{a}-flashjudge-{day}.csv"',
        "canvas": f'attachment; filename="flashjudge-{a}-canvas-{day}.csv"',
        "moodle": f'attachment; filename="flashjudge-{a}-moodle-{day}.csv"',
        "board": f'attachment; filename="flashjudge-{a}-scoreboard-{day}.csv"'}


def test_a_download_name_keeps_to_safe_characters():
    taipei = ZoneInfo("Asia/Taipei")
    late_utc = datetime(2026, 12, 1, 20, 0, tzinfo=UTC)  # already the 2nd in Taipei
    assert downloads.csv_name("CS 5xx/Fall", "hw4", "canvas", taipei, late_utc) == \
        "CS-5xx-Fall-hw4-canvas-2026-12-02.csv"
    assert downloads.csv_name('"..', "a b", "moodle", UTC, late_utc) == \
        "x-a-b-moodle-2026-12-01.csv"
