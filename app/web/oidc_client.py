"""The relying party of "Sign in with the university": Authlib's Starlette client, one per app.

Authlib does the protocol: the discovery document read from the issuer URL, the authorization
code flow with PKCE (S256), the state kept in this browser's session and checked on the way
back, the nonce checked in the ID token, whose signature is verified against the IdP's JWKS and
whose issuer, audience (our client id) and expiry are checked. What is left here: the issuer the
document names must be the one configured (OpenID Connect Discovery 1.0, section 4.3), a token
without a verified ID token is refused, and every failure becomes a sentence a person can act on.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

import httpx
from authlib.common.errors import AuthlibBaseError
from authlib.integrations.base_client.errors import MismatchingStateError
from authlib.integrations.starlette_client import OAuth
from joserfc.errors import JoseError
from starlette.requests import Request
from starlette.responses import Response

from app.core.config import Settings
from app.core.errors import UserError

NAME = "university"  # Authlib's name for the registration (its session keys carry it)
CALLBACK_PATH = "/login/oidc/callback"
TIMEOUT_S = 10.0  # discovery, JWKS and the token request each
_LOCK = threading.Lock()


def discovery_url(issuer: str) -> str:
    return f"{issuer.rstrip('/')}/.well-known/openid-configuration"


def redirect_uri(request: Request, settings: Settings) -> str:
    """Where the IdP sends the browser back: under public_url when set (what the IdP
    registered), else under the address this browser came in by."""
    if settings.public_url:
        return settings.public_url.rstrip("/") + CALLBACK_PATH
    return str(request.url_for("oidc_callback"))


def client_for(request: Request) -> Any:
    """The app's registered client, made on first use (tests build one app each)."""
    state, settings = request.app.state, request.app.state.settings
    with _LOCK:
        if getattr(state, "oidc", None) is None:
            oauth = OAuth()
            oauth.register(NAME, client_id=settings.oidc_client_id,
                           client_secret=settings.oidc_client_secret,
                           server_metadata_url=discovery_url(settings.oidc_issuer),
                           client_kwargs={"scope": settings.oidc_scopes,
                                          "code_challenge_method": "S256",
                                          "timeout": TIMEOUT_S})
            state.oidc = oauth.create_client(NAME)
    return state.oidc


async def start(request: Request, settings: Settings) -> Response:
    """The redirect to the IdP's authorization endpoint (state, nonce and PKCE verifier kept in
    this browser's session cookie)."""
    client = client_for(request)
    with failures(settings):
        await checked_metadata(client, settings)
        response: Response = await client.authorize_redirect(request,
                                                             redirect_uri(request, settings))
    return response


async def finish(request: Request, settings: Settings) -> dict[str, Any]:
    """The verified claims of the browser coming back from the IdP: the ID token's, completed
    from the userinfo endpoint when the token lacks the claim the roster is matched by (IdPs
    that follow the spec to the letter put e-mail and username only there)."""
    client = client_for(request)
    with failures(settings):
        metadata = await checked_metadata(client, settings)
        came_from = request.query_params.get("iss")  # RFC 9207: which IdP answered
        if came_from is not None and came_from.rstrip("/") != settings.oidc_issuer.rstrip("/"):
            raise UserError("this answer came from another sign-in service than the "
                            "university's; start again from the login page", status=400)
        token = await client.authorize_access_token(request)
        claims = token.get("userinfo")
        if not claims:  # Authlib verifies an ID token only when one came and a nonce was kept
            raise UserError("the university's sign-in sent no ID token; ask your TA",
                            status=502)
        if settings.oidc_match_claim not in claims and metadata.get("userinfo_endpoint"):
            return completed(dict(claims), dict(await client.userinfo(token=token)))
    return dict(claims)


def completed(claims: dict[str, Any], userinfo: dict[str, Any]) -> dict[str, Any]:
    """The ID token's claims with what userinfo adds; its answer counts only for the same
    person (OpenID Connect Core 1.0, section 5.3.2: `sub` must match)."""
    if userinfo.get("sub") != claims.get("sub"):
        raise UserError("the university's sign-in answered for another person than its ID "
                        "token names; ask your TA", status=502)
    return {**userinfo, **claims}


async def checked_metadata(client: Any, settings: Settings) -> dict[str, Any]:
    """The discovery document, refused when it names another issuer than the configured one
    (tokens would then be checked against the wrong issuer)."""
    metadata: dict[str, Any] = await client.load_server_metadata()
    named = str(metadata.get("issuer", ""))
    if named.rstrip("/") != settings.oidc_issuer.rstrip("/"):
        client.server_metadata = {}  # read it again next time: the IdP may be fixed
        raise UserError(f"the university's sign-in is misconfigured: its discovery document "
                        f"names the issuer {named[:200]!r}, not FLASHJUDGE_OIDC_ISSUER; tell "
                        f"your TA", status=502)
    return metadata


@contextlib.contextmanager
def failures(settings: Settings) -> Iterator[None]:
    """Turns what can go wrong in the protocol into UserErrors: a stale or foreign state, a bad
    token, an IdP that refuses or does not answer."""
    try:
        yield
    except MismatchingStateError as exc:
        raise UserError("this sign-in was started in another browser, or was already used; "
                        "start again from the login page", status=400, field="state") from exc
    except httpx.HTTPError as exc:
        raise UserError(f"the university's sign-in ({settings.oidc_issuer}) does not answer; "
                        "try again later, or log in with your password", status=502) from exc
    except (AuthlibBaseError, JoseError) as exc:
        raise UserError(f"the sign-in through the university failed ({describe(exc)}); start "
                        "again from the login page", status=400) from exc


def describe(exc: BaseException) -> str:
    """A short reason: Authlib's error code and description, or joserfc's message."""
    error = getattr(exc, "error", "") or type(exc).__name__
    detail = getattr(exc, "description", "") or str(exc)
    return f"{error}: {detail}"[:300] if detail and detail != error else str(error)[:300]
