"""Every answer carries the security headers: each GET route of the app walked (pages, API, a
live stream, a CSV, a static file, a 404, an error), and the refusals the middlewares send by
themselves; a route that sets its own Referrer-Policy keeps it."""

from __future__ import annotations

import httpx
import pytest

from app.core.config import Settings
from app.main import create_app
from app.web.security_headers import HEADERS
from tests.app.utils import routes
from tests.app.utils.factories import Account
from tests.app.utils.live_server import live_server

EXTRA = ["/static/app.js", "/static/style.css", "/no-such-page", "/api/no-such-route",
         "/set-password?token=unknown"]


def check(response: httpx.Response, what: str) -> None:
    for name, value in HEADERS.items():
        if name == "Referrer-Policy" and response.url.path == "/set-password":
            assert response.headers[name] == "strict-origin", what
            continue
        assert response.headers.get(name) == value, (what, name, response.status_code)


@pytest.mark.slow
def test_every_get_route_answers_with_the_headers(settings: Settings, ta: Account,
                                                  student: Account):
    """Served by uvicorn, so a stream is judged by its headers without being read to its end."""
    paths = [path for _, path in routes.walk(create_app(settings), {"GET"})] + EXTRA
    assert len(paths) > 60
    with live_server(settings) as url, httpx.Client(base_url=url, timeout=30) as client:
        for who in (None, ta, student):
            headers = who.headers if who else {}
            for path in paths:
                with client.stream("GET", path, headers=headers) as response:
                    check(response, f"GET {path} as {who.username if who else 'nobody'}")


def test_the_middlewares_own_refusals_carry_them(client, student: Account):
    cross_site = client.post("/login", data={"username": "a", "password": "b"},
                             headers={"Origin": "https://evil.example"})
    assert cross_site.status_code == 403
    check(cross_site, "the cross-site refusal")
    too_big = client.post("/api/submissions", headers={**student.headers,
                                                       "Content-Length": str(1 << 40)})
    assert too_big.status_code == 413
    check(too_big, "the body guard's refusal")


def test_the_policy_allows_only_our_own_scripts(client):
    policy = client.get("/login").headers["content-security-policy"]
    assert "script-src 'self';" in policy and "unsafe-eval" not in policy
    assert "frame-ancestors 'none'" in policy
