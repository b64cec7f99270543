"""One same-origin check in front of every request that changes something.

A session's CSRF token guards the forms of a signed-in browser, but not the ones that sign a
browser in: another site's page could post the attacker's password to /login, or the attacker's
own unused invite link to /set-password, and sign the victim's browser into the attacker's
account (login CSRF); the victim's next upload would then land there. So no route is trusted to
remember: `CrossSiteGuard` refuses every POST, PUT, PATCH and DELETE that another site's page
sent, before any route (or its body) is read. Browsers name the page a request comes from in
`Origin` (every current browser, for every cross-site POST) or at least `Referer`; a request
with neither is not a browser's form (curl, the CLI, tests) and cannot carry a victim's cookies.
"""

from __future__ import annotations

import html
import json
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from app.core.config import Settings
from app.core.errors import UserError
from app.core.net import peer, trusted_proxy

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def own_hosts(request: Request, settings: Settings) -> set[str]:
    """The host[:port] names this site answers as: the Host header, the public URL's, and a
    trusted proxy's X-Forwarded-Host."""
    hosts = {request.headers.get("host", "")}
    if settings.public_url:
        hosts.add(urlsplit(settings.public_url).netloc)
    if trusted_proxy(peer(request.scope), settings):
        hosts.add(request.headers.get("x-forwarded-host", "").split(",")[0].strip())
    return {h.lower() for h in hosts if h}


def same_origin(request: Request, settings: Settings) -> bool:
    """Whether a POST comes from one of our own pages (or from no browser page at all)."""
    source = request.headers.get("origin") or request.headers.get("referer")
    if source is None:
        return True
    return urlsplit(source).netloc.lower() in own_hosts(request, settings)


CROSS_SITE = UserError("refused: this form was sent from another site's page; open "
                       "flashjudge's own page and try again", status=403, field="origin")


class CrossSiteGuard:
    """The ASGI middleware: a request that changes something, sent by another site's page
    (Origin "null" included), gets a 403 before anything else reads it."""

    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        self.app = app
        self.settings = settings

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (scope["type"] == "http" and scope["method"] not in SAFE_METHODS
                and not same_origin(Request(scope), self.settings)):
            await refuse(scope, send)
            return
        await self.app(scope, receive, send)


async def refuse(scope: Scope, send: Send) -> None:
    """The 403: a short page for a browser's form, JSON for everything else."""
    wants_page = "text/html" in Headers(scope=scope).get("accept", "")
    if wants_page:
        body = (f"<!doctype html><title>Refused</title><p>{html.escape(CROSS_SITE.detail)}</p>"
                f'<p><a href="/">flashjudge</a></p>').encode()
    else:
        body = json.dumps({"detail": CROSS_SITE.detail, "field": CROSS_SITE.field}).encode()
    kind = b"text/html; charset=utf-8" if wants_page else b"application/json"
    await send({"type": "http.response.start", "status": 403, "headers": [
        (b"content-type", kind), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
