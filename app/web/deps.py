"""FastAPI dependencies as Annotated aliases; every route uses these."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import OAuth2PasswordBearer
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from app.accounts import sessions
from app.accounts.tokens import user_for_token
from app.core.config import Settings
from app.core.errors import UserError
from app.core.net import client_address
from app.core.security import csrf_matches, new_csrf_token
from app.course import course_settings
from app.db.models import User
from app.db.on_demand import OnDemand
from app.db.session import session_factory
from app.scoreboard.cache import BoardCache

SAFE_METHODS = {"GET", "HEAD", "OPTIONS"}
SESSION_KEY = "sid"  # the cookie's session id; the row in login_sessions is what counts
oauth2_scheme = OAuth2PasswordBearer(tokenUrl="/api/auth/token", auto_error=False)


def get_app_settings(request: Request) -> Settings:
    """The settings the app was built with (tests build apps with their own), with the course
    settings a TA saved (app/course/course_settings.py) read again at most every REFRESH_S."""
    state = request.app.state
    settings: Settings = state.settings
    now = time.monotonic()
    if now - getattr(state, "course_read_at", float("-inf")) >= course_settings.REFRESH_S:
        state.course_read_at = now
        try:
            with session_factory(settings.db_url)() as db:
                if course_settings.refresh(db, settings):
                    state.oidc = None  # the sign-in's client is made again for the new provider
        except SQLAlchemyError:
            pass  # a database down or not migrated yet: the values in hand stand, and the
            # health checks (which take settings too) say what is wrong with it
    return settings


SettingsDep = Annotated[Settings, Depends(get_app_settings)]


async def get_board_cache(request: Request) -> BoardCache:
    """The app's board cache (made by create_app, which hands it to the live poller too);
    async only so that FastAPI runs it without a trip through its thread pool."""
    cache: BoardCache = request.app.state.board_cache
    return cache


BoardsDep = Annotated[BoardCache, Depends(get_board_cache)]


def get_db(settings: SettingsDep) -> Iterator[Session]:
    session = session_factory(settings.db_url)()
    try:
        yield session
    finally:
        session.close()


# scope="function": the session closes when the route returns, before the response is sent, so
# a download streamed to a slow client (a custom run's 370 MB output) holds no connection and
# no transaction meanwhile (seen: 8 of 15 pooled connections "idle in transaction" under load)
SessionDep = Annotated[Session, Depends(get_db, scope="function")]
TokenDep = Annotated[str | None, Depends(oauth2_scheme)]


def begin_browser_session(request: Request, db: Session, user: User, settings: Settings) -> None:
    """Log this browser in: a new server-side session (committed) and a fresh CSRF token."""
    label = sessions.label_for(request.headers.get("user-agent", ""),
                               client_address(request.scope, settings))
    sid = sessions.start(db, user, settings.session_max_age_s, settings.max_sessions_per_user,
                         label)
    db.commit()
    request.session.clear()
    request.session.update({SESSION_KEY: sid, "csrf": new_csrf_token()})


def end_browser_session(request: Request, db: Session) -> None:
    """Log this browser out: the row goes, so a copy of the cookie is worth nothing."""
    sid = request.session.get(SESSION_KEY)
    if isinstance(sid, str):
        sessions.end(db, sid)
        db.commit()
    request.session.clear()


def session_user(request: Request, db: Session) -> User | None:
    """The user of a page session cookie; raises when it ended, expired or lacks the CSRF token."""
    sid = request.session.get(SESSION_KEY)
    if not isinstance(sid, str):
        if request.session:  # a cookie from before server-side sessions: worthless now
            request.session.clear()
        return None
    found = sessions.lookup(db, sid)
    if found.user is None or found.expired:
        request.session.clear()
        raise UserError("your session expired; log in again" if found.expired else
                        "you were logged out (or your password changed); log in again",
                        status=401)
    if request.method not in SAFE_METHODS:
        given = request.headers.get("x-csrf-token")
        if not csrf_matches(request.session.get("csrf"), given):
            raise UserError("missing or wrong CSRF token; reload the page", status=403,
                            field="csrf_token")
    if not found.user.active:
        end_browser_session(request, db)
        return None
    return found.user


def optional_user(request: Request, db: SessionDep, token: TokenDep) -> User | None:
    """Bearer token first (CLI), then the page session cookie. The login's read transaction is
    ended before the route runs (`released`)."""
    user = user_of(request, db, token)
    released(db)
    return user


def user_of(request: Request, db: Session, token: str | None) -> User | None:
    if token:
        return user_for_token(db, token)
    return session_user(request, db)


def released(db: Session) -> None:
    """End a session's read-only transaction: its connection goes back to the pool. A route
    runs in another trip through the thread pool than its dependencies; under load that trip
    waits for a thread, and the login's transaction stayed open all the while (up to 26
    connections "idle in transaction", 13.5 s the longest, at 70-200 req/s). The loaded user
    stays usable (the factory does not expire on commit)."""
    if db.in_transaction() and not (db.new or db.dirty or db.deleted):
        db.commit()


def get_current_user(user: Annotated[User | None, Depends(optional_user)]) -> User:
    if user is None:
        raise UserError("log in first", status=401)
    return user


CurrentUser = Annotated[User, Depends(get_current_user)]


def signed_in(request: Request, db: Session, token: str | None) -> User:
    """CurrentUser's answer, for a route that does its database work in one trip through the
    thread pool (the scoreboard, asked for hundreds of times a second): a chain of sync
    dependencies holds a pooled connection between trips, and a pool smaller than the thread
    pool can then wait on itself under load."""
    return get_current_user(user_of(request, db, token))


def board_viewer(request: Request, db: OnDemand, token: str | None) -> User:
    """`signed_in` for the scoreboard's routes: a browser session looked up in the last seconds
    is answered from this process's memory (app/accounts/recent_sessions.py), so a board
    served from the cache needs no database at all. Refusals are said as `signed_in` says them."""
    sid = None if token else request.session.get(SESSION_KEY)
    if isinstance(sid, str):
        found = sessions.lookup_recent(db, sid)
        if found.user is not None and not found.expired and found.user.active:
            return found.user
    return signed_in(request, db(), token)


def current_user_briefly(request: Request, settings: SettingsDep, token: TokenDep) -> User:
    """CurrentUser's answer from a session closed before the route runs, for routes that go on
    to read a long body (an upload of a gigabyte): a session left open meanwhile holds its
    connection "idle in transaction" for as long as the client takes to send."""
    with session_factory(settings.db_url)() as db:
        return signed_in(request, db, token)


BrieflyUser = Annotated[User, Depends(current_user_briefly)]


def require_ta(user: CurrentUser) -> User:
    if not user.is_ta:
        raise UserError("only TAs may do this", status=403)
    return user


def get_client_address(request: Request, settings: SettingsDep) -> str:
    """The client's address for throttling (forwarded headers only from trusted proxies)."""
    return client_address(request.scope, settings)


TAUser = Annotated[User, Depends(require_ta)]
MaybeUser = Annotated[User | None, Depends(optional_user)]
ClientAddress = Annotated[str, Depends(get_client_address)]
