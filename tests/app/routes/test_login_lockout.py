"""No student can lock another out of password login (issue 20 item 1): failures count per
username and address, per address, and per username across addresses, each past its limit only
slowing (a wait that doubles up to a cap), never a 15-minute lockout; a browser that signed in as
the user before counts only its own failures; the guesses on one account stay bounded."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from app.core.config import Settings
from app.main import create_app

CAP_S = 3600  # a wait of minutes past each limit: no test outruns it on a slow machine


@pytest.fixture
def guarded(settings: Settings) -> Iterator[TestClient]:
    """An app behind a trusted proxy, so each request names its own client address."""
    strict = settings.model_copy(update={"trusted_proxies": "*", "login_backoff_max_s": CAP_S})
    with TestClient(create_app(strict)) as client:
        yield client


def token_login(client: TestClient, password: str, address: str, user: str = "alice") -> int:
    return client.post("/api/auth/token", data={"username": user, "password": password},
                       headers={"X-Forwarded-For": address}).status_code


def page_login(client: TestClient, password: str, address: str):  # noqa: ANN201
    return client.post("/login", data={"username": "alice", "password": password},
                       headers={"X-Forwarded-For": address}, follow_redirects=False)


def test_an_attackers_wrong_passwords_do_not_block_the_owner_elsewhere(guarded, student):
    codes = [token_login(guarded, "guess", "10.6.6.6") for _ in range(7)]
    assert codes == [401] * 5 + [429] * 2  # the attacker's own address slows down
    assert token_login(guarded, student.password, "10.1.1.1") == 200  # the owner gets in


def test_a_spray_from_many_addresses_is_bounded_and_only_slows_the_owner(guarded, settings,
                                                                        student):
    owner = guarded.post("/api/auth/token", data={"username": "alice",
                                                  "password": student.password}).json()
    codes = [token_login(guarded, f"guess{i}", f"10.9.{i}.1") for i in range(40)]
    assert codes.count(401) == settings.login_user_failures  # passwords actually checked
    refused = guarded.post("/api/auth/token", data={"username": "alice", "password": "x"},
                           headers={"X-Forwarded-For": "10.9.99.1"})
    assert refused.status_code == 429 and "sign-in link" in refused.json()["detail"]
    assert int(refused.headers["Retry-After"]) <= CAP_S  # a wait, never the whole window
    bearer = {"Authorization": f"Bearer {owner['access_token']}"}
    assert guarded.get("/api/auth/me", headers=bearer).status_code == 200  # still signed in


def test_the_owners_own_browser_is_not_slowed_by_a_spray(guarded, settings, student):
    assert page_login(guarded, student.password, "10.1.1.1").status_code == 303
    assert "fj_device" in guarded.cookies
    for i in range(settings.login_user_failures + 5):
        token_login(guarded, f"guess{i}", f"10.9.{i}.1")
    assert token_login(guarded, student.password, "10.1.1.2") == 429  # a stranger waits
    assert page_login(guarded, student.password, "10.1.1.2").status_code == 303  # the owner
    codes = [page_login(guarded, "typo", "10.1.1.2").status_code
             for _ in range(settings.login_max_failures + 1)]
    assert codes == [200] * settings.login_max_failures + [429]  # its own failures still count


def test_a_forged_known_device_cookie_counts_for_nothing(guarded, settings, student):
    for i in range(settings.login_user_failures + 5):
        token_login(guarded, f"guess{i}", f"10.9.{i}.1")
    guarded.cookies.set("fj_device", "eyJkIjoiYSIsInUiOlsiYWxpY2UiXX0.forged.sig")
    assert page_login(guarded, student.password, "10.1.1.3").status_code == 429
