"""Live streams that are not one submission's: the scoreboard's change events.

`GET /api/scoreboard/events` tells any logged-in page when the board may have changed, so it
refetches instead of polling (the format: app/live/streams.py). Like every stream it holds no
database session: the caller is authenticated with a short one, closed before streaming.
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import StreamingResponse

from app.changefeed.changes import SCOREBOARD
from app.core.config import Settings
from app.db.session import session_factory
from app.live.runtime import LiveDep
from app.live.streams import HEADERS, scoreboard_events
from app.web.deps import SettingsDep, TokenDep, get_current_user, optional_user

router = APIRouter(tags=["live"])


def authenticate(request: Request, settings: Settings, token: str | None) -> None:
    """Any logged-in user (401 otherwise), with a session closed before the stream starts."""
    with session_factory(settings.db_url)() as db:
        get_current_user(optional_user(request, db, token))


@router.get("/api/scoreboard/events")
async def scoreboard(request: Request, settings: SettingsDep, live: LiveDep, token: TokenDep
                     ) -> StreamingResponse:
    """Server-sent events: `scoreboard` with {"seq": N} at connect and whenever the board may
    have changed (at most every few seconds); refetch the board when seq differs."""
    await run_in_threadpool(authenticate, request, settings, token)
    box = live.hub.subscribe(SCOREBOARD)
    return StreamingResponse(
        scoreboard_events(live.hub, box, live.poller.board_seq, settings.live_keepalive_s),
        media_type="text/event-stream", headers=HEADERS)
