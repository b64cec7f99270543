"""TA user management: new users and roster imports come with one-time sign-in links, TAs issue
reset links and tokens and sign people out; students cannot."""

from __future__ import annotations

from datetime import timedelta
from urllib.parse import parse_qs, urlsplit

from fastapi.testclient import TestClient
from sqlalchemy import select, update

from app.db.models import AuditLog, SignInLink, utcnow
from tests.app.utils.factories import Account

NEW_PASSWORD = "a brand new passphrase"


def token_of(link: str) -> str:
    return parse_qs(urlsplit(link).query)["token"][0]


def set_password(client: TestClient, link: str, password: str = NEW_PASSWORD):
    return client.post("/set-password", data={"token": token_of(link), "password": password,
                                              "confirm": password}, follow_redirects=False)


def test_a_new_user_gets_a_link_that_sets_a_password_once(client, db, ta: Account):
    made = client.post("/api/admin/users", headers=ta.headers,
                       data={"username": "carol", "display_name": "Carol", "email": "c@x.edu"})
    assert made.status_code == 201
    link = made.json()["link"]
    assert link["link"].startswith("http://testserver/set-password?token=")
    assert (link["username"], link["purpose"]) == ("carol", "invite")
    login = {"username": "carol", "password": NEW_PASSWORD}
    assert client.post("/api/auth/token", data=login).status_code == 401  # no password yet
    page = client.get(urlsplit(link["link"]).path + "?" + urlsplit(link["link"]).query)
    assert page.status_code == 200 and "carol" in page.text
    assert page.headers["referrer-policy"] == "strict-origin"  # the token never leaves
    done = set_password(client, link["link"])
    assert done.status_code == 303 and done.headers["location"] == "/submit"  # signed in
    assert "carol (student)" in client.get("/submit", headers={"Accept": "text/html"}).text
    assert client.post("/api/auth/token", data=login).status_code == 200
    again = set_password(client, link["link"], "someone elses passphrase")
    assert again.status_code == 410 and "already used" in again.text
    assert client.post("/api/auth/token", data=login).status_code == 200
    assert db.scalar(select(AuditLog.action).where(AuditLog.target == "carol")) == "create-user"


def test_a_too_short_password_keeps_the_link_usable(client, ta):
    link = client.post("/api/admin/users", headers=ta.headers,
                       data={"username": "dan"}).json()["link"]["link"]
    short = set_password(client, link, "short")
    assert short.status_code == 422 and "at least 10 characters" in short.text
    differ = client.post("/set-password", data={"token": token_of(link), "password": "x" * 12,
                                                "confirm": "y" * 12})
    assert differ.status_code == 422 and "differ" in differ.text
    assert set_password(client, link).status_code == 303


def test_an_expired_link_is_refused(client, db, ta):
    link = client.post("/api/admin/users", headers=ta.headers,
                       data={"username": "erin"}).json()["link"]["link"]
    db.execute(update(SignInLink).values(expires_at=utcnow() - timedelta(seconds=1)))
    db.commit()
    assert client.get(f"/set-password?token={token_of(link)}").status_code == 410
    assert set_password(client, link).status_code == 410


def test_a_reset_link_replaces_the_password_and_ends_sessions_and_tokens(client, ta, student):
    reset = client.post("/api/admin/users/alice/reset-link", headers=ta.headers).json()
    assert reset["purpose"] == "reset"
    assert client.get("/api/auth/me", headers=student.headers).status_code == 200  # not yet
    assert set_password(client, reset["link"]).status_code == 303
    assert client.get("/api/auth/me", headers=student.headers).status_code == 401
    assert client.post("/api/auth/token", data={"username": "alice", "password": NEW_PASSWORD}
                       ).is_success
    second = client.post("/api/admin/users/alice/reset-link", headers=ta.headers).json()
    third = client.post("/api/admin/users/alice/reset-link", headers=ta.headers).json()
    assert set_password(client, second["link"]).status_code == 410  # replaced by the third
    assert set_password(client, third["link"]).status_code == 303


def test_roster_import_gives_everyone_without_a_password_a_link(client, ta, student):
    roster = ("username,display name,email,role\ns1,One,s1@x.edu,student\n"
              "alice,Alice,alice@example.edu,student\n")
    body = client.post("/api/admin/users/import", headers=ta.headers,
                       files={"roster": ("roster.csv", roster.encode())}).json()
    assert (body["created"], body["updated"]) == (["s1"], ["alice"])
    assert [(k["username"], k["email"]) for k in body["links"]] == [("s1", "s1@x.edu")]
    assert set_password(client, body["links"][0]["link"]).status_code == 303


def test_tas_make_list_and_revoke_a_users_tokens_and_sign_them_out(client, ta, student):
    made = client.post("/api/admin/users/alice/tokens", headers=ta.headers,
                       data={"name": "lab machine"})
    assert made.status_code == 201
    theirs = {"Authorization": f"Bearer {made.json()['access_token']}"}
    assert client.get("/api/auth/me", headers=theirs).json()["username"] == "alice"
    listed = client.get("/api/admin/users/alice/tokens", headers=ta.headers).json()
    assert {t["name"] for t in listed} == {"test", "lab machine"}
    assert client.delete(f"/api/admin/users/alice/tokens/{made.json()['id']}",
                         headers=ta.headers).status_code == 204
    assert client.get("/api/auth/me", headers=theirs).status_code == 401
    assert client.post("/api/admin/users/alice/sign-out", headers=ta.headers).is_success
    assert client.get("/api/auth/me", headers=student.headers).status_code == 401
    rows = {u["username"]: u for u in client.get("/api/admin/users", headers=ta.headers).json()}
    assert (rows["alice"]["tokens"], rows["alice"]["has_password"]) == (0, True)


def test_user_management_is_for_tas_only(client, student):
    for method, path in [("get", "/api/admin/users"), ("post", "/api/admin/users"),
                         ("post", "/api/admin/users/alice/reset-link"),
                         ("post", "/api/admin/users/alice/tokens"),
                         ("post", "/api/admin/users/alice/sign-out")]:
        response = getattr(client, method)(path, headers=student.headers,
                                           **({"data": {"username": "x"}} if method == "post"
                                              else {}))
        assert response.status_code == 403, path


def test_an_existing_username_or_an_unknown_one_is_a_clear_4xx(client, ta, student):
    taken = client.post("/api/admin/users", headers=ta.headers, data={"username": "alice"})
    assert taken.status_code == 409 and taken.json()["field"] == "username"
    assert client.post("/api/admin/users/nobody/reset-link", headers=ta.headers
                       ).status_code == 404
