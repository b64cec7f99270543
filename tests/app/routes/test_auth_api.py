"""Logging in: OAuth2 password flow, personal tokens, page sessions with CSRF and expiry."""

from __future__ import annotations

from fastapi.testclient import TestClient

from app.core.config import Settings
from app.main import create_app
from tests.app.utils.factories import live_worker


def test_password_flow_returns_a_bearer_token_that_works(client, student):
    response = client.post("/api/auth/token",
                           data={"username": "alice", "password": student.password})
    assert response.status_code == 200
    body = response.json()
    assert body["token_type"] == "bearer"
    me = client.get("/api/auth/me", headers={"Authorization": f"Bearer {body['access_token']}"})
    assert me.json() == {"username": "alice", "display_name": "Alice", "role": "student"}


def test_a_wrong_password_or_token_is_401(client, student):
    response = client.post("/api/auth/token", data={"username": "alice", "password": "nope"})
    assert response.status_code == 401 and response.json()["detail"] == \
        "wrong username or password"
    response = client.get("/api/auth/me", headers={"Authorization": "Bearer fj_forged"})
    assert response.status_code == 401


def test_personal_tokens_are_made_by_a_logged_in_user(client, student):
    response = client.post("/api/auth/tokens", headers=student.headers, data={"name": "laptop"})
    assert response.status_code == 201
    token = response.json()["access_token"]
    assert client.get("/api/auth/me", headers={"Authorization": f"Bearer {token}"}).status_code \
        == 200


def login_page_session(client: TestClient, username: str, password: str) -> str:
    """Log in through the page form; returns the CSRF token the pages would carry."""
    response = client.post("/login", data={"username": username, "password": password},
                           follow_redirects=False)
    assert response.status_code == 303
    page = client.get("/submit", headers={"Accept": "text/html"})
    marker = 'name="csrf-token" content="'
    return page.text.split(marker, 1)[1].split('"', 1)[0]


def test_session_posts_need_the_csrf_token(client, db, student):
    live_worker(db)  # a c-program upload needs a live worker that judges it
    csrf = login_page_session(client, "alice", student.password)
    files = [("files", ("hw4.c", b"int main(void){return 0;}\n"))]
    refused = client.post("/api/submissions", data={"language": "c-program"}, files=files)
    assert refused.status_code == 403 and refused.json()["field"] == "csrf_token"
    accepted = client.post("/api/submissions", data={"language": "c-program"}, files=files,
                           headers={"X-CSRF-Token": csrf})
    assert accepted.status_code == 202


def test_an_expired_session_is_401_and_pages_go_to_login(settings: Settings, student):
    expiring = settings.model_copy(update={"session_max_age_s": 0})
    with TestClient(create_app(expiring)) as client:
        client.post("/login", data={"username": "alice", "password": student.password},
                    follow_redirects=False)
        response = client.get("/api/submissions/mine")
        assert response.status_code == 401
        assert response.json()["detail"] == "your session expired; log in again"
        client.post("/login", data={"username": "alice", "password": student.password},
                    follow_redirects=False)
        page = client.get("/submissions", headers={"Accept": "text/html"},
                          follow_redirects=False)
        assert page.status_code == 303 and page.headers["location"].startswith("/login")
