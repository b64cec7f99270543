"""Tokens and sessions per user are capped, oldest first (one student held 300
tokens and 100 live sessions), and /account lists both."""

from __future__ import annotations

from fastapi.testclient import TestClient
from sqlalchemy import func, select

from app.db.models import ApiToken, LoginSession
from app.main import create_app
from tests.app.pages.test_account_pages import csrf_of
from tests.app.pages.test_pages import HTML


def count(db, model, user_id: int, **where: str) -> int:
    query = select(func.count()).select_from(model).where(model.user_id == user_id)
    for name, value in where.items():
        query = query.where(getattr(model, name) == value)
    return db.scalar(query) or 0


def test_past_the_cap_a_new_token_revokes_the_oldest_of_its_kind(settings, db, student):
    capped = settings.model_copy(update={"max_tokens_per_user": 3})
    with TestClient(create_app(capped)) as client:
        logins = [client.post("/api/auth/token", data={"username": "alice",
                                                       "password": student.password}).json()
                  for _ in range(5)]  # password-flow tokens are capped apart from personal ones
        bearer = {"Authorization": f"Bearer {logins[-1]['access_token']}"}
        made = [client.post("/api/auth/tokens", headers=bearer, data={"name": f"t{i}"}).json()
                for i in range(5)]
        names = [t["name"] for t in client.get("/api/auth/tokens", headers=bearer).json()]
        assert client.get("/api/auth/me", headers={
            "Authorization": f"Bearer {logins[0]['access_token']}"}).status_code == 401
    assert names == ["t4", "t3", "t2", "password-flow", "password-flow", "password-flow"]
    first = {"Authorization": f"Bearer {made[0]['access_token']}"}
    with TestClient(create_app(capped)) as client:
        assert client.get("/api/auth/me", headers=first).status_code == 401  # revoked


def test_past_the_cap_a_new_session_ends_the_oldest(settings, db, student):
    capped = settings.model_copy(update={"max_sessions_per_user": 2})
    browsers = [TestClient(create_app(capped)) for _ in range(4)]
    for browser in browsers:
        browser.__enter__()
        assert browser.post("/login", data={"username": "alice", "password": student.password},
                            follow_redirects=False).status_code == 303
    try:
        signed_in = [b.get("/api/auth/me").status_code for b in browsers]
        assert signed_in == [401, 401, 200, 200]
        assert count(db, LoginSession, student.id) == 2
    finally:
        for browser in browsers:
            browser.__exit__(None, None, None)


def test_my_account_lists_my_sessions_and_ends_another(client, db, settings, student):
    with TestClient(create_app(settings), headers={"User-Agent": "Mozilla/5.0 (X11; Linux "
                                                   "x86_64) Firefox/140.0"}) as laptop:
        laptop.post("/login", data={"username": "alice", "password": student.password})
        client.post("/login", data={"username": "alice", "password": student.password})
        page = client.get("/account", headers=HTML).text
        assert "Sessions" in page and "Firefox on Linux" in page and "(this browser)" in page
        assert "at most 20 of each kind" in page
        other = db.scalars(select(LoginSession.id).where(
            LoginSession.user_id == student.id).order_by(LoginSession.id)).first()
        done = client.post(f"/account/sessions/{other}/end",
                           headers={"X-CSRF-Token": csrf_of(page), **HTML})
        assert done.status_code == 200 and "Session ended." in done.text
        assert laptop.get("/api/auth/me").status_code == 401
        assert client.get("/api/auth/me").status_code == 200
        assert count(db, ApiToken, student.id, kind="personal") == 1
