"""Announcements: a TA posts one, every student reads it in the API and at the top of every
page until it expires, is withdrawn or they hide it; what a TA types cannot run on a page."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import select

from app.db.models import Announcement, AuditLog, utcnow
from tests.app.pages.test_pages import HTML, login


def announce(client, ta, **fields) -> dict:
    response = client.post("/api/announcements", headers=ta.headers,
                           json={"title": "Deadline moved", "body": "Now Friday.", **fields})
    assert response.status_code == 201, response.text
    return response.json()


def titles(client, account) -> list[str]:
    return [a["title"] for a in client.get("/api/announcements", headers=account.headers).json()]


def test_a_posted_announcement_reaches_every_student_and_is_audited(client, db, ta, student,
                                                                    other_student):
    posted = announce(client, ta)
    assert posted["author"] == "Tara" and posted["expires_at"] is None
    assert titles(client, student) == titles(client, other_student) == ["Deadline moved"]
    row = db.scalar(select(AuditLog).where(AuditLog.action == "announce"))
    assert row is not None and row.target == f"announcement {posted['id']}"


@pytest.mark.parametrize("path", ["/submit", "/submissions", "/scoreboard", "/custom",
                                  "/account"])
def test_every_student_page_shows_the_current_announcements(client, ta, student, path):
    announce(client, ta)
    login(client, student)
    page = client.get(path, headers=HTML).text
    assert 'id="announcements"' in page and "Deadline moved" in page and "Now Friday." in page


def test_an_expired_announcement_is_no_longer_shown(client, db, ta, student):
    posted = announce(client, ta, expires_at="2099-01-01T00:00+00:00")
    assert posted["expires_at"].startswith("2099-01-01T00:00")
    row = db.get(Announcement, posted["id"])
    row.expires_at = utcnow() - timedelta(minutes=1)
    db.commit()
    assert titles(client, student) == []


def test_an_expiry_in_the_past_or_unreadable_is_refused(client, ta):
    for when, why in (("2001-01-01T00:00", "has passed"), ("friday", "is not a time")):
        response = client.post("/api/announcements", headers=ta.headers,
                               json={"title": "x", "expires_at": when})
        assert response.status_code == 422 and why in response.json()["detail"]


def test_a_student_hides_one_for_themselves_only(client, ta, student, other_student):
    posted = announce(client, ta)
    response = client.post(f"/api/announcements/{posted['id']}/dismiss",
                           headers=student.headers)
    assert response.status_code == 204
    assert titles(client, student) == []
    assert titles(client, other_student) == ["Deadline moved"]
    login(client, student)
    assert 'id="announcements"' not in client.get("/submit", headers=HTML).text


def test_a_withdrawn_announcement_is_gone_for_everyone(client, db, ta, student):
    posted = announce(client, ta)
    assert client.delete(f"/api/announcements/{posted['id']}",
                         headers=ta.headers).status_code == 204
    assert titles(client, student) == []
    assert db.scalar(select(AuditLog.action).where(
        AuditLog.action == "announcement-withdraw")) is not None


def test_students_cannot_post_or_withdraw(client, ta, student):
    posted = announce(client, ta)
    assert client.post("/api/announcements", headers=student.headers,
                       json={"title": "free pizza"}).status_code == 403
    assert client.delete(f"/api/announcements/{posted['id']}",
                         headers=student.headers).status_code == 403


def test_markup_in_an_announcement_is_shown_as_text_and_links_become_links(client, ta, student):
    announce(client, ta, title="<b>bold</b>",
             body='<script>alert(1)</script> see https://example.edu/faq?a=1&b=2.')
    login(client, student)
    page = client.get("/submit", headers=HTML).text
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;" in page
    assert "&lt;b&gt;bold&lt;/b&gt;" in page
    assert ('<a href="https://example.edu/faq?a=1&amp;b=2" rel="noopener noreferrer nofollow">'
            in page)


def test_the_ta_page_posts_and_withdraws(client, db, ta, student):
    login(client, ta)
    csrf = {"x-csrf-token": csrf_of(client)}
    response = client.post("/admin/announcements", headers=csrf,
                           data={"title": "Lab closed", "body": "Tuesday",
                                 "expires_at": "2099-05-01T12:00"})
    assert response.status_code == 200 and "posted: Lab closed" in response.text
    assert titles(client, student) == ["Lab closed"]
    row = db.scalar(select(Announcement))
    response = client.post(f"/admin/announcements/{row.id}/withdraw", headers=csrf)
    assert "withdrawn" in response.text and titles(client, student) == []


def test_an_announcement_without_a_title_is_refused_on_the_ta_page(client, ta):
    login(client, ta)
    response = client.post("/admin/announcements", headers={"x-csrf-token": csrf_of(client)},
                           data={"title": "  ", "body": "x"})
    assert "an announcement needs a title" in response.text


def csrf_of(client) -> str:
    page = client.get("/admin", headers=HTML).text
    return page.split('name="csrf-token" content="', 1)[1].split('"', 1)[0]
