"""Account pages: log in (throttled), log out, set a password from a one-time link, and my
account (change the password, my API tokens). Server-side sessions: app/accounts/sessions.py;
the same for scripts and the CLI: app/api/auth.py; sign-in through the university: oidc.py."""

from __future__ import annotations

from html import escape
from typing import Annotated
from urllib.parse import urlsplit

from fastapi import APIRouter, Form, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from app.accounts import sessions, signin_links, tokens, users
from app.core import known_device
from app.core.config import Settings
from app.core.errors import UserError, not_found
from app.core.security import MIN_PASSWORD_LENGTH, check_new_password, csrf_matches
from app.pages.rendering import PageUser, render
from app.scoreboard.board_names import set_board_name
from app.web.deps import (
    SESSION_KEY,
    ClientAddress,
    SessionDep,
    SettingsDep,
    begin_browser_session,
    end_browser_session,
)

router = APIRouter(include_in_schema=False)
# the link's token is in the URL: no request from this page names more than our origin (not
# "no-referrer": under it a browser sends the form's Origin as "null", which the same-origin
# guard must refuse)
NO_REFERRER = {"Referrer-Policy": "strict-origin", "Cache-Control": "no-store"}


def with_status(response: HTMLResponse, status: int, headers: dict[str, str]) -> HTMLResponse:
    response.status_code = status
    response.headers.update(headers)
    return response


def front_door(settings: Settings) -> dict[str, object]:
    """What the login page offers besides the password: sign-in through the university."""
    return {"oidc": settings.oidc_enabled, "oidc_name": settings.oidc_name}


def safe_next(target: str | None) -> str:
    """Where to go after logging in: a local path (the page the user was sent away from), never
    another site ("//evil", "https://...", "/\\evil"), and /submit by default."""
    target = (target or "").strip()
    parts = urlsplit(target)
    if (not target.startswith("/") or target.startswith("//") or "\\" in target
            or parts.scheme or parts.netloc or any(ord(c) < 32 for c in target)
            or parts.path in ("/login", "/logout")):
        return "/submit"
    return target


@router.get("/login")
def login_page(request: Request, settings: SettingsDep, reason: str = "", notice: str = "",
               back: Annotated[str, Query(alias="next")] = "") -> HTMLResponse:
    return render(request, "login.html", None, reason=reason, notice=notice,
                  next=safe_next(back), **front_door(settings))


@router.post("/login")
def login(request: Request, db: SessionDep, settings: SettingsDep, address: ClientAddress,
          username: Annotated[str, Form()], password: Annotated[str, Form()],
          back: Annotated[str, Form(alias="next")] = "") -> Response:
    """Log in, then back to the page that sent the user here (`next`: a local path only).
    Another site's page cannot send it (app/web/same_origin.py: login CSRF)."""
    device = known_device.device_for(request, username, settings)
    try:
        user = users.log_in(db, username, password, address, settings, device)
    except UserError as exc:  # a wrong password shows the form again; throttled is a 429
        page = render(request, "login.html", None, reason=exc.detail, next=safe_next(back),
                      username=username, **front_door(settings))
        return with_status(page, 429 if exc.status == 429 else 200, exc.headers)
    begin_browser_session(request, db, user, settings)
    response = RedirectResponse(safe_next(back), status_code=303)
    known_device.remember(request, response, user.username, settings)
    return response


@router.post("/logout")
def logout(request: Request, db: SessionDep, csrf_token: Annotated[str, Form()] = "") -> Response:
    """Log out; the form carries the session's CSRF token (or the X-CSRF-Token header), so
    another site cannot sign a student out mid-deadline."""
    given = csrf_token or request.headers.get("x-csrf-token")
    if request.session.get(SESSION_KEY) and not csrf_matches(request.session.get("csrf"), given):
        raise UserError("missing or wrong CSRF token; reload the page", status=403,
                        field="csrf_token")
    end_browser_session(request, db)
    return RedirectResponse("/login", status_code=303)


@router.get("/set-password")
def set_password_page(request: Request, db: SessionDep, token: str = "") -> HTMLResponse:
    """The form a sign-in link opens; looking does not use the link up (link scanners look)."""
    try:
        link = signin_links.peek(db, token)
    except UserError as exc:
        page = render(request, "set_password.html", None, token="", error=exc.detail)
        return with_status(page, exc.status, NO_REFERRER)
    page = render(request, "set_password.html", None, token=token, username=link.user.username,
                  purpose=link.purpose, min_length=MIN_PASSWORD_LENGTH)
    return with_status(page, 200, NO_REFERRER)


