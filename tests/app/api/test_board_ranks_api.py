"""The board's ranks: ties within the measured noise shown as "1=" in the API, the
CSV and the page with the one line that says why; late penalties ranked as graded."""

from __future__ import annotations

from app.scoreboard.ties import TIE_LINE
from app.submissions import recording
from tests.app.utils.factories import judged_result, make_submission


def judged(db, settings, account, passed: int, seconds: float, band: float | None = None,
           penalty: float = 0.0) -> int:
    sub = make_submission(db, account)
    if penalty:
        sub.late, sub.late_penalty = True, penalty
        db.commit()
    result = judged_result(passed, seconds)
    if band is not None:
        result["timing"] = {"total_s": seconds * 10, "total_band_s": band}
    recording.record_result(db, settings, sub.id, 1, result)
    return sub.id


def test_totals_within_the_noise_share_a_rank_everywhere(client, db, settings, student,
                                                          other_student, ta):
    judged(db, settings, student, 10, 1.8350, band=1.19)  # ting
    judged(db, settings, other_student, 10, 1.8357, band=0.71)  # roger, 7 ms slower
    rows = client.get("/api/scoreboard", headers=student.headers).json()["rows"]
    assert [(r["rank"], r["rank_label"], r["tie"]) for r in rows] == [
        (1, "1=", "within noise"), (1, "1=", "within noise")]
    lines = client.get("/api/scoreboard.csv", headers=student.headers).text.splitlines()
    head = lines[0].split(",")
    assert [line.split(",")[head.index("rank")] for line in lines[1:]] == ["1=", "1="]
    assert [line.split(",")[head.index("tie")] for line in lines[1:]] == ["within noise"] * 2
    client.cookies.clear()
    page = client.get("/partials/scoreboard", headers=student.headers).text
    assert TIE_LINE in page and page.count('class="tie" title="within noise">1=</td>') == 2


def test_no_tie_line_when_the_noise_separates_everyone(client, db, settings, student,
                                                       other_student):
    judged(db, settings, student, 10, 1.0, band=0.05)
    judged(db, settings, other_student, 10, 2.0, band=0.05)
    rows = client.get("/api/scoreboard", headers=student.headers).json()["rows"]
    assert [(r["rank_label"], r["tie"]) for r in rows] == [("1", None), ("2", None)]
    client.cookies.clear()
    assert TIE_LINE not in client.get("/partials/scoreboard", headers=student.headers).text


def test_a_late_ac_ranks_by_its_final_score_below_an_on_time_ac(client, db, settings, student,
                                                                 other_student, ta):
    # bob's late AC is faster, but 20% off leaves 48 of 60: alice's on-time 60 ranks first
    judged(db, settings, student, 10, 0.9)  # alice, on time
    judged(db, settings, other_student, 10, 0.1, penalty=20.0)  # bob, late
    rows = client.get("/api/scoreboard", headers=student.headers).json()["rows"]
    assert [(r["rank"], r["score"], r["raw_score"], r["penalty_percent"], r["late"])
            for r in rows] == [(1, 60, 60, 0, False), (2, 48, 60, 20, True)]
    assert rows[0]["user"] == student.username
    lines = client.get("/api/scoreboard.csv", headers=student.headers).text.splitlines()
    head = lines[0].split(",")
    bob = lines[2].split(",")
    assert (bob[head.index("rank")], bob[head.index("score")], bob[head.index("raw_score")],
            bob[head.index("penalty_percent")]) == ("2", "48", "60", "20")
    client.cookies.clear()
    page = client.get("/partials/scoreboard", headers=student.headers).text
    assert "48 <span" in page and "(60 &minus;20%)" in page
    grades = client.get("/api/admin/grades.csv", headers=ta.headers).text.splitlines()
    assert grades[1].endswith(",60,1") and grades[2].endswith(",48,2")  # same order, one rule


def test_a_late_submission_that_scores_less_than_an_earlier_one_is_not_the_best(
        client, db, settings, student):
    on_time = judged(db, settings, student, 9, 0.5)  # 57
    judged(db, settings, student, 10, 0.5, penalty=50.0)  # 30 after the penalty
    board = client.get("/api/scoreboard", headers=student.headers).json()["rows"]
    assert [(r["score"], r["passed"]) for r in board] == [(57, 9)]
    assert on_time
