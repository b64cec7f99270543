"""The scoreboard: best submission per student, ranked by passed then time; freeze; CSVs."""

from __future__ import annotations

from app.submissions import recording
from tests.app.utils.factories import judged_result, make_submission, make_user


def judged(db, settings, account, passed: int, seconds: float) -> int:
    sub = make_submission(db, account)
    recording.record_result(db, settings, sub.id, 1, judged_result(passed, seconds))
    return sub.id


def test_rows_rank_by_passed_then_time_with_each_best_submission(client, db, settings, ta):
    alice, bob, carol = (make_user(db, n) for n in ("alice", "bob", "carol"))
    judged(db, settings, alice, 8, 0.5)
    best = judged(db, settings, alice, 10, 0.9)
    judged(db, settings, bob, 10, 0.3)
    judged(db, settings, carol, 10, 0.3)
    board = client.get("/api/scoreboard", headers=alice.headers).json()
    assert board["frozen"] is False
    assert [(r["rank"], r["user"], r["passed"]) for r in board["rows"]] == [
        (1, "bob", 10), (1, "carol", 10), (3, "alice", 10)]
    row = board["rows"][2]
    assert row["time"] == 9.0 and row["score"] == 60
    assert row["tests"]["t01"] == {"verdict": "AC", "seconds": 0.9, "band_s": None}
    assert set(row) == {"rank", "rank_label", "tie", "user", "alias", "passed", "time", "score",
                        "raw_score", "penalty_percent", "tests", "late", "band_s"}
    assert best  # alice's row is the 10-passed submission, not the faster 8-passed one


def test_tas_and_unjudged_submissions_are_not_ranked(client, db, settings, student, ta):
    judged(db, settings, ta, 10, 0.1)
    make_submission(db, student)
    assert client.get("/api/scoreboard", headers=student.headers).json()["rows"] == []


def test_freeze_hides_later_results_from_students_but_not_tas(client, db, settings, student, ta):
    judged(db, settings, student, 5, 1.0)
    assert client.post("/api/admin/scoreboard/freeze", headers=ta.headers).json() == {
        "frozen": True}
    judged(db, settings, student, 10, 1.0)
    public = client.get("/api/scoreboard", headers=student.headers).json()
    assert public["frozen"] is True and public["rows"][0]["passed"] == 5
    live = client.get("/api/scoreboard?live=true", headers=ta.headers).json()
    assert live["rows"][0]["passed"] == 10
    student_live = client.get("/api/scoreboard?live=true", headers=student.headers).json()
    assert student_live["rows"][0]["passed"] == 5
    client.post("/api/admin/scoreboard/unfreeze", headers=ta.headers)
    assert client.get("/api/scoreboard", headers=student.headers).json()["rows"][0][
        "passed"] == 10


def test_scoreboard_csv_is_laid_out_like_the_course(client, db, settings, student):
    judged(db, settings, student, 9, 0.5)
    lines = client.get("/api/scoreboard.csv", headers=student.headers).text.splitlines()
    assert lines[0].startswith("user,rank,passed,time,score,t01,t02")
    assert lines[0].endswith("t10,band_s,late,frozen_at,penalty_percent,raw_score,tie,alias")
    assert lines[1].split(",")[:6] == ["alice", "1", "9", "5.000", "57", "0.500"]  # ms, not 0.01 s
    assert lines[1].split(",")[-8:] == ["WA", "", "", "", "0", "57", "", ""]  # no band yet,
    # on time, live board, no penalty, no tie, no alias


def test_a_frozen_csv_says_so_on_every_row(client, db, settings, student, ta):
    judged(db, settings, student, 9, 0.5)
    client.post("/api/admin/scoreboard/freeze", headers=ta.headers)
    lines = client.get("/api/scoreboard.csv", headers=student.headers).text.splitlines()
    column = lines[0].split(",").index("frozen_at")
    assert lines[1].split(",")[column].endswith("Z")  # the freeze time
    live = client.get("/api/scoreboard.csv?live=true", headers=ta.headers).text.splitlines()
    assert live[1].split(",")[column] == ""


def test_the_page_shows_scores_marks_my_row_and_shades_against_the_fastest(client, db, settings,
                                                                            student, other_student):
    judged(db, settings, student, 10, 0.5)
    judged(db, settings, other_student, 10, 0.25)
    client.cookies.clear()
    page = client.get("/partials/scoreboard", headers=student.headers).text
    assert "<th data-sort=\"num\">Score</th>" in page
    mine = page.split(f'data-user="{student.username}"')[1].split("</tr>")[0]
    assert 'class="mine"' in mine and "(you)" in mine and "0.500" in mine
    assert "2.00x the fastest passing time" in mine
