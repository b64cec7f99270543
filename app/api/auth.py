"""Logging in from the CLI (OAuth2 password flow), personal API tokens, changing a password."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Request, Response

from app.accounts import tokens, users
from app.core import known_device
from app.schemas.auth import AccessToken, Me, NewToken, PasswordChanged, TokenInfo
from app.web.deps import ClientAddress, CurrentUser, SessionDep, SettingsDep

router = APIRouter(prefix="/api/auth", tags=["auth"])


@router.post("/token", response_model=AccessToken)
def token(
    request: Request, response: Response, db: SessionDep, settings: SettingsDep,
    address: ClientAddress, username: Annotated[str, Form()], password: Annotated[str, Form()],
) -> AccessToken:
    """OAuth2 password flow: a bearer token that expires after token_max_age_s. Throttled like
    the login page (429 with Retry-After); a client that keeps the known-device cookie this sets
    (the CLI does) counts only its own failures next time, as the owner's browser does."""
    device = known_device.device_for(request, username, settings)
    user = users.log_in(db, username, password, address, settings, device)
    issued = tokens.issue(db, user, "password-flow", settings.token_max_age_s, tokens.LOGIN,
                          settings.max_tokens_per_user)
    db.commit()
    known_device.remember(request, response, user.username, settings)
    return AccessToken(access_token=issued.token)


@router.post("/tokens", status_code=201, response_model=NewToken)
def personal_token(db: SessionDep, settings: SettingsDep, user: CurrentUser,
                   name: Annotated[str, Form()] = "cli",
                   expires_in_days: Annotated[int | None, Form()] = None) -> NewToken:
    """A personal API token for `flashjudge submit`: shown once, expires (default
    personal_token_days), listed and revocable below."""
    days = tokens.token_days(expires_in_days or settings.personal_token_days)
    issued = tokens.issue(db, user, name, days * 86400, keep=settings.max_tokens_per_user)
    db.commit()
    return NewToken(access_token=issued.token, id=issued.id, name=issued.name,
                    expires_at=issued.expires_at)


@router.get("/tokens", response_model=list[TokenInfo])
def my_tokens(db: SessionDep, user: CurrentUser) -> list[TokenInfo]:
    """My live tokens: name, created, last used, expires (never the secret)."""
    return [TokenInfo.model_validate(t, from_attributes=True) for t in tokens.listing(db, user)]


@router.delete("/tokens/{token_id}", status_code=204, response_class=Response)
def revoke_token(db: SessionDep, user: CurrentUser, token_id: int) -> Response:
    """Revoke one of my tokens (someone else's answers 404, like a missing one)."""
    tokens.revoke(db, user, token_id)
    db.commit()
    return Response(status_code=204)


@router.post("/password", response_model=PasswordChanged)
def change_password(request: Request, db: SessionDep, settings: SettingsDep,
                    address: ClientAddress, user: CurrentUser,
                    current_password: Annotated[str, Form()],
                    new_password: Annotated[str, Form()]) -> PasswordChanged:
    """Change my password; every session and token of mine ends (this one too). The current
    password is throttled like a login: a stolen session cannot guess it faster."""
    device = known_device.device_for(request, user.username, settings)
    users.change_password(db, user, current_password, new_password, address, settings, device)
    db.commit()
    return PasswordChanged()


@router.get("/me", response_model=Me)
def me(user: CurrentUser) -> Me:
    """Who the token or session belongs to."""
    return Me(username=user.username, display_name=user.display_name, role=user.role)
