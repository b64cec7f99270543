"""Error responses: a styled page for a browser, the usual JSON for the API.

A page request (HTML accepted, not under /api) that is refused gets the site's own page with the
message and a way on; a 401 on a page goes to the login page with `next`, so logging in returns
the user to where they were. API clients, htmx fragments and scripts keep the JSON body
{"detail", "field"} (app/core/errors.py), whatever the status.
"""

from __future__ import annotations

from urllib.parse import urlencode

from fastapi import Request
from fastapi.responses import JSONResponse, RedirectResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from app.accounts import sessions
from app.core.errors import UserError, is_page, user_error_handler
from app.db.models import User
from app.db.session import session_factory
from app.pages.rendering import templates
from app.web.deps import SESSION_KEY

TITLES = {403: "Not allowed", 404: "Not found", 405: "Not allowed here", 409: "Not now",
          413: "Too large", 429: "Too many requests"}


def login_redirect(request: Request, reason: str) -> RedirectResponse:
    """To the login page, saying why, and back here afterwards."""
    back = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return RedirectResponse("/login?" + urlencode({"reason": reason, "next": back}),
                            status_code=303)


def viewer(request: Request) -> User | None:
    """The logged-in user of a page request, for the navigation bar (None: logged out)."""
    sid = request.session.get(SESSION_KEY) if "session" in request.scope else None
    if not isinstance(sid, str):
        return None
    with session_factory(request.app.state.settings.db_url)() as db:
        found = sessions.lookup(db, sid)
        user = None if found.expired else found.user
        if user is not None:
            db.expunge(user)
        return user


def error_page(request: Request, status: int, detail: str,
               headers: dict[str, str] | None = None) -> Response:
    """The styled error page (base layout, navigation for a logged-in user)."""
    user = viewer(request)
    context = {"status": status, "title": TITLES.get(status, "Something went wrong"),
               "detail": detail, "user": user,
               "csrf": request.session.get("csrf", "") if "session" in request.scope else ""}
    return templates.TemplateResponse(request, "error.html", context, status_code=status,
                                      headers=headers)


async def page_user_error_handler(request: Request, exc: Exception) -> Response:
    """UserError: styled page or login redirect for pages, JSON for everything else."""
    assert isinstance(exc, UserError)
    if not is_page(request) or request.headers.get("hx-request"):
        return await user_error_handler(request, exc)
    if exc.status == 401:
        return login_redirect(request, exc.detail)
    return error_page(request, exc.status, exc.detail, exc.headers)


async def http_error_handler(request: Request, exc: Exception) -> Response:
    """Starlette's own errors (an unknown path: 404, a wrong method: 405) the same way."""
    assert isinstance(exc, StarletteHTTPException)
    detail = "no such page" if exc.status_code == 404 else str(exc.detail)
    if is_page(request) and not request.headers.get("hx-request"):
        return error_page(request, exc.status_code, detail)
    return JSONResponse({"detail": str(exc.detail), "field": None}, status_code=exc.status_code,
                        headers=getattr(exc, "headers", None))
