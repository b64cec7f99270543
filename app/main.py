"""The FastAPI application: routers, the one error handler, sessions, static files, lifespan."""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import AsyncIterator
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.middleware.sessions import SessionMiddleware

from app.core.config import Settings, get_settings
from app.core.errors import UserError
from app.db.migrate import upgrade
from app.db.session import session_scope
from app.logging_setup import configure_logging
from app.pages import admin_pages, errors
from app.pages import routes as pages
from app.routes import (
    admin,
    auth,
    course,
    custom_runs,
    health,
    profiles,
    scoreboard,
    submissions,
)
from app.services.sweeper import start_sweeper

log = logging.getLogger(__name__)
STATIC = Path(__file__).resolve().parent / "static"


async def validation_handler(_request: Request, exc: Exception) -> JSONResponse:
    """FastAPI's validation errors in the same {"detail", "field"} shape."""
    assert isinstance(exc, RequestValidationError)
    first = exc.errors()[0] if exc.errors() else {}
    loc = [str(p) for p in first.get("loc", ()) if p not in ("body", "query", "path")]
    field = loc[0] if loc else None
    message = first.get("msg", "invalid request")
    return JSONResponse({"detail": f"{field}: {message}" if field else message, "field": field},
                        status_code=422)


async def internal_error_handler(_request: Request, exc: Exception) -> JSONResponse:
    """Never a traceback in a response; the log keeps it."""
    log.exception("internal error", exc_info=exc)
    return JSONResponse({"detail": "internal error; the TAs have been told", "field": None},
                        status_code=500)


def body_limit(settings: Settings):  # noqa: ANN201
    """Refuse an oversized request from its Content-Length, before anything is spooled."""
    big = 2 * settings.max_input_bytes + (1 << 20)
    small = settings.max_files * settings.max_source_bytes + (1 << 20)

    async def middleware(request: Request, call_next):  # noqa: ANN001, ANN202
        length = request.headers.get("content-length", "")
        limit = big if request.url.path.startswith("/api/custom-runs") else small
        if length.isdigit() and int(length) > limit:
            return JSONResponse({"detail": f"request too large: at most {limit} bytes",
                                 "field": None}, status_code=413)
        return await call_next(request)

    return middleware


def make_lifespan(settings: Settings):  # noqa: ANN201
    @contextlib.asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        if settings.migrate_on_start:
            upgrade(settings.db_url)
        stop = threading.Event()
        if settings.sweep_interval_s > 0:
            start_sweeper(settings, lambda: session_scope(settings.db_url), stop)
        yield
        stop.set()

    return lifespan


def create_app(settings: Settings | None = None) -> FastAPI:
    """Build the app for `settings` (the environment's by default)."""
    settings = settings or get_settings()
    configure_logging()
    app = FastAPI(title="flashjudge", lifespan=make_lifespan(settings),
                  description="Batch judge for the FlashAttention homework")
    app.state.settings = settings
    app.add_middleware(SessionMiddleware, secret_key=settings.secret_key, same_site="lax",
                       max_age=settings.session_max_age_s + 3600, session_cookie="fj_session")
    app.middleware("http")(body_limit(settings))
    app.add_exception_handler(UserError, errors.page_user_error_handler)
    app.add_exception_handler(StarletteHTTPException, errors.http_error_handler)
    app.add_exception_handler(RequestValidationError, validation_handler)
    app.add_exception_handler(Exception, internal_error_handler)
    for module in (auth, submissions, course, profiles, custom_runs, scoreboard, admin, health,
                   pages, admin_pages):
        app.include_router(module.router)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    return app
