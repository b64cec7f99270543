"""The audit log, read: TAs filter it by actor, action, target and days and page through it, on
/api/admin/audit and on /admin/audit; students see neither."""

from __future__ import annotations

from datetime import datetime, timedelta

from app.db.models import AuditLog
from tests.app.pages.test_pages import HTML, login


def rows(db, ta_id: int, other_id: int) -> None:
    """60 rejudges by tara on 2026-11-20 (UTC), a freeze by the other TA on 2026-11-21 and a
    refused sign-in (no actor) on 2026-11-22."""
    start = datetime(2026, 11, 20, 8, 0)
    db.add_all([AuditLog(actor_id=ta_id, action="rejudge", target=f"submission {i}",
                         detail={}, created_at=start + timedelta(minutes=i)) for i in range(60)])
    db.add(AuditLog(actor_id=other_id, action="freeze", target="scoreboard", detail={},
                    created_at=datetime(2026, 11, 21, 9, 0)))
    db.add(AuditLog(actor_id=None, action="oidc-refused", target="email mallory@example.edu",
                    detail={"why": "not on the roster"}, created_at=datetime(2026, 11, 22, 7)))
    db.commit()


def audit(client, ta, **filters) -> dict:
    response = client.get("/api/admin/audit", headers=ta.headers, params=filters)
    assert response.status_code == 200, response.text
    return response.json()


def test_newest_first_fifty_to_a_page(client, db, ta, other_student):
    rows(db, ta.id, other_student.id)
    first = audit(client, ta)
    assert (first["total"], first["pages"], len(first["entries"])) == (62, 2, 50)
    assert first["entries"][0]["action"] == "oidc-refused"
    assert first["entries"][0]["actor"] == "-"
    second = audit(client, ta, page=2)
    assert [e["target"] for e in second["entries"]][-1] == "submission 0"
    assert audit(client, ta, page=99)["page"] == 2  # past the end: the last page


def test_filters_by_actor_action_target_and_days(client, db, ta, other_student):
    rows(db, ta.id, other_student.id)
    assert audit(client, ta, actor="bob")["total"] == 1
    assert audit(client, ta, actor="-")["entries"][0]["detail"] == {"why": "not on the roster"}
    assert audit(client, ta, action="rejudge")["total"] == 60
    assert [e["target"] for e in audit(client, ta, target="SUBMISSION 5")["entries"]] == [
        "submission 59", "submission 58", "submission 57", "submission 56", "submission 55",
        "submission 54", "submission 53", "submission 52", "submission 51", "submission 50",
        "submission 5"]
    assert audit(client, ta, since="2026-11-21", until="2026-11-21")["total"] == 1
    assert audit(client, ta, since="2026-11-21")["total"] == 2
    assert audit(client, ta, until="2026-11-20")["total"] == 60


def test_days_are_the_course_time_zone(client, db, ta, other_student, settings):
    """08:00 UTC on the 20th is 16:00 in Taipei; 23:30 UTC on the 20th is the 21st there."""
    db.add(AuditLog(actor_id=ta.id, action="freeze", target="scoreboard", detail={},
                    created_at=datetime(2026, 11, 20, 23, 30)))
    db.commit()
    settings.course_timezone = "Asia/Taipei"
    try:
        assert audit(client, ta, since="2026-11-21", until="2026-11-21")["total"] == 1
        assert audit(client, ta, until="2026-11-20")["total"] == 0
    finally:
        settings.course_timezone = "UTC"


def test_an_unreadable_day_says_how_to_write_one(client, ta):
    response = client.get("/api/admin/audit", headers=ta.headers, params={"since": "friday"})
    assert response.status_code == 422
    assert response.json()["detail"] == "since: 'friday' is not a day such as 2026-12-01"


def test_students_see_no_audit(client, student):
    assert client.get("/api/admin/audit", headers=student.headers).status_code == 403
    login(client, student)
    assert client.get("/admin/audit", headers=HTML).status_code == 403


def test_the_page_filters_and_pages_with_links_that_keep_the_filters(client, db, ta,
                                                                      other_student):
    rows(db, ta.id, other_student.id)
    login(client, ta)
    page = client.get("/admin/audit", params={"action": "rejudge"}, headers=HTML).text
    assert "60 row(s), page 1 of 2" in page and "submission 59" in page
    assert "freeze" in page  # among the action filter's choices
    assert 'href="/admin/audit?actor=&amp;action=rejudge&amp;target=&amp;since=&amp;until=' \
           '&amp;page=2" rel="next"' in page
    page = client.get("/admin/audit", params={"actor": "-"}, headers=HTML).text
    assert "1 row(s)" in page and "mallory@example.edu" in page and "why: not on the roster" \
        in page
    page = client.get("/admin/audit", params={"until": "31/12"}, headers=HTML).text
    assert "until: &#39;31/12&#39; is not a day such as 2026-12-01" in page
