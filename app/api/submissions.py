"""Submissions: create, read, watch (SSE), list mine.

A new submission's acceptance is logged inside its log context, so the first line about it
carries its id like every worker line after it (app/logging_setup.py).
"""

from __future__ import annotations

import logging
from typing import Annotated, Any

from fastapi import APIRouter, File, Form, Request, UploadFile
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import PlainTextResponse, StreamingResponse
from starlette.datastructures import UploadFile as StarletteUpload

from app.changefeed.changes import submission_topic
from app.core.config import Settings
from app.core.errors import UserError
from app.db.models import Submission, User
from app.db.session import session_factory
from app.live.runtime import LiveDep
from app.live.streams import HEADERS, submission_events
from app.logging_setup import submission_context
from app.results import detail
from app.schemas.submissions import Created, SubmissionDetail, SubmissionRow, UploadLimits
from app.submissions import intake
from app.submissions.uploads import SourceFile
from app.web.body_guard import upload_rules
from app.web.deps import (
    CurrentUser,
    SessionDep,
    SettingsDep,
    TokenDep,
    get_app_settings,
    get_current_user,
    optional_user,
    signed_in,
)
from flashjudge.contract import MAX_FILE_BYTES, MAX_FILES

router = APIRouter(prefix="/api/submissions", tags=["submissions"])
log = logging.getLogger(__name__)


async def read_upload(upload: StarletteUpload, limit: int) -> SourceFile:
    """Read at most limit+1 bytes, so an oversized file is refused without holding it all."""
    data = await upload.read(limit + 1)
    return SourceFile(name=upload.filename or "", content=data)


@router.post("", status_code=202, response_model=Created)
async def create(
    request: Request, token: TokenDep,
    language: Annotated[str, Form()],
    files: Annotated[list[UploadFile | str] | None, File(description="the source files")] = None,
    assignment: Annotated[str | None, Form(description="the assignment's name (GET "
                                           "/api/assignments); default: the only open one")
                          ] = None,
) -> Created:
    """Submit sources for judging; returns the id to watch. The caller is authenticated and the
    body counted before it is read (app/web/body_guard.py): too large is a readable 413. No
    file (an empty picker sends a part without a file name, read as text) is refused naming
    the file to choose. The login, the checks and the commit take one trip through the thread
    pool (`accept`), not one per dependency: a deadline-night burst is hundreds at once."""
    chosen = [f for f in files or [] if isinstance(f, StarletteUpload) and f.filename]
    sources = [await read_upload(f, MAX_FILE_BYTES) for f in chosen]
    user, sub = await run_in_threadpool(accept, request, token, language, sources,
                                        assignment or None)
    with submission_context(sub.id):
        log.info("accepted: %s from %s to %s, %d file(s), status %s", language, user.username,
                 sub.suite, len(sources), sub.status)
    return Created(id=sub.id)


def accept(request: Request, token: str | None, language: str, sources: list[SourceFile],
           assignment: str | None) -> tuple[User, Submission]:
    """The caller (as CurrentUser says it: 401, 403 without the CSRF token) and their stored
    submission, in one session: one pooled connection, one transaction before the commit."""
    settings = get_app_settings(request)
    with session_factory(settings.db_url)() as db:
        user = signed_in(request, db, token)
        return user, intake.create_submission(db, user, language, sources, settings, assignment)


@router.get("/limits", response_model=UploadLimits)
def limits(settings: SettingsDep) -> UploadLimits:
    """What an upload may hold, so the page and `flashjudge submit` refuse before sending."""
    return UploadLimits(max_source_bytes=MAX_FILE_BYTES, max_files=MAX_FILES,
                        max_request_bytes=upload_rules(settings)["/api/submissions"].limit)


@router.get("/mine", response_model=list[SubmissionRow])
def mine(db: SessionDep, user: CurrentUser) -> list[dict[str, Any]]:
    """My submissions, newest first."""
    return [row | {"created_at": row["created_at"].isoformat() + "Z"}
            for row in detail.recent_rows(db, user)]


@router.get("/{submission_id}", response_model=SubmissionDetail)
def read(db: SessionDep, user: CurrentUser, settings: SettingsDep,
         submission_id: int) -> dict[str, Any]:
    """Status, verdict, score and per-test results of one submission."""
    return detail.detail(db, detail.get_visible(db, user, submission_id), user, settings)


@router.get("/{submission_id}/files/{name}", response_class=PlainTextResponse)
def source(db: SessionDep, user: CurrentUser, submission_id: int, name: str) -> str:
    """One source file of a submission (owner and TAs only)."""
    sub = detail.get_visible(db, user, submission_id)
    for f in sub.files:
        if f.name == name:
            return f.content.decode("utf-8")
    raise UserError(f"submission {submission_id} has no file {name!r}", status=404, field="name")


def authorize_watch(request: Request, settings: Settings, token: str | None,
                    submission_id: int) -> bool:
    """May the caller watch this submission (401/404 otherwise)? Whether they are a TA. The
    session is closed before the stream starts: a stream holds no database connection."""
    with session_factory(settings.db_url)() as db:
        user = get_current_user(optional_user(request, db, token))
        detail.get_visible(db, user, submission_id)
        return user.is_ta


@router.get("/{submission_id}/events")
async def events(request: Request, settings: SettingsDep, live: LiveDep, token: TokenDep,
                 submission_id: int) -> StreamingResponse:
    """Server-sent events with the submission's state as it is judged: `progress` at connect and
    on every change, then `done`. The process's poller loads each change once for all its
    watchers (app/live/), so an open stream costs the database nothing."""
    is_ta = await run_in_threadpool(authorize_watch, request, settings, token, submission_id)
    box = live.hub.subscribe(submission_topic(submission_id))
    return StreamingResponse(
        submission_events(live.hub, box, is_ta, settings.live_keepalive_s),
        media_type="text/event-stream", headers=HEADERS)
