"""The one user-safe exception type: a message fit to show and the field it is about."""

from __future__ import annotations

from html import escape
from urllib.parse import quote

from fastapi import Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response


class UserError(Exception):
    """Something the user can fix; becomes a 4xx JSON body {"detail", "field"}."""

    def __init__(self, detail: str, *, status: int = 422, field: str | None = None,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.status = status
        self.field = field
        self.headers = headers or {}  # e.g. Retry-After on a 429


def not_found(what: str) -> UserError:
    return UserError(f"no such {what}", status=404)


def too_many(detail: str, retry_after_s: int) -> UserError:
    """A 429 that tells the client when to come back."""
    return UserError(detail, status=429, headers={"Retry-After": str(max(1, retry_after_s))})


def is_page(request: Request) -> bool:
    """Pages get HTML (or a redirect to the login page), the API gets JSON."""
    return not request.url.path.startswith("/api") and "text/html" in request.headers.get(
        "accept", "")


def page_error(exc: UserError) -> Response:
    if exc.status == 401:
        return RedirectResponse(f"/login?reason={quote(exc.detail)}", status_code=303)
    body = (f"<!doctype html><title>flashjudge: error</title><p>{escape(exc.detail)}</p>"
            f'<p><a href="/">back</a></p>')
    return HTMLResponse(body, status_code=exc.status, headers=exc.headers)


async def user_error_handler(request: Request, exc: Exception) -> Response:
    """The single place a UserError turns into a response."""
    assert isinstance(exc, UserError)
    if is_page(request):
        return page_error(exc)
    headers = dict(exc.headers)
    if exc.status == 401:
        headers["WWW-Authenticate"] = "Bearer"
    return JSONResponse(
        {"detail": exc.detail, "field": exc.field}, status_code=exc.status, headers=headers
    )
