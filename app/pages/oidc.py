"""Sign in through the university (OpenID Connect): the way out to the IdP and the way back.

Off (404) while FLASHJUDGE_OIDC_ISSUER is empty; passwords and sign-in links work either way.
A refusal (not on the roster, a stale or foreign state, a bad token) shows the login page again
with the reason, so the other ways in are one click away.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from app.accounts import oidc
from app.core.config import Settings
from app.core.errors import UserError, not_found
from app.db.session import session_factory
from app.pages.auth import front_door, safe_next, with_status
from app.pages.rendering import render
from app.web import oidc_client
from app.web.deps import SettingsDep, begin_browser_session

router = APIRouter(include_in_schema=False)
NEXT_KEY = "oidc_next"  # where to go once signed in, kept in the session across the IdP


@router.get("/login/oidc")
async def oidc_start(request: Request, settings: SettingsDep,
                     back: Annotated[str, Query(alias="next")] = "") -> Response:
    """Off to the IdP's login page."""
    if not settings.oidc_enabled:
        raise not_found("sign-in through the university")
    request.session[NEXT_KEY] = safe_next(back)
    try:
        return await oidc_client.start(request, settings)
    except UserError as exc:
        return refused(request, exc)


@router.get("/login/oidc/callback", name="oidc_callback")
async def oidc_callback(request: Request, settings: SettingsDep) -> Response:
    """Back from the IdP: the ID token verified, its person found on the roster, signed in."""
    if not settings.oidc_enabled:
        raise not_found("sign-in through the university")
    back = safe_next(request.session.pop(NEXT_KEY, ""))
    try:
        claims = await oidc_client.finish(request, settings)
        username = await run_in_threadpool(sign_in, request, settings, claims)
    except UserError as exc:
        return refused(request, exc)
    request.session["notice"] = f"Signed in through {settings.oidc_name} as {username}."
    return RedirectResponse(back, status_code=303)


def sign_in(request: Request, settings: Settings, claims: dict[str, Any]) -> str:
    """Signs the roster's user for the claims in with a fresh browser session (the session's
    old contents, Authlib's state included, are dropped); their username. A refusal's audit row
    is committed."""
    with session_factory(settings.db_url)() as db:
        try:
            user = oidc.roster_user(db, claims, settings)
        except UserError:
            db.commit()
            raise
        begin_browser_session(request, db, user, settings)
        return user.username


def refused(request: Request, exc: UserError) -> HTMLResponse:
    """The login page again, with the reason and the status that goes with it."""
    request.session.pop(NEXT_KEY, None)
    page = render(request, "login.html", None, reason=exc.detail, next="/submit",
                  **front_door(request.app.state.settings))
    return with_status(page, exc.status, {"Cache-Control": "no-store"})
