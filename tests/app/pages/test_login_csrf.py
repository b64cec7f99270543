"""Login CSRF: another site's page can neither sign a browser into the
attacker's account (POST /login) nor sign a student out (POST /logout without the session's
token); the site's own forms still work."""

from __future__ import annotations

from fastapi.testclient import TestClient

from tests.app.pages.test_account_pages import csrf_of
from tests.app.pages.test_pages import HTML

EVIL = "https://evil.example"


def post_login(client: TestClient, account, **headers: str):  # noqa: ANN201
    return client.post("/login", data={"username": account.username,
                                        "password": account.password},
                       headers={**HTML, **headers}, follow_redirects=False)


def test_a_login_form_from_another_site_is_refused(client, student):
    for headers in ({"Origin": EVIL}, {"Referer": f"{EVIL}/trap.html"}, {"Origin": "null"}):
        refused = post_login(client, student, **headers)
        assert refused.status_code == 403 and "another site" in refused.text
        assert "fj_session" not in client.cookies
        assert client.get("/api/auth/me").status_code == 401


def test_the_sites_own_login_form_signs_in(client, student):
    done = post_login(client, student, Origin="http://testserver",
                      Referer="http://testserver/login?next=/submit")
    assert done.status_code == 303 and client.get("/api/auth/me").status_code == 200


def test_logout_needs_the_sessions_token(client, student):
    assert post_login(client, student).status_code == 303
    page = client.get("/submit", headers=HTML).text
    refused = client.post("/logout", headers=HTML, follow_redirects=False)
    assert refused.status_code == 403 and client.get("/api/auth/me").status_code == 200
    forged = client.post("/logout", data={"csrf_token": "guessed"}, headers=HTML,
                         follow_redirects=False)
    assert forged.status_code == 403 and client.get("/api/auth/me").status_code == 200
    token = page.split('name="csrf_token" value="', 1)[1].split('"', 1)[0]
    assert token == csrf_of(page)  # the Log out button's form carries it
    cross = client.post("/logout", data={"csrf_token": token},
                        headers={**HTML, "Origin": EVIL}, follow_redirects=False)
    assert cross.status_code == 403
    done = client.post("/logout", data={"csrf_token": token}, headers=HTML,
                       follow_redirects=False)
    assert done.status_code == 303 and done.headers["location"] == "/login"
    assert client.get("/api/auth/me").status_code == 401
