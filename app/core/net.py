"""Who is on the other end: the client address and the scheme, believing forwarded headers only
from the reverse proxies the settings name (anyone can send X-Forwarded-For)."""

from __future__ import annotations

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.types import Scope

from app.core.config import Settings


def trusted_proxy(address: str, settings: Settings) -> bool:
    proxies = settings.trusted_proxy_set
    return "*" in proxies or address in proxies


def peer(scope: Scope) -> str:
    client = scope.get("client")
    return str(client[0]) if client else ""


def client_address(scope: Scope, settings: Settings) -> str:
    """The nearest address not a trusted proxy: walks X-Forwarded-For from the right."""
    address = peer(scope)
    if not trusted_proxy(address, settings):
        return address
    hops = [h.strip() for h in Headers(scope=scope).get("x-forwarded-for", "").split(",")]
    for hop in reversed([h for h in hops if h]):
        if not trusted_proxy(hop, settings):
            return hop[:100]
        address = hop
    return address[:100]


def is_https(scope: Scope, settings: Settings) -> bool:
    """Whether the browser reached us over HTTPS (directly, or through a trusted proxy)."""
    if scope.get("scheme") in ("https", "wss"):
        return True
    if not trusted_proxy(peer(scope), settings):
        return False
    proto = Headers(scope=scope).get("x-forwarded-proto", "")
    return proto.split(",")[0].strip().lower() == "https"


def base_url(request: Request, settings: Settings) -> str:
    """Where sign-in links point: the configured public URL, else the address the TA came in
    by (https when a trusted proxy says so)."""
    if settings.public_url:
        return settings.public_url
    url = request.base_url
    return str(url.replace(scheme="https") if is_https(request.scope, settings) else url)
