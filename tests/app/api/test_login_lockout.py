"""No student can lock another out of password login: failures count per
username and address, per address, and per username across addresses, each past its limit only
slowing (a wait that doubles up to a cap), never a 15-minute lockout; a browser that signed in as
the user before counts only its own failures; the guesses on one account stay bounded."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

from app.accounts import signin_links, users
from app.core.config import Settings
from app.main import create_app
from flashjudge_cli.commands import submit as submit_command

CAP_S = 3600  # a wait of minutes past each limit: no test outruns it on a slow machine


@pytest.fixture
def guarded(settings: Settings) -> Iterator[TestClient]:
    """An app behind a trusted proxy, so each request names its own client address."""
    strict = settings.model_copy(update={"trusted_proxies": "*", "login_backoff_max_s": CAP_S})
    with TestClient(create_app(strict)) as client:
        yield client


def token_login(client: TestClient, password: str, address: str, user: str = "alice") -> int:
    """A login from a client with no cookies of its own (a stranger, or the attacker)."""
    stranger = TestClient(client.app)
    return stranger.post("/api/auth/token", data={"username": user, "password": password},
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
    refused = TestClient(guarded.app).post("/api/auth/token",
                                           data={"username": "alice", "password": "x"},
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


def test_the_owners_cli_keeps_its_device_and_is_not_slowed_by_a_spray(guarded, settings,
                                                                      student, tmp_path,
                                                                      monkeypatch):
    """`flashjudge submit` keeps the known-device cookie its first login got; its next login
    from the same machine passes a spray that makes strangers wait."""
    monkeypatch.setenv("FLASHJUDGE_DEVICE_FILE", str(tmp_path / "device"))
    answers = iter(["alice"])
    monkeypatch.setattr("builtins.input", lambda _prompt: next(answers))
    monkeypatch.setattr("getpass.getpass", lambda _prompt: student.password)
    with httpx.Client(transport=guarded_transport(guarded), base_url="http://testserver",
                      headers={"X-Forwarded-For": "10.1.1.1"}) as cli:
        assert submit_command.login(cli)
    assert (tmp_path / "device").stat().st_mode & 0o077 == 0  # its owner's only
    for i in range(settings.login_user_failures + 5):
        token_login(guarded, f"guess{i}", f"10.9.{i}.1")
    assert token_login(guarded, student.password, "10.1.1.1") == 429  # no device: a stranger
    answers = iter(["alice"])
    with httpx.Client(transport=guarded_transport(guarded), base_url="http://testserver",
                      headers={"X-Forwarded-For": "10.1.1.1"}) as cli:
        assert submit_command.login(cli)  # the owner's machine


def test_a_guess_at_the_current_password_is_throttled_like_a_login(guarded, settings, student):
    """A borrowed session (or token) cannot try current passwords faster than the login page."""
    codes = [guarded.post("/api/auth/password", headers={**student.headers,
                                                         "X-Forwarded-For": "10.6.6.6"},
                          data={"current_password": f"guess{i}",
                                "new_password": "a-new-long-password"}).status_code
             for i in range(settings.login_max_failures + 2)]
    assert codes == [403] * settings.login_max_failures + [429] * 2
    assert token_login(guarded, student.password, "10.1.1.1") == 200  # the password is unchanged


def guarded_transport(client: TestClient) -> httpx.BaseTransport:
    """The test app as an httpx transport, so the CLI's own client talks to it."""
    return client._transport  # noqa: SLF001


def test_guessing_at_sign_in_links_slows_down_like_passwords(settings, db, student):
    """A link's secret is presented like a password: wrong ones from one address wait; a real
    link from elsewhere still works."""
    strict = settings.model_copy(update={"trusted_proxies": "*", "login_backoff_max_s": CAP_S,
                                         "login_max_failures_per_address": 3})
    form = {"password": "a-new-long-password", "confirm": "a-new-long-password"}
    with TestClient(create_app(strict)) as client:
        codes = [client.post("/set-password", data={**form, "token": f"guess{i}"},
                             headers={"X-Forwarded-For": "10.6.6.6"}).status_code
                 for i in range(5)]
        assert codes == [410] * 3 + [429] * 2
        user = users.get_by_username(db, student.username)
        assert user is not None
        link = signin_links.create(db, user, signin_links.RESET, 3600)
        db.commit()
        done = client.post("/set-password", data={**form, "token": link.token},
                           headers={"X-Forwarded-For": "10.1.1.1"}, follow_redirects=False)
        assert done.status_code == 303


def test_passwords_and_link_secrets_are_checked_in_one_place():
    """Every way a password (or a link's secret) is presented goes through the throttled door
    in app/accounts/users.py: no other module checks one."""
    app_dir = Path(__file__).resolve().parents[3] / "app"
    check = re.compile(r"(?<!def )\b(verify_password|signin_links\.redeem|users\.authenticate)\(")
    callers = {str(p.relative_to(app_dir)) for p in app_dir.rglob("*.py")
               if check.search(p.read_text())}
    assert callers == {"accounts/users.py"}
