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
        self.settings = settings
        self.secure = _sessions(app, settings, https_only=True)
        self.plain = self.secure if settings.secure_cookies else _sessions(app, settings, False)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        chosen = self.secure if scope["type"] == "http" and is_https(scope, self.settings) \
            else self.plain
        await chosen(scope, receive, send)


def _sessions(app: ASGIApp, settings: Settings, https_only: bool) -> SessionMiddleware:
    """One SessionMiddleware; both share every setting but the Secure flag."""
    return SessionMiddleware(app, secret_key=settings.secret_key, session_cookie=COOKIE,
                             max_age=settings.session_max_age_s + 3600, same_site="lax",
                             https_only=https_only)
