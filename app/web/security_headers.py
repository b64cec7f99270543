"""The headers every response carries, whatever route (or error, or static file) made it.

- Content-Security-Policy: scripts only from our own /static files (no inline script and no
  eval: the pages' htmx runs with allowEval off, and app.js handles what hx-on attributes did),
  styles from our files plus inline style attributes (the scoreboard colours its cells with
  them), images from us or data: URLs, requests back to us only (htmx, fetch, EventSource), no
  plugins, no <base>, forms posted only to us, and no other site may frame a page
  (frame-ancestors: clickjacking);
- X-Content-Type-Options: nosniff, so a browser never runs an upload or a CSV as a script;
- Referrer-Policy: same-origin, so no page's URL (a username, an assignment) reaches another
  site; a route that sets its own (the sign-in link's page) keeps it;
- X-Frame-Options: DENY, frame-ancestors for browsers that predate it.
"""

from __future__ import annotations

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

POLICY = "; ".join((
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
))
HEADERS = {
    "Content-Security-Policy": POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",
}


class SecurityHeaders:
    """The ASGI middleware: HEADERS added to every HTTP response that lacks them."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in HEADERS.items():
                    headers.setdefault(name, value)
            await send(message)

        await self.app(scope, receive, with_headers)
