"""Same-origin checks for the forms a session's CSRF token cannot guard.

Logging in has no session yet, so another site's page could post the attacker's username and
password to /login and sign the victim's browser into the attacker's account (login CSRF); the
victim's next upload would then land there. Browsers name the page a POST comes from in `Origin`
(every current browser, for every cross-site POST) or at least `Referer`; a request with
neither is not a browser's form (curl, the CLI, tests) and cannot carry a victim's cookies.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from starlette.requests import Request

from app.core.config import Settings
from app.core.errors import UserError
from app.core.net import peer, trusted_proxy


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


def require_same_origin(request: Request, settings: Settings) -> None:
    """403 for a form another site's page sent (Origin "null" included)."""
    if not same_origin(request, settings):
        raise UserError("refused: this form was sent from another site's page; open "
                        "flashjudge's own page and try again", status=403, field="origin")
