"""Logging in from the CLI: the OAuth2 password flow and personal API tokens."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form

from app.core.deps import CurrentUser, SessionDep, SettingsDep
from app.services import users

router = APIRouter(prefix="/api/auth", tags=["auth"])


@router.post("/token")
def token(
    db: SessionDep, settings: SettingsDep,
    username: Annotated[str, Form()], password: Annotated[str, Form()],
) -> dict[str, str]:
    """OAuth2 password flow: a bearer token that expires after token_max_age_s."""
    user = users.authenticate(db, username, password)
    access = users.issue_token(db, user, "password-flow", settings.token_max_age_s)
    db.commit()
    return {"access_token": access, "token_type": "bearer"}


@router.post("/tokens", status_code=201)
def personal_token(db: SessionDep, user: CurrentUser, name: Annotated[str, Form()] = "cli"
                   ) -> dict[str, str]:
    """A personal API token for `flashjudge submit` (shown once, does not expire)."""
    access = users.issue_token(db, user, name[:100], None)
    db.commit()
    return {"access_token": access, "token_type": "bearer"}


@router.get("/me")
def me(user: CurrentUser) -> dict[str, str]:
    """Who the token or session belongs to."""
    return {"username": user.username, "display_name": user.display_name, "role": user.role}
