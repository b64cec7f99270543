"""The FastAPI application: routers, the one error handler, sessions, static files, lifespan."""

from __future__ import annotations

import contextlib
import gc
import logging
import threading
from collections.abc import AsyncIterator
from pathlib import Path

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from app.core.config import Settings, get_settings
from app.core.cookies import SessionCookies
from app.core.errors import UserError
from app.core.validation import validate_request
from app.db.migrate import upgrade
from app.db.session import session_factory, session_scope
from app.judging.broker_watch import start_broker_watch, watching
from app.judging.sweeper import start_sweeper
from app.live.runtime import Live
from app.logging_setup import configure_logging
from app.pages import account as account_pages
from app.pages import admin_pages, course_admin, custom, errors, oidc
from app.pages import admin_users as admin_users_pages
from app.pages import announcements as announcement_pages
from app.pages import audit as audit_pages
from app.pages import history as history_pages
from app.pages import routes as pages
from app.pages import similarity as similarity_pages
from app.routes import (
    admin,
    announcements,
    assignments_admin,
    audit,
    auth,
    course,
    custom_runs,
    health,
    history,
    live,
    profiles,
    scoreboard,
    similarity,
    submissions,
    users,
)
from app.web.body_guard import BodyGuard
from app.wiring import install_listeners

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


def settle_garbage_collector() -> None:
    """Move what start-up made (~165k objects: modules, routes, templates) out of the collector's
    sight. Python's full collections walked all of it: 100-176 ms pauses, six times a minute under
    load, in every request that waited behind them (the scoreboard's p99)."""
    gc.collect()
    gc.freeze()


def make_lifespan(settings: Settings):  # noqa: ANN201
    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if settings.migrate_on_start:
            upgrade(settings.db_url, suite=settings.suite)
        stop = threading.Event()
        if settings.sweep_interval_s > 0:
            start_sweeper(settings, lambda: session_scope(settings.db_url), stop)
            if watching(settings):  # lost messages re-sent within seconds
                start_broker_watch(settings, lambda: session_scope(settings.db_url), stop)
        app.state.live.start()  # one poller feeds every live stream of this process
        if settings.freeze_gc_at_start:
            settle_garbage_collector()
        yield
        await app.state.live.stop()
        stop.set()
        if settings.freeze_gc_at_start:
            gc.unfreeze()  # back in the collector's sight

    return lifespan


def create_app(settings: Settings | None = None) -> FastAPI:
    """Build the app for `settings` (the environment's by default)."""
    settings = settings or get_settings()
    configure_logging()
    install_listeners(session_factory(settings.db_url))  # the change feed, the standing
    app = FastAPI(title="flashjudge", lifespan=make_lifespan(settings),
                  description="Batch judge for the FlashAttention homework",
                  dependencies=[Depends(validate_request)])  # ids and texts, for every route
    app.state.settings = settings
    app.state.live = Live(settings)  # the lifespan starts its poller
    # the last added runs first: cookies are decoded before the guard reads the session id
    app.add_middleware(BodyGuard, settings=settings)
    app.add_middleware(SessionCookies, settings=settings)
    app.add_exception_handler(UserError, errors.page_user_error_handler)
    app.add_exception_handler(StarletteHTTPException, errors.http_error_handler)
    app.add_exception_handler(RequestValidationError, validation_handler)
    app.add_exception_handler(Exception, internal_error_handler)
    for module in (auth, users, submissions, course, profiles, custom_runs, live, scoreboard, admin,
                   assignments_admin,
                   health, history, similarity, history_pages, similarity_pages,  # issue 13
                   pages, custom, admin_pages, account_pages, admin_users_pages, oidc,
                   announcements, audit, announcement_pages, audit_pages,  # issue 23
                   course_admin):
        app.include_router(module.router)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    return app
