"""TA user management: the roster, new users, sign-in and reset links, tokens, sign-out."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, File, Form, Request, Response, UploadFile
from sqlalchemy.orm import Session

from app.accounts import audit, management, tokens, users
from app.accounts.signin_links import IssuedLink
from app.core.errors import UserError, not_found
from app.core.net import base_url
from app.db.models import User
from app.schemas.auth import NewToken, TokenInfo
from app.schemas.users import CreatedUser, ImportResult, SignedOut, SignInLinkOut, UserRow
from app.web.deps import SessionDep, SettingsDep, TAUser

router = APIRouter(prefix="/api/admin/users", tags=["TA"])


def link_out(link: IssuedLink, base: str) -> SignInLinkOut:
    return SignInLinkOut(username=link.username, email=link.email, link=link.url(base),
                         purpose=link.purpose, expires_at=link.expires_at)


def named(db: Session, username: str) -> User:
    user = users.get_by_username(db, username)
    if user is None:
        raise not_found("user")
    return user


@router.get("", response_model=list[UserRow])
def list_users(db: SessionDep, _ta: TAUser) -> list[UserRow]:
    """Everyone on the roster, with whether they can log in and what is live."""
    return [UserRow.model_validate(s, from_attributes=True) for s in management.everyone(db)]


@router.post("", status_code=201, response_model=CreatedUser)
def create_user(request: Request, db: SessionDep, settings: SettingsDep, ta: TAUser,
                username: Annotated[str, Form()], role: Annotated[str, Form()] = "student",
                display_name: Annotated[str, Form()] = "", email: Annotated[str, Form()] = ""
                ) -> CreatedUser:
    """A new user; the answer carries their one-time sign-in link (shown once)."""
    if users.get_by_username(db, username) is not None:
        raise UserError(f"user {username!r} exists already", status=409, field="username")
    user = users.add_user(db, username, role, None, display_name, email)
    link = users.invite_if_needed(db, user, settings, ta)
    audit.record(db, ta, "create-user", username)
    db.commit()
    return CreatedUser(username=user.username, role=user.role,
                       link=link_out(link, base_url(request, settings)) if link else None)


@router.post("/import", response_model=ImportResult)
async def import_roster(request: Request, db: SessionDep, settings: SettingsDep, ta: TAUser,
                        roster: Annotated[UploadFile, File()]) -> ImportResult:
    """Import a roster CSV (username, display name, email, role); a bad row changes nothing.
    Everyone without a password gets a one-time sign-in link, in the answer only."""
    report = management.import_upload(db, ta, await roster.read(), settings)
    base = base_url(request, settings)
    return ImportResult(created=report.created, updated=report.updated,
                        links=[link_out(link, base) for link in report.links])


@router.post("/{username}/reset-link", response_model=SignInLinkOut)
def reset_link(request: Request, db: SessionDep, settings: SettingsDep, ta: TAUser,
               username: str) -> SignInLinkOut:
    """A one-time link for the user to choose a new password (shown once)."""
    link = users.reset_link(db, named(db, username), settings, ta)
    audit.record(db, ta, "reset-link", username)
    db.commit()
    return link_out(link, base_url(request, settings))


@router.post("/{username}/tokens", status_code=201, response_model=NewToken)
def create_token(db: SessionDep, settings: SettingsDep, ta: TAUser, username: str,
                 name: Annotated[str, Form()] = "cli",
                 expires_in_days: Annotated[int | None, Form()] = None) -> NewToken:
    """A personal API token for the user (shown once), e.g. for a student's CLI."""
    days = tokens.token_days(expires_in_days or settings.personal_token_days)
    issued = tokens.issue(db, named(db, username), name, days * 86400,
                           keep=settings.max_tokens_per_user)
    audit.record(db, ta, "create-token", username, name=issued.name)
    db.commit()
    return NewToken(access_token=issued.token, id=issued.id, name=issued.name,
                    expires_at=issued.expires_at)


@router.get("/{username}/tokens", response_model=list[TokenInfo])
def user_tokens(db: SessionDep, _ta: TAUser, username: str) -> list[TokenInfo]:
    """The user's live tokens (never the secrets)."""
    return [TokenInfo.model_validate(t, from_attributes=True)
            for t in tokens.listing(db, named(db, username))]


@router.delete("/{username}/tokens/{token_id}", status_code=204, response_class=Response)
def revoke_token(db: SessionDep, ta: TAUser, username: str, token_id: int) -> Response:
    """Revoke one of the user's tokens."""
    tokens.revoke(db, named(db, username), token_id)
    audit.record(db, ta, "revoke-token", username, token_id=token_id)
    db.commit()
    return Response(status_code=204)


@router.post("/{username}/sign-out", response_model=SignedOut)
def sign_out(db: SessionDep, ta: TAUser, username: str) -> SignedOut:
    """End every browser session and revoke every token of the user."""
    users.sign_out_everywhere(db, named(db, username))
    audit.record(db, ta, "sign-out", username)
    db.commit()
    return SignedOut(username=username)
