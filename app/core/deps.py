"""FastAPI dependencies as Annotated aliases; every route uses these."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import OAuth2PasswordBearer
from sqlalchemy.orm import Session

from app.core.config import Settings
from app.core.errors import UserError
from app.core.security import csrf_matches
from app.db.models import User
from app.db.session import session_factory
from app.services.users import user_for_token

SAFE_METHODS = {"GET", "HEAD", "OPTIONS"}
oauth2_scheme = OAuth2PasswordBearer(tokenUrl="/api/auth/token", auto_error=False)


def get_app_settings(request: Request) -> Settings:
    """The settings the app was built with (tests build apps with their own)."""
    return request.app.state.settings


SettingsDep = Annotated[Settings, Depends(get_app_settings)]


def get_db(settings: SettingsDep) -> Iterator[Session]:
    session = session_factory(settings.db_url)()
    try:
        yield session
    finally:
        session.close()


SessionDep = Annotated[Session, Depends(get_db)]
TokenDep = Annotated[str | None, Depends(oauth2_scheme)]


def session_user(request: Request, db: Session, settings: Settings) -> User | None:
    """The user of a page session cookie; raises when it expired or lacks the CSRF token."""
    user_id = request.session.get("user_id")
    if user_id is None:
        return None
    if time.time() - float(request.session.get("login_at", 0)) >= settings.session_max_age_s:
        request.session.clear()
        raise UserError("your session expired; log in again", status=401)
    if request.method not in SAFE_METHODS:
        given = request.headers.get("x-csrf-token")
        if not csrf_matches(request.session.get("csrf"), given):
            raise UserError("missing or wrong CSRF token; reload the page", status=403,
                            field="csrf_token")
    user = db.get(User, user_id)
    if user is None or not user.active:
        request.session.clear()
        return None
    return user


def optional_user(request: Request, db: SessionDep, settings: SettingsDep,
                  token: TokenDep) -> User | None:
    """Bearer token first (CLI), then the page session cookie."""
    if token:
        return user_for_token(db, token)
    return session_user(request, db, settings)


def get_current_user(user: Annotated[User | None, Depends(optional_user)]) -> User:
    if user is None:
        raise UserError("log in first", status=401)
    return user


CurrentUser = Annotated[User, Depends(get_current_user)]


def require_ta(user: CurrentUser) -> User:
    if not user.is_ta:
        raise UserError("only TAs may do this", status=403)
    return user


TAUser = Annotated[User, Depends(require_ta)]
MaybeUser = Annotated[User | None, Depends(optional_user)]
