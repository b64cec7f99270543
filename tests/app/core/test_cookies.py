"""The session cookie is `Secure` behind HTTPS: directly, through a trusted proxy's
X-Forwarded-Proto, or always when the settings say so; never on the word of an unknown client."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from app.main import create_app

FORWARDED_HTTPS = {"X-Forwarded-Proto": "https"}


def login_cookie(client: TestClient, account, headers: dict[str, str] | None = None) -> str:
    response = client.post("/login", data={"username": account.username,
                                           "password": account.password},
                           headers=headers or {}, follow_redirects=False)
    assert response.status_code == 303
    return response.headers["set-cookie"]


@pytest.mark.parametrize("base_url, overrides, headers, secure", [
    ("http://testserver", {}, {}, False),
    ("https://testserver", {}, {}, True),
    ("http://testserver", {"trusted_proxies": "testclient"}, FORWARDED_HTTPS, True),
    ("http://testserver", {}, FORWARDED_HTTPS, False),  # anyone can send the header
    ("http://testserver", {"secure_cookies": True}, {}, True),
])
def test_the_session_cookie_is_secure_exactly_behind_https(settings, student, base_url,
                                                          overrides, headers, secure):
    with TestClient(create_app(settings.model_copy(update=overrides)),
                    base_url=base_url) as client:
        cookie = login_cookie(client, student, headers).lower()
    assert "httponly" in cookie and "samesite=lax" in cookie
    assert ("; secure" in cookie) is secure


def test_a_trusted_proxy_passes_the_client_address_to_the_throttle(settings, student):
    """Failures count against the address the proxy names, not the proxy's own."""
    strict = settings.model_copy(update={"trusted_proxies": "testclient",
                                         "login_max_failures_per_address": 2,
                                         "login_backoff_max_s": 3600})
    with TestClient(create_app(strict)) as client:
        def attempt(address: str) -> int:
            return client.post("/api/auth/token", data={"username": "nobody", "password": "x"},
                               headers={"X-Forwarded-For": address}).status_code

        assert [attempt("10.0.0.1") for _ in range(3)] == [401, 401, 429]
        assert attempt("10.0.0.2") == 401  # another student behind the same proxy
