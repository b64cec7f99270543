"""Every request that changes something is refused when another site's page sent it: a walk over
every POST, PUT, PATCH and DELETE route of the app, so a route added tomorrow is covered without
remembering to be; and the form that once slipped through (set-password: login CSRF with the
attacker's own unused invite link) named on its own."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.accounts import signin_links, users
from app.core.config import Settings
from app.db.models import SignInLink
from app.main import create_app
from tests.app.utils import routes
from tests.app.utils.factories import Account

EVIL = "https://evil.example"
CHANGING = {"POST", "PUT", "PATCH", "DELETE"}
CROSS_SITE = ({"Origin": EVIL}, {"Referer": f"{EVIL}/trap.html"}, {"Origin": "null"})


def changing_routes(settings: Settings) -> list[tuple[str, str]]:
    """(method, path with every parameter filled) of each route that changes something."""
    return routes.walk(create_app(settings), CHANGING)


def test_the_walk_finds_the_forms_that_sign_a_browser_in(settings: Settings):
    walked = changing_routes(settings)
    assert {("POST", "/login"), ("POST", "/set-password"), ("POST", "/logout"),
            ("POST", "/api/auth/token")} <= set(walked)
    assert len(walked) > 40


def test_every_changing_route_refuses_another_sites_page(client: TestClient, settings: Settings,
                                                         ta: Account):
    """Signed in as a TA (cookie and bearer token both), whatever the route would have done."""
    for method, path in changing_routes(settings):
        for headers in CROSS_SITE:
            answer = client.request(method, path, headers={**ta.headers, **headers},
                                    data={"x": "1"})
            assert answer.status_code == 403, (method, path, headers, answer.text[:200])
            assert answer.json()["field"] == "origin", (method, path)


def test_a_browser_form_gets_a_readable_page(client: TestClient):
    answer = client.post("/login", data={"username": "a", "password": "b"},
                         headers={"Origin": EVIL, "Accept": "text/html"})
    assert answer.status_code == 403
    assert answer.headers["content-type"].startswith("text/html")
    assert "another site&#x27;s page" in answer.text


@pytest.mark.parametrize("purpose", [signin_links.INVITE, signin_links.RESET])
def test_a_students_own_link_posted_from_another_site_signs_nobody_in(
        client: TestClient, db: Session, settings: Settings, student: Account, purpose: str):
    """The attacker posts their own unused link with a password they chose: the victim's
    browser would be signed into the attacker's account. Refused, and the link still works."""
    user = users.get_by_username(db, student.username)
    assert user is not None
    link = signin_links.create(db, user, purpose, 3600)
    db.commit()
    chosen = "attacker-chose-this"
    form = {"token": link.token, "password": chosen, "confirm": chosen}
    for headers in CROSS_SITE:
        refused = client.post("/set-password", data=form, headers=headers, follow_redirects=False)
        assert refused.status_code == 403
        assert client.get("/api/auth/me").status_code == 401
    db.expire_all()
    row = db.scalar(select(SignInLink).where(SignInLink.user_id == user.id))
    assert row is not None and row.used_at is None
    own = client.post("/set-password", data=form, headers={"Origin": "http://testserver"},
                      follow_redirects=False)
    assert own.status_code == 303 and client.get("/api/auth/me").status_code == 200


def test_the_cli_and_scripts_send_no_origin_and_are_served(client: TestClient, student: Account):
    answer = client.post("/api/auth/token", data={"username": student.username,
                                                  "password": student.password})
    assert answer.status_code == 200
