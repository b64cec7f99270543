"""The history page: the chart, two submissions compared, a link from "my submissions"."""

from __future__ import annotations

from datetime import timedelta

from app.db.models import utcnow
from app.submissions import recording
from tests.app.pages.test_pages import HTML, login
from tests.app.utils.factories import judged_result, make_submission


def judged(db, settings, account, passed: int, seconds: float, minutes_ago: int) -> int:
    sub = make_submission(db, account)
    sub.created_at = utcnow() - timedelta(minutes=minutes_ago)
    db.commit()
    recording.record_result(db, settings, sub.id, 1, judged_result(passed, seconds))
    return sub.id


def test_the_page_compares_the_last_two_by_default(client, db, settings, student):
    older = judged(db, settings, student, 8, 0.5, 20)
    newer = judged(db, settings, student, 9, 0.4, 10)
    login(client, student)
    assert 'href="/history"' in client.get("/submissions", headers=HTML).text
    page = client.get("/history", headers=HTML).text
    assert "My history" in page and 'class="history"' in page
    assert f"#{older}</a> → <a href=\"/submissions/{newer}\">#{newer}" in page
    assert 'fixed t09' in page and "(-1.000 s)" in page
    assert '<tr data-test="t09" class="changed">' in page
    assert '<td class="delta better">-0.100 s (-20%)</td>' in page


def test_one_submission_is_not_enough_to_compare(client, db, settings, student):
    judged(db, settings, student, 8, 0.5, 10)
    login(client, student)
    page = client.get("/history", headers=HTML).text
    assert "Two judged submissions are needed" in page and "compare-table" not in page


def test_a_ta_opens_a_students_history_and_a_student_cannot(client, db, settings, student,
                                                           other_student, ta):
    judged(db, settings, other_student, 8, 0.5, 10)
    login(client, student)
    refused = client.get("/history", params={"student": "bob"}, headers=HTML)
    assert refused.status_code == 403 and "Traceback" not in refused.text
    login(client, ta)
    assert "History of bob" in client.get("/history", params={"student": "bob"},
                                          headers=HTML).text
