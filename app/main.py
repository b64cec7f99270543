"""The FastAPI application: routers, the one error handler, sessions, static files, lifespan."""

from __future__ import annotations

import asyncio
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

from app.api import (
    admin,
    announcements,
    audit,
    auth,
    course,
    course_admin,
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
from app.core.config import Settings, get_settings
from app.core.cookies import SessionCookies
from app.core.errors import UserError
from app.core.validation import validate_request
from app.db.migrate import upgrade
from app.db.session import session_factory, session_scope
from app.live.runtime import Live
from app.logging_setup import configure_logging
from app.pages import announcements as announcement_pages
from app.pages import auth as auth_pages
from app.pages import custom_runs as custom_run_pages
from app.pages import errors, oidc, rendering
from app.pages import history as history_pages
from app.pages import scoreboard as scoreboard_pages
from app.pages import similarity as similarity_pages
from app.pages import submissions as submission_pages
from app.pages import users as user_pages
from app.pages.ta import admin as admin_pages
from app.pages.ta import audit as audit_pages
from app.pages.ta import borrowed as borrowed_pages
from app.pages.ta import course_admin as course_admin_pages
from app.pages.ta import course_settings as course_settings_pages
from app.scoreboard.cache import BoardCache
from app.upkeep.broker_watch import start_broker_watch, watching
from app.upkeep.slurm_scaler import start_slurm_scaler
from app.upkeep.sweeper import start_sweeper
from app.web.body_guard import BodyGuard
from app.web.same_origin import CrossSiteGuard
from app.web.security_headers import SecurityHeaders
from app.wiring import install_listeners

log = logging.getLogger(__name__)
STATIC = Path(__file__).resolve().parent / "static"
DEFAULT_GC_THRESHOLDS = gc.get_threshold()
GC_THRESHOLDS = (50_000, 20, 100)  # allocations per young collection, then per older (see below)


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
    sight, and collect less often. Python's full collections walked all of it: 100-176 ms pauses,
    six times a minute under load, in every request that waited behind them (the scoreboard's
    p99). With the default first threshold (700 allocations) a collection runs several times per
    request, and each moved the objects of the hundreds of requests in flight one generation up:
    at 1,000 board requests a second the oldest generation held ~280k such objects, walked in a
    117-306 ms pause every 10-15 s. Collected every 50,000 allocations, they are gone (freed by
    their reference counts) before any collection sees them: the oldest generation stayed empty
    and no collection took over 10 ms (docs/benchmarks.md)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


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
        if settings.slurm_autoscale:  # worker jobs that follow the queue
            start_slurm_scaler(settings, lambda: session_scope(settings.db_url), stop)
        app.state.live.start()  # one poller feeds every live stream of this process
        if settings.freeze_gc_at_start:
            settle_garbage_collector()
        yield
        await app.state.live.stop()
        stop.set()
        if settings.freeze_gc_at_start:
            gc.unfreeze()  # back in the collector's sight
            gc.set_threshold(*DEFAULT_GC_THRESHOLDS)

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
    app.state.board_cache = BoardCache()

    async def boards_moved() -> None:  # the boards made ready before the pages hear of a move
        await asyncio.to_thread(app.state.board_cache.refresh_from, settings.db_url)

    app.state.live = Live(settings, boards_moved)  # the lifespan starts its poller
    # the last added runs first: cookies are decoded before the guard reads the session id
    app.add_middleware(BodyGuard, settings=settings)
    app.add_middleware(SessionCookies, settings=settings)
    app.add_middleware(CrossSiteGuard, settings=settings)  # before cookies or bodies
    app.add_middleware(SecurityHeaders)  # outermost: on every answer, the guards' own too
    app.add_exception_handler(UserError, errors.page_user_error_handler)
    app.add_exception_handler(StarletteHTTPException, errors.http_error_handler)
    app.add_exception_handler(RequestValidationError, validation_handler)
    app.add_exception_handler(Exception, internal_error_handler)
    api = (auth, users, submissions, course, profiles, custom_runs, live, scoreboard, admin,
           course_admin, health, history, similarity, announcements, audit)
    pages = (history_pages, similarity_pages, rendering, submission_pages, scoreboard_pages,
             custom_run_pages, admin_pages, auth_pages, user_pages, oidc, announcement_pages,
             audit_pages, course_settings_pages, course_admin_pages, borrowed_pages)
    for module in (*api, *pages):
        app.include_router(module.router)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    return app