@router.post("/set-password")
def set_password(request: Request, db: SessionDep, settings: SettingsDep, address: ClientAddress,
                 token: Annotated[str, Form()], password: Annotated[str, Form()],
                 confirm: Annotated[str, Form()]) -> Response:
    """Check the password first (a too-short one keeps the link), then use the link up (through
    the login throttle) and sign the user in: they just proved who they are, typing the password
    again proves nothing."""
    try:
        if password != confirm:
            raise UserError("the two passwords differ", field="confirm")
        check_new_password(password)
        user = users.redeem_link(db, token, password, address, settings)
    except UserError as exc:
        db.rollback()
        link_ok = exc.status != 410
        page = render(request, "set_password.html", None, token=token if link_ok else "",
                      error=exc.detail, min_length=MIN_PASSWORD_LENGTH)
        return with_status(page, exc.status, {**NO_REFERRER, **exc.headers})
    begin_browser_session(request, db, user, settings)
    request.session["notice"] = (f"Your password is set, {user.username}: you are signed in. "
                                 "Next time, log in with it.")
    return RedirectResponse("/submit", status_code=303)


@router.get("/account")
def account_page(request: Request, db: SessionDep, settings: SettingsDep,
                 user: PageUser) -> HTMLResponse:
    return render(request, "account.html", user, tokens=tokens.listing(db, user),
                  min_length=MIN_PASSWORD_LENGTH, new_token=None, message="",
                  max_tokens=settings.max_tokens_per_user, **sessions_context(request, db, user,
                                                                              settings))


def sessions_context(request: Request, db: SessionDep, user: PageUser,
                     settings: SettingsDep) -> dict[str, object]:
    """My live browser sessions, this browser's marked, and the cap."""
    sid = request.session.get(SESSION_KEY)
    return {"sessions": [(row, sessions.is_current(row, sid))
                         for row in sessions.listing(db, user.id)],
            "max_sessions": settings.max_sessions_per_user, "session_message": ""}


def tokens_fragment(request: Request, db: SessionDep, user: PageUser, **extra: object
                    ) -> HTMLResponse:
    settings = request.app.state.settings
    return render(request, "_account_tokens.html", user, tokens=tokens.listing(db, user),
                  **{"new_token": None, "message": "",
                     "max_tokens": settings.max_tokens_per_user, **extra})


@router.post("/account/sessions/{session_id}/end")
def end_session(request: Request, db: SessionDep, settings: SettingsDep, user: PageUser,
                session_id: int) -> HTMLResponse:
    """Sign one of my sessions out (another browser, a lab machine I forgot)."""
    if not sessions.end_one(db, user.id, session_id):
        raise not_found("session")
    db.commit()
    context = sessions_context(request, db, user, settings)
    return render(request, "_account_sessions.html", user,
                  **{**context, "session_message": "Session ended."})


@router.post("/account/tokens")
def new_token(request: Request, db: SessionDep, settings: SettingsDep, user: PageUser,
              name: Annotated[str, Form()] = "cli",
              expires_in_days: Annotated[int | None, Form()] = None) -> HTMLResponse:
    try:
        days = tokens.token_days(expires_in_days or settings.personal_token_days)
        issued = tokens.issue(db, user, name, days * 86400, keep=settings.max_tokens_per_user)
    except UserError as exc:
        return tokens_fragment(request, db, user, message=exc.detail)
    db.commit()
    return tokens_fragment(request, db, user, new_token=issued)


@router.post("/account/tokens/{token_id}/revoke")
def revoke(request: Request, db: SessionDep, user: PageUser, token_id: int) -> HTMLResponse:
    tokens.revoke(db, user, token_id)
    db.commit()
    return tokens_fragment(request, db, user, message="Token revoked.")


@router.post("/account/board")
def board_name(request: Request, db: SessionDep, user: PageUser,
               alias: Annotated[str, Form()] = "",
               hidden: Annotated[str, Form()] = "") -> HTMLResponse:
    """My alias on the public board, or off it (app/scoreboard/board_names.py checks it)."""
    try:
        set_board_name(db, user, alias, hidden == "1")
    except UserError as exc:
        db.rollback()
        return render(request, "_account_board.html", user, board_error=exc.detail)
    message = ("You are off the public scoreboard." if user.board_hidden else
               f"The public scoreboard shows you as {user.board_alias or user.username}.")
    return render(request, "_account_board.html", user, board_message=message)


@router.post("/account/password")
def change_password(request: Request, db: SessionDep, settings: SettingsDep, user: PageUser,
                    address: ClientAddress, current_password: Annotated[str, Form()],
                    new_password: Annotated[str, Form()]) -> HTMLResponse:
    """Every session and token ends; this browser gets a fresh session so it stays in. The
    current password is throttled like a login."""
    device = known_device.device_for(request, user.username, settings)
    try:
        users.change_password(db, user, current_password, new_password, address, settings,
                              device)
        db.commit()
    except UserError as exc:
        db.rollback()
        return HTMLResponse(f'<p class="error" role="alert">{escape(exc.detail)}</p>')
    begin_browser_session(request, db, user, settings)
    return HTMLResponse('<p role="status">Password changed. Every other session and all your '
                        'tokens have ended; make a new token for the CLI.</p>')
