"""Logging in: OAuth2 password flow, personal tokens (expiry, listing, revocation), server-side
page sessions with CSRF and expiry, password changes, login throttling."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta

from fastapi.testclient import TestClient
from sqlalchemy import update

from app.core.config import Settings
from app.db.models import ApiToken, utcnow
from app.main import create_app


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


def test_session_posts_need_the_csrf_token(client, student):
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


def test_a_cookie_copied_before_logout_is_worthless_after_it(settings, client, student):
    csrf = login_page_session(client, "alice", student.password)
    copied = client.cookies.get("fj_session")
    client.post("/logout", headers={"X-CSRF-Token": csrf})
    with TestClient(create_app(settings), cookies={"fj_session": copied}) as thief:
        response = thief.get("/api/submissions/mine")
    assert response.status_code == 401 and "logged out" in response.json()["detail"]


def test_a_password_change_ends_every_session_and_token(settings, client, student):
    login_page_session(client, "alice", student.password)
    other_browser = client.cookies.get("fj_session")
    response = client.post("/api/auth/password", headers=student.headers,
                           data={"current_password": student.password,
                                 "new_password": "another long passphrase"})
    assert response.status_code == 200 and response.json()["tokens_revoked"]
    assert client.get("/api/auth/me", headers=student.headers).status_code == 401
    with TestClient(create_app(settings), cookies={"fj_session": other_browser}) as browser:
        assert browser.get("/api/auth/me").status_code == 401
    assert client.post("/api/auth/token", data={"username": "alice",
                                                "password": "another long passphrase"}).is_success


def test_a_new_password_needs_the_current_one_and_a_minimum_length(client, student):
    wrong = client.post("/api/auth/password", headers=student.headers,
                        data={"current_password": "nope", "new_password": "long enough pw"})
    assert wrong.status_code == 403 and wrong.json()["field"] == "current_password"
    short = client.post("/api/auth/password", headers=student.headers,
                        data={"current_password": student.password, "new_password": "short"})
    assert short.status_code == 422 and "at least 10 characters" in short.json()["detail"]
    assert client.get("/api/auth/me", headers=student.headers).status_code == 200


def test_personal_tokens_expire_are_listed_and_revocable_by_their_owner(client, db, student,
                                                                        other_student):
    made = client.post("/api/auth/tokens", headers=student.headers,
                       data={"name": "laptop", "expires_in_days": "30"}).json()
    laptop = {"Authorization": f"Bearer {made['access_token']}"}
    assert client.get("/api/auth/me", headers=laptop).status_code == 200
    listed = {t["name"]: t for t in client.get("/api/auth/tokens", headers=student.headers).json()}
    assert set(listed["laptop"]) == {"id", "name", "kind", "created_at", "last_used_at",
                                     "expires_at"}
    assert listed["laptop"]["last_used_at"] is not None  # it was just used
    days = (datetime.fromisoformat(listed["laptop"]["expires_at"])
            - datetime.fromisoformat(listed["laptop"]["created_at"])).days
    assert days == 30
    assert "access_token" not in listed["laptop"]
    theirs = client.delete(f"/api/auth/tokens/{made['id']}", headers=other_student.headers)
    assert theirs.status_code == 404  # someone else's token is as missing as a wrong id
    assert client.delete(f"/api/auth/tokens/{made['id']}", headers=student.headers
                         ).status_code == 204
    assert client.get("/api/auth/me", headers=laptop).status_code == 401


def test_an_expired_token_is_refused(client, db, student):
    token = client.post("/api/auth/tokens", headers=student.headers).json()
    db.execute(update(ApiToken).where(ApiToken.id == token["id"])
               .values(expires_at=utcnow() - timedelta(seconds=1)))
    db.commit()
    response = client.get("/api/auth/me",
                          headers={"Authorization": f"Bearer {token['access_token']}"})
    assert response.status_code == 401 and "expired" in response.json()["detail"]
    too_long = client.post("/api/auth/tokens", headers=student.headers,
                           data={"expires_in_days": "5000"})
    assert too_long.status_code == 422 and too_long.json()["field"] == "expires_in_days"


def test_wrong_passwords_are_throttled_per_username_and_address_with_retry_after(settings,
                                                                                student):
    slow = settings.model_copy(update={"login_backoff_max_s": 3600})  # waits of minutes
    with TestClient(create_app(slow)) as client:
        for _ in range(5):
            assert client.post("/api/auth/token", data={"username": "alice", "password": "x"}
                               ).status_code == 401
        right = client.post("/api/auth/token", data={"username": "alice",
                                                     "password": student.password})
        assert right.status_code == 429 and "too many failed logins" in right.json()["detail"]
        assert 1 <= int(right.headers["Retry-After"]) <= 3600 // 16  # the first wait: cap/16
        page = client.post("/login", data={"username": "alice", "password": student.password})
        assert page.status_code == 429 and "too many failed logins" in page.text


def test_a_success_clears_the_usernames_failures(client, student):
    for _ in range(4):
        client.post("/api/auth/token", data={"username": "alice", "password": "x"})
    assert client.post("/api/auth/token", data={"username": "alice",
                                                "password": student.password}).is_success
    for _ in range(5):
        assert client.post("/api/auth/token", data={"username": "alice", "password": "x"}
                           ).status_code == 401


def test_one_address_is_throttled_across_usernames(settings, student):
    strict = settings.model_copy(update={"login_max_failures_per_address": 3,
                                         "login_backoff_max_s": 3600})
    with TestClient(create_app(strict)) as client:
        codes = [client.post("/api/auth/token", data={"username": f"u{i}", "password": "x"}
                             ).status_code for i in range(5)]
    assert codes == [401, 401, 401, 429, 429]


def test_concurrent_wrong_passwords_get_at_most_the_limit_checked(settings, student):
    """Counters live in the database: 20 requests at once (threads, separate connections, as
    several API processes would be) check at most 5 passwords; the rest are 429."""
    barrier = threading.Barrier(20)

    def attempt(_: int) -> int:
        with TestClient(create_app(settings)) as client:
            barrier.wait()
            return client.post("/api/auth/token",
                               data={"username": "alice", "password": "x"}).status_code

    with ThreadPoolExecutor(20) as pool:
        codes = list(pool.map(attempt, range(20)))
    assert codes.count(401) <= 5 and codes.count(401) + codes.count(429) == 20
