"""The session cookie, marked `Secure` whenever the browser came in over HTTPS (directly or via a
trusted proxy's X-Forwarded-Proto) or the settings force it; HttpOnly and SameSite=Lax always."""

from __future__ import annotations

from starlette.middleware.sessions import SessionMiddleware
from starlette.types import ASGIApp, Receive, Scope, Send

from app.core.config import Settings
from app.core.net import is_https

COOKIE = "fj_session"


class SessionCookies:
    """Starlette's signed-cookie sessions, the Secure flag chosen per request."""

    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        common = {"secret_key": settings.secret_key, "same_site": "lax",
                  "max_age": settings.session_max_age_s + 3600, "session_cookie": COOKIE}
        self.settings = settings
        self.secure = SessionMiddleware(app, https_only=True, **common)
        self.plain = self.secure if settings.secure_cookies else SessionMiddleware(app, **common)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        chosen = self.secure if scope["type"] == "http" and is_https(scope, self.settings) \
            else self.plain
        await chosen(scope, receive, send)
